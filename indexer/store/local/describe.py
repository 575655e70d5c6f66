"""Describe an embedded index from its SQLite file and file sizes, fast.

Only the standard library's sqlite3 is used, read-only: no SQLAlchemy, FAISS or torch,
so `ctxsearch info` answers in a fraction of a second.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from indexer.errors import IndexCorrupt, IndexNotFound
from indexer.store.describe import description, folders
from indexer.store.local.layout import DATABASE_FILE, is_index, space_file
from indexer.store.local.sqlite_uri import read_only_connection
from indexer.store.manifest import Manifest


def describe_folder(index_dir: Path) -> dict[str, Any]:
    """The manifest, the counts of documents and chunks, and the size of each file."""
    directory = Path(index_dir).expanduser().absolute()
    if not directory.exists():
        raise IndexNotFound(f"{directory}: no index here (build one with `ctxsearch index`)")
    if not is_index(directory):
        raise IndexNotFound(f"{directory}: not a ctxsearch index")
    database = directory / DATABASE_FILE
    try:
        connection = read_only_connection(database)
        try:
            rows = dict(connection.execute("SELECT key, value FROM manifest").fetchall())
            counts = {
                table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("documents", "chunks")
            }
            counts["records"] = _records(connection)
            roots = _roots(connection)
            folder_counts = _folders(connection)
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise IndexCorrupt(f"{database}: not a readable SQLite database ({error})") from error
    if not rows:
        raise IndexCorrupt(f"{directory}: the index has no manifest")
    manifest = Manifest.from_rows(rows)
    files = [database] + [
        space_file(directory, space, manifest.generation) for space in manifest.spaces
    ]
    sizes = {path.name: (path.stat().st_size if path.exists() else None) for path in files}
    return description(
        str(directory), "sqlite+faiss", manifest, counts, roots, sizes, folder_counts
    )


def _records(connection: sqlite3.Connection) -> int:
    try:
        query = "SELECT count(*) FROM documents WHERE metadata_json IS NOT NULL"
        return connection.execute(query).fetchone()[0]
    except sqlite3.OperationalError:  # an index from before records
        return 0


def _roots(connection: sqlite3.Connection) -> list[str]:
    try:
        return [row[0] for row in connection.execute("SELECT path FROM roots ORDER BY path")]
    except sqlite3.OperationalError:  # an index from before roots were recorded
        return []


def _folders(connection: sqlite3.Connection) -> list[dict[str, Any]]:
    documents = connection.execute(
        "SELECT d.host, d.path, count(c.id) FROM documents d "
        "LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id"
    ).fetchall()
    try:
        roots = connection.execute("SELECT host, path FROM roots").fetchall()
    except sqlite3.OperationalError:  # an index from before roots were recorded
        roots = []
    return folders(roots, documents)

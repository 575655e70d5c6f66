"""A light reader of an embedded index, for a process that asks a query and exits.

`ctxsearch query` is a whole process per query: importing SQLAlchemy took longer than
the search itself, and every FAISS file was read whether the mode searched it or not.
Like `describe.py` (behind `ctxsearch info`), this reader uses the standard library's
sqlite3, read-only, and loads only the vector spaces a snapshot asks for. It reads the
same rows with the same SQL as the store (`bm25.py` for the lexical query), in one read
transaction per snapshot plus the space files of the generation it names, so what it
sees is one published state, as with `LocalStore.snapshot`.

It reads only an index whose schema is current (`SchemaNotCurrent` otherwise: the store
opens it instead and migrates it), and is meant for one thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import IndexClosed, IndexCorrupt, IndexNotFound, SpaceFileMissing
from indexer.store.base import Ranked, StoredChunk, StoredDocument
from indexer.store.local.bm25 import (
    BM25_OF_SQL,
    BM25_SQL,
    bm25_of_parameters,
    bm25_sql_among,
    match_expression,
)
from indexer.store.local.layout import DATABASE_FILE, check_is_index, file_identity, space_file
from indexer.store.local.space_reads import SpaceReads
from indexer.store.local.sqlite_errors import error_for
from indexer.store.local.sqlite_uri import read_only_connection
from indexer.store.manifest import Manifest

if TYPE_CHECKING:
    import numpy as np

    from indexer.store.filters import SearchFilter
    from indexer.store.local.vectors import VectorSpace

# The migrations a current schema has applied (`migrations.MIGRATIONS`; a test keeps the
# two lists equal).
MIGRATION_NAMES = (
    "0001_initial",
    "0002_lexical_space",
    "0003_hosts_and_roots",
    "0004_locations_and_root_rules",
    "0005_records",
)
_OPEN_ATTEMPTS = 20
_BATCH = 500


class SchemaNotCurrent(Exception):
    """The index's schema lacks a migration: open it with the store, which applies it."""


class LocalReader:
    """An index folder opened for reading only: sqlite3, and FAISS spaces on demand."""

    host = ""

    def __init__(self, directory: Path):
        self.directory = Path(directory).expanduser().absolute()
        self.target = str(self.directory)
        self.database = self.directory / DATABASE_FILE
        check_is_index(self.directory)
        self._closed = False
        self._loaded: dict[tuple[str, int, str], VectorSpace] = {}
        self._open()

    def _open(self) -> None:
        try:
            self._identity = file_identity(self.database)
            self.connection = read_only_connection(self.database)
            try:
                applied = {row[0] for row in self.connection.execute("SELECT name FROM migrations")}
                if not set(MIGRATION_NAMES) <= applied:
                    raise SchemaNotCurrent(self.target)
                self.manifest = _read_manifest(self.connection)
            except BaseException:
                self.connection.close()
                raise
        except sqlite3.Error as error:
            if "no such table" in str(error):
                raise SchemaNotCurrent(self.target) from error
            raise error_for(str(error), self.target) from error
        if self.manifest is None:
            self.connection.close()
            raise IndexCorrupt(
                f"{self.directory}: the index has no manifest (its first run was "
                "interrupted: run `ctxsearch index` again)"
            )

    def _follow_replacement(self) -> None:
        """Notice an index removed, or built again in place, since it was opened."""
        if self._closed:
            raise IndexClosed(f"{self.directory}: the index was closed")
        try:
            identity = file_identity(self.database)
        except FileNotFoundError:
            raise IndexNotFound(f"{self.directory}: the index was removed") from None
        if identity != self._identity:
            self.connection.close()
            self._loaded.clear()
            self._open()

    @contextmanager
    def snapshot(self, spaces: Iterable[str] | None = None) -> Iterator[ReaderSnapshot]:
        """One read transaction, and the asked-for spaces (default: all) of its generation."""
        self._follow_replacement()
        for attempt in range(1, _OPEN_ATTEMPTS + 1):
            try:
                self.connection.execute("BEGIN")
                manifest = _read_manifest(self.connection)
            except sqlite3.Error as error:
                raise error_for(str(error), self.target) from error
            try:
                if manifest is None:
                    raise IndexCorrupt(f"{self.directory}: the index has no manifest")
                names = manifest.spaces if spaces is None else list(spaces)
                try:
                    loaded = {name: self._space(manifest, name) for name in names}
                except SpaceFileMissing:
                    if attempt == _OPEN_ATTEMPTS:
                        raise  # not a writer's sweep: the file is gone
                    continue  # a writer published and swept this generation: read again
                yield ReaderSnapshot(self, loaded, manifest)
                return
            finally:
                self.connection.execute("ROLLBACK")

    def _space(self, manifest: Manifest, name: str) -> VectorSpace:
        from indexer.store.local.vectors import VectorSpace

        key = (manifest.index_id, manifest.generation, name)
        if key not in self._loaded:
            path = space_file(self.directory, name, manifest.generation)
            self._loaded[key] = VectorSpace(manifest.dim_of(name), path)
        return self._loaded[key]

    def rows(self, sql: str, parameters: Any = ()) -> list[tuple]:
        """The rows of a query, SQLite errors as ctxsearch errors."""
        try:
            return self.connection.execute(sql, parameters).fetchall()
        except sqlite3.Error as error:
            raise error_for(str(error), self.target) from error

    def describe(self) -> dict[str, Any]:
        """The manifest, the counts of documents and chunks, and the size of each file."""
        from indexer.store.local.describe import describe_folder

        return describe_folder(self.directory)

    def close(self) -> None:
        """Release the database and the loaded spaces."""
        self._closed = True
        self._loaded.clear()
        self.connection.close()


class ReaderSnapshot(SpaceReads):
    """One read transaction of the light reader and the spaces it loaded."""

    def __init__(self, reader: LocalReader, spaces: dict[str, VectorSpace], manifest: Manifest):
        self.reader = reader
        self.spaces = spaces
        self.manifest = manifest
        self._allowed: dict[SearchFilter, np.ndarray] = {}

    def chunk_count(self, where: SearchFilter | None = None) -> int:
        """How many chunks there are, or how many `where` allows."""
        if not where:
            return self.counts()["chunks"]
        return len(self.allowed_chunks(where))

    def allowed_chunks(self, where: SearchFilter) -> np.ndarray:
        """The ids of the chunks of the documents `where` allows (sorted; once per snapshot)."""
        import numpy as np

        if where not in self._allowed:
            sql, parameters = where.sqlite_chunk_ids()
            rows = self.reader.rows(sql, parameters)
            self._allowed[where] = np.fromiter((row[0] for row in rows), np.int64, len(rows))
        return self._allowed[where]

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """BM25 over FTS5, in this snapshot (the store's query, see `bm25.py`), among the
        chunks of the documents `where` allows."""
        expression = match_expression(query)
        if expression is None:
            return []
        if where:
            allowed_sql, parameters = where.sqlite_chunk_ids()
            rows = self.reader.rows(bm25_sql_among(allowed_sql), [expression, *parameters, k])
        else:
            rows = self.reader.rows(BM25_SQL, {"expression": expression, "k": k})
        return [(int(rowid), float(score)) for rowid, score in rows]

    def lexical_scores(self, query: str, chunk_ids: list[int]) -> dict[int, float]:
        """The BM25 of each of these chunks that holds a query term (the store's query)."""
        parameters = bm25_of_parameters(query, chunk_ids)
        if parameters is None:
            return {}
        rows = self.reader.rows(BM25_OF_SQL, parameters)
        return {int(rowid): float(score) for rowid, score in rows}

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids, with their documents' paths."""
        ids = list(chunk_ids)
        found: dict[int, StoredChunk] = {}
        for first in range(0, len(ids), _BATCH):
            batch = ids[first : first + _BATCH]
            marks = ", ".join("?" * len(batch))
            for row in self.reader.rows(
                'SELECT c.id, c.document_id, d.path, c.ordinal, c.start, c."end", c.text, '
                "d.host, c.line, c.end_line, c.heading, c.page, d.metadata_json "
                f"FROM chunks c JOIN documents d ON c.document_id = d.id "
                f"WHERE c.id IN ({marks})",
                batch,
            ):
                found[row[0]] = StoredChunk(*row)
        return found

    def document(self, document_id: int) -> tuple[StoredDocument, list[StoredChunk]] | None:
        """A document and its chunks in order."""
        rows = self.reader.rows(
            "SELECT id, path, size, mtime_ns, sha256, host, metadata_json FROM documents "
            "WHERE id = ?",
            (document_id,),
        )
        if not rows:
            return None
        document = StoredDocument(*rows[0])
        chunks = [
            StoredChunk(
                row[0],
                row[1],
                document.path,
                *row[2:6],
                document.host,
                *row[6:],
                metadata_json=document.metadata_json,
            )
            for row in self.reader.rows(
                'SELECT id, document_id, ordinal, start, "end", text, line, end_line, heading, '
                "page FROM chunks WHERE document_id = ? ORDER BY ordinal",
                (document_id,),
            )
        ]
        return document, chunks

    def counts(self) -> dict[str, int]:
        """How many documents and chunks there are."""
        return {
            table: self.reader.rows(f"SELECT count(*) FROM {table}")[0][0]
            for table in ("documents", "chunks")
        }


def _read_manifest(connection: sqlite3.Connection) -> Manifest | None:
    rows = dict(connection.execute("SELECT key, value FROM manifest").fetchall())
    return Manifest.from_rows(rows) if rows else None

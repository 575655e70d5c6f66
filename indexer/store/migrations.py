"""Named schema migrations, applied in order and recorded in the `migrations` table.

A migration is written out as the SQL of its own time, never derived from the current
models, so an old database always migrates the same way. Append; never edit one that
has shipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Connection, text

Migration = Callable[[Connection], None]


def _m0001_initial(connection: Connection) -> None:
    for statement in (
        "CREATE TABLE manifest (key VARCHAR NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE documents (
            id INTEGER NOT NULL PRIMARY KEY,
            path VARCHAR NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            sha256 VARCHAR(64) NOT NULL,
            indexed_at FLOAT NOT NULL)""",
        """CREATE TABLE chunks (
            id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            text TEXT NOT NULL)""",
        "CREATE INDEX ix_chunks_document_id ON chunks (document_id)",
    ):
        connection.execute(text(statement))


def _m0002_lexical_space(connection: Connection) -> None:
    from indexer.store.lexical import create_fts_space

    create_fts_space(connection, "chunks", tokenizer="porter unicode61 remove_diacritics 2")


MIGRATIONS: list[tuple[str, Migration]] = [
    ("0001_initial", _m0001_initial),
    ("0002_lexical_space", _m0002_lexical_space),
]


def migrate(connection: Connection) -> list[str]:
    """Apply every migration not yet recorded, in one transaction; return their names."""
    connection.execute(
        text(
            "CREATE TABLE IF NOT EXISTS migrations "
            "(name VARCHAR NOT NULL PRIMARY KEY, applied_at FLOAT NOT NULL)"
        )
    )
    done = {row[0] for row in connection.execute(text("SELECT name FROM migrations"))}
    applied = []
    for name, migration in MIGRATIONS:
        if name in done:
            continue
        migration(connection)
        connection.execute(
            text("INSERT INTO migrations (name, applied_at) VALUES (:name, :at)"),
            {"name": name, "at": time.time()},
        )
        applied.append(name)
    return applied


def pending(connection: Connection) -> list[str]:
    """The names of migrations this database still lacks."""
    tables = {row[0] for row in connection.execute(text("SELECT name FROM sqlite_master"))}
    if "migrations" not in tables:
        return [name for name, _ in MIGRATIONS]
    done = {row[0] for row in connection.execute(text("SELECT name FROM migrations"))}
    return [name for name, _ in MIGRATIONS if name not in done]

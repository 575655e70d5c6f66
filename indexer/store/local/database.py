"""The writer's engine on an embedded index's SQLite file: real transactions, WAL mode.

pysqlite's own transaction handling starts a transaction only before a write, so two
reads could see two states. Here pysqlite is told to stay out of the way and every
SQLAlchemy transaction sends its own BEGIN: a plain one for the writer's reads, `BEGIN
IMMEDIATE` for its writes. (Readers use sqlite3 directly: `connections.py`.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import URL, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, OperationalError

from indexer.store.local.sqlite_errors import busy_timeout_ms, error_for
from indexer.store.local.sqlite_uri import sqlite_uri

# Execution option that makes a transaction a write transaction (BEGIN IMMEDIATE).
WRITE = "ctxsearch_write"


def sqlite_url(path: Path) -> URL:
    """The SQLAlchemy URL of the SQLite file at `path`, whatever characters the path holds
    (its quoted `file:` URI, see `sqlite_uri`; a path pasted into a URL is misread)."""
    return URL.create("sqlite", database=sqlite_uri(path), query={"uri": "true"})


def sqlite_engine(path: Path) -> Engine:
    """An engine on the SQLite file at `path` (created if missing), in WAL mode."""
    engine = create_engine(sqlite_url(path))
    timeout = busy_timeout_ms()  # here, so that a bad setting is not taken for a bad file

    @event.listens_for(engine, "connect")
    def _configure(connection, _record) -> None:  # type: ignore[no-untyped-def]
        connection.isolation_level = None  # no implicit BEGIN: see `_begin`
        cursor = connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute(f"PRAGMA busy_timeout = {timeout}")
            cursor.execute("PRAGMA journal_mode = WAL")
        except Exception as error:  # the file is not a database: reported by the caller
            raise OperationalError("PRAGMA", {}, error) from error
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:  # type: ignore[no-untyped-def]
        write = connection.get_execution_options().get(WRITE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


@contextmanager
def sqlite_errors(where: str) -> Iterator[None]:
    """Turn SQLAlchemy/sqlite3 errors raised in the block into one-line ctxsearch errors."""
    try:
        yield
    except DBAPIError as error:
        raise translated(error, where) from error


def translated(error: DBAPIError, where: str) -> Exception:
    """The ctxsearch error an SQLite error means, with SQLite's own words."""
    message = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
    return error_for(message, where)

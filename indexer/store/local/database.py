"""The SQLite database of an embedded index: one engine, real transactions, WAL mode.

pysqlite's own transaction handling starts a transaction only before a write, so two
reads could see two states. Here pysqlite is told to stay out of the way and every
SQLAlchemy transaction sends its own BEGIN: a reader's transaction is one consistent
snapshot (WAL keeps it while a writer commits), and a writer's is `BEGIN IMMEDIATE`.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import OperationalError

# Execution option that makes a transaction a write transaction (BEGIN IMMEDIATE).
WRITE = "ctxsearch_write"


def sqlite_engine(path: Path, read_only: bool = False) -> Engine:
    """An engine on the SQLite file at `path` (opened read-only with `read_only`)."""
    engine = create_engine(
        f"sqlite:///file:{path}?mode=ro&uri=true" if read_only else f"sqlite:///{path}"
    )

    @event.listens_for(engine, "connect")
    def _configure(connection, _record) -> None:  # type: ignore[no-untyped-def]
        connection.isolation_level = None  # no implicit BEGIN: see `_begin`
        cursor = connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
            if not read_only:
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


def busy_timeout_ms() -> int:
    """How long to wait for a database another program holds locked (CTXSEARCH_BUSY_TIMEOUT_MS)."""
    return int(os.environ.get("CTXSEARCH_BUSY_TIMEOUT_MS", "10000"))

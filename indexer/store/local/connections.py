"""The read connections of an index folder's database: sqlite3, read-only, pooled.

Readers use the standard library's sqlite3, not SQLAlchemy: `ctxsearch query` is a whole
process per query, and importing SQLAlchemy took longer than the search. Each snapshot
is one read transaction on a connection of its own, taken from the pool and given back
after, so threads (the HTTP server's) read side by side: WAL gives each transaction its
own published state while a writer commits. Where SQLite cannot add the WAL index file a
reader needs (a read-only folder or mount), the database is opened immutable instead.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from indexer.store.local.sqlite_errors import busy_timeout_ms, error_for, is_read_only_error
from indexer.store.local.sqlite_uri import sqlite_uri
from indexer.store.numbers import SQLITE_COMPARE_NUMBERS, compare_numbers
from indexer.store.sql_reads import Rows

MAX_IDLE = 8  # connections kept open between snapshots


class ReadConnections:
    """Read-only sqlite3 connections to one database file, one per transaction at a time."""

    def __init__(self, database: Path, where: str, immutable: bool = False):
        self.database = database
        self.where = where
        self.immutable = immutable  # found out by the first connection where not asked for
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one read transaction (the state it first reads, throughout)."""
        with self._lock:
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = self._connect()
        reusable = False
        try:
            sqlite_rows(connection, self.where)("BEGIN", {})  # SQLite's errors as ours
            yield connection
        finally:
            with suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
                reusable = not connection.in_transaction
            with self._lock:
                reusable = reusable and not self._closed and len(self._idle) < MAX_IDLE
                if reusable:
                    self._idle.append(connection)
            if not reusable:
                connection.close()

    def _connect(self) -> sqlite3.Connection:
        try:
            if not self.immutable:
                try:
                    return _probed(_connect(sqlite_uri(self.database, read_only=True)))
                except sqlite3.OperationalError as error:
                    if not is_read_only_error(error):
                        raise
                    self.immutable = True
            return _probed(_connect(sqlite_uri(self.database, immutable=True)))
        except sqlite3.Error as error:
            raise error_for(str(error), self.where) from error

    def close(self) -> None:
        """Close the idle connections; those in use close when their transaction ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def sqlite_rows(connection: sqlite3.Connection, where: str) -> Rows:
    """The `Rows` of a connection: statements with named parameters, SQLite's errors as
    ctxsearch errors."""

    def rows(sql: str, values: Mapping[str, Any]) -> list[Any]:
        try:
            return connection.execute(sql, values).fetchall()
        except sqlite3.Error as error:
            raise error_for(str(error), where) from error

    return rows


def _connect(uri: str) -> sqlite3.Connection:
    # Explicit transactions (isolation_level None); one thread at a time, any thread.
    timeout = busy_timeout_ms()  # before connecting: a bad setting is not a bad file
    connection = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    connection.execute(f"PRAGMA busy_timeout = {timeout}")
    # `where` comparisons of numbers that are not 64-bit integers (SQLite has no decimals)
    connection.create_function(SQLITE_COMPARE_NUMBERS, 2, compare_numbers, deterministic=True)
    return connection


def _probed(connection: sqlite3.Connection) -> sqlite3.Connection:
    """The connection, once a first read showed it can read (a read-only connection of a
    WAL database fails only then where the WAL index file cannot be made)."""
    try:
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except BaseException:
        connection.close()
        raise
    return connection

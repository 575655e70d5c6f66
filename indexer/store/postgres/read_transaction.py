"""How a PostgreSQL snapshot starts and ends, in as few waits for the server as it can.

A snapshot is a read-only REPEATABLE READ transaction, begun by its first statements. The
connection runs in autocommit (psycopg sends no BEGIN of its own), and the snapshot sends
BEGIN and the manifest's SELECT together with its first statements in one pipeline, one
round trip; statements whose text depends on the manifest are built from the manifest
last seen (`begin_with`) and checked against the one the state really has once the
answers are in. Later statements that need nothing from each other's answers go
together too (`run`). The COMMIT is sent and not waited for (`parked.py`). A snapshot
that reads nothing sends nothing.

The pool does not ping: a connection the server ended (a restart, an idle timeout, an
administrator) fails that first round trip, and the snapshot starts again once on a new
connection: nothing was read yet.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import lru_cache
from typing import Any

import psycopg
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from indexer.errors import IndexNotFound, StoreUnavailable
from indexer.store.manifest import Manifest
from indexer.store.postgres.parked import ParkedConnections

BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
MANIFEST = "SELECT key, value FROM manifest"
Statement = tuple[str, Mapping[str, Any]]  # driver SQL (psycopg's `%(name)s`) and values


@lru_cache(maxsize=256)
def driver_sql(sql: str) -> str:
    """`sql` (`:name` parameters) as psycopg takes it, compiled once: a search runs it
    through `exec_driver_sql`, not `text()`, which compiles it again at every query."""
    from sqlalchemy.dialects.postgresql.psycopg import dialect

    return str(text(sql).compile(dialect=dialect()))


class Reading:
    """A snapshot's connection and its transaction, begun by the first statement.

    `expected` is the manifest the store saw last: what a statement sent with the BEGIN
    (`begin_with`) is built from. `manifest` is the state's own, once begun. Connections
    come from `parked` first, and go back there once committed."""

    def __init__(
        self, engine: Engine, parked: ParkedConnections, where: str, expected: Manifest | None
    ):
        self._engine = engine
        self._parked = parked
        self._where = where
        self.expected = expected
        self.manifest: Manifest | None = None
        self._connection: Connection | None = None

    @property
    def connection(self) -> Connection:
        """The connection, inside the transaction (begun now if it was not)."""
        self.state_manifest()
        assert self._connection is not None
        return self._connection

    def state_manifest(self) -> Manifest:
        """The manifest of the state the transaction reads (begun now if it was not)."""
        if self._connection is None or self.manifest is None:
            self._begin(())
        assert self.manifest is not None
        return self.manifest

    def checked_out(self) -> Connection:
        """The snapshot's connection, begun or not: for what it knows without asking the
        server (pgvector's schema)."""
        if self._connection is None:
            self._connection = self._checkout()
        return self._connection

    @property
    def begun(self) -> bool:
        """Whether the transaction has begun."""
        return self.manifest is not None

    def begin_with(self, statements: Sequence[Statement]) -> list[list[tuple[Any, ...]]] | None:
        """Begin with `statements` sent in the same round trip; each one's rows, when the
        state's manifest is the one expected (None, begun all the same, when it is not, or
        when one failed: the caller builds them again from the state's manifest)."""
        rows = self._begin(statements)
        return rows if self.manifest == self.expected else None

    def run(self, statements: Sequence[Statement]) -> list[list[tuple[Any, ...]]]:
        """Each statement's rows, all sent before waiting (with the BEGIN when the
        transaction has not begun: their text must not depend on the manifest); nothing
        is sent for no statement."""
        if not statements:
            return []
        if not self.begun:
            rows = self._begin(statements)
            if rows is not None:
                return rows
        raw = self.connection.connection.driver_connection
        assert isinstance(raw, psycopg.Connection)
        try:
            return _together(raw, statements)
        except psycopg.Error as error:  # as SQLAlchemy raises it, for `database_errors`
            sql, values = statements[0]
            raise DBAPIError.instance(sql, values, error, psycopg.Error) from error

    def end(self, failed: bool) -> None:
        """COMMIT if begun (sent, the connection parked), or ROLLBACK after a failure
        (waited for, the connection given back to the pool)."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            if self.manifest is None:
                if failed:  # a signal may have come while it began: its session is unknown
                    connection.invalidate()
                return
            if not failed:
                if self._parked.park(connection):
                    connection = None
                else:
                    connection.exec_driver_sql("COMMIT")
                return
            try:
                connection.exec_driver_sql("ROLLBACK")
            except Exception:  # the session is gone, or the signal came mid-statement
                with suppress(Exception):
                    connection.invalidate()
        finally:
            if connection is not None:
                connection.close()

    def _checkout(self) -> Connection:
        return self._parked.take() or self._engine.connect().execution_options(
            isolation_level="AUTOCOMMIT"
        )

    def _begin(self, statements: Sequence[Statement]) -> list[list[tuple[Any, ...]]] | None:
        for attempt in (1, 2):
            # held while it begins, so that `end` still finds it after a signal
            connection = self._connection = self._connection or self._checkout()
            try:
                found, rows = begin_reading(connection, statements)
            except psycopg.OperationalError as error:
                self._connection = None
                connection.invalidate()
                connection.close()
                if attempt == 2:
                    raise StoreUnavailable(
                        f"cannot use the index database {self._where}: {error}"
                    ) from error
                continue
            except psycopg.Error as error:
                self._connection = None
                connection.close()
                if statements:  # the statements' own failure: begin without them
                    return self._begin(())
                if isinstance(error, psycopg.errors.UndefinedTable):
                    raise IndexNotFound(f"{self._where}: the index was removed") from error
                raise StoreUnavailable(
                    f"the index database {self._where} failed: {error}"
                ) from error
            if found is None:
                self._connection = None
                connection.exec_driver_sql("ROLLBACK")
                connection.close()
                raise IndexNotFound(f"{self._where}: the index was removed")
            self.manifest = found
            return rows
        raise AssertionError("unreachable")


@contextmanager
def reading(
    engine: Engine, parked: ParkedConnections, where: str, expected: Manifest | None
) -> Iterator[Reading]:
    """A snapshot's `Reading`, ended (committed, or rolled back on an error) on leaving."""
    state = Reading(engine, parked, where, expected)
    try:
        yield state
    except BaseException:
        state.end(failed=True)
        raise
    else:
        state.end(failed=False)


def begin_reading(
    connection: Connection, statements: Sequence[Statement] = ()
) -> tuple[Manifest | None, list[list[tuple[Any, ...]]] | None]:
    """Begin the snapshot's transaction on `connection` (in autocommit), read its manifest
    and run `statements`, all sent before waiting (one Sync): the manifest (None where
    there is none) and each statement's rows (None without statements)."""
    raw = connection.connection.driver_connection
    assert isinstance(raw, psycopg.Connection)
    manifest, *answers = _together(raw, [(BEGIN, None), (MANIFEST, None), *statements])[1:]
    found = dict(manifest)  # type: ignore[arg-type]
    return (Manifest.from_rows(found) if found else None), (answers if statements else None)


def _together(
    raw: psycopg.Connection, statements: Sequence[tuple[str, Mapping[str, Any] | None]]
) -> list[list[tuple[Any, ...]]]:
    """Each statement's rows, all sent before waiting for the first answer (a libpq older
    than 14 has no pipeline mode: a round trip each there)."""
    if psycopg.Pipeline.is_supported():
        with raw.pipeline():
            cursors = [raw.execute(sql, values) for sql, values in statements]
    else:
        cursors = [raw.execute(sql, values) for sql, values in statements]
    return [cursor.fetchall() if cursor.description else [] for cursor in cursors]

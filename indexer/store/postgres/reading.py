"""How a PostgreSQL snapshot starts and ends, in as few waits for the server as it can.

A snapshot is a read-only REPEATABLE READ transaction. psycopg would send its BEGIN on
its own and wait for the answer, and SQLAlchemy's pool would first ping the connection:
instead the connection runs in autocommit (psycopg sends no BEGIN of its own) and the
snapshot sends BEGIN and the manifest's SELECT together in one pipeline, one round trip.
The pool does not ping: a connection the server ended (a restart, an idle timeout, an
administrator) fails that first round trip, and the snapshot starts again once on a new
connection: nothing was read yet. Ending is the COMMIT, the second round trip; the
query's own statements (the search, with its hits' rows) run between.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import psycopg
from sqlalchemy import Connection, Engine

from indexer.errors import IndexNotFound, StoreUnavailable
from indexer.store.manifest import Manifest

BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
MANIFEST = "SELECT key, value FROM manifest"


@contextmanager
def reading(engine: Engine, where: str) -> Iterator[tuple[Connection, Manifest]]:
    """A connection inside a snapshot's transaction, and the manifest it sees."""
    connection, manifest = _begun(engine, where)
    try:
        yield connection, manifest
    except BaseException:
        try:
            connection.exec_driver_sql("ROLLBACK")
        except Exception:  # the session is gone, or the signal came mid-statement
            with suppress(Exception):
                connection.invalidate()
        raise
    else:
        connection.exec_driver_sql("COMMIT")
    finally:
        connection.close()


def _begun(engine: Engine, where: str) -> tuple[Connection, Manifest]:
    for attempt in (1, 2):
        connection = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            found = begin_reading(connection)
        except psycopg.OperationalError as error:
            connection.invalidate()
            connection.close()
            if attempt == 2:
                raise StoreUnavailable(f"cannot use the index database {where}: {error}") from error
            continue
        except psycopg.Error as error:
            connection.close()
            if isinstance(error, psycopg.errors.UndefinedTable):
                raise IndexNotFound(f"{where}: the index was removed") from error
            raise StoreUnavailable(f"the index database {where} failed: {error}") from error
        if found is None:
            connection.exec_driver_sql("ROLLBACK")
            connection.close()
            raise IndexNotFound(f"{where}: the index was removed")
        return connection, found
    raise AssertionError("unreachable")


def begin_reading(connection: Connection) -> Manifest | None:
    """Begin the snapshot's transaction on `connection` (in autocommit) and read its
    manifest, both sent before waiting (one Sync); None where there is no manifest."""
    raw = connection.connection.driver_connection
    assert isinstance(raw, psycopg.Connection)
    if psycopg.Pipeline.is_supported():
        with raw.pipeline():
            raw.execute(BEGIN)
            cursor = raw.execute(MANIFEST)
    else:  # a libpq older than 14 has no pipeline mode: two round trips
        raw.execute(BEGIN)
        cursor = raw.execute(MANIFEST)
    found = dict(cursor.fetchall())
    return Manifest.from_rows(found) if found else None

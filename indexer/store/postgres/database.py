"""Connections to the PostgreSQL database of an index, and its errors in our words."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from indexer.config import POSTGRES_POOL, postgres_pool
from indexer.errors import (
    IndexCorrupt,
    IndexLocked,
    IndexNotFound,
    MissingDependency,
    StoreUnavailable,
)
from indexer.store.index_types import HNSW_EF_SEARCH
from indexer.store.postgres.location import PostgresLocation

F = TypeVar("F", bound=Callable[..., Any])
CONNECT_TIMEOUT_SECONDS = 10
OVERFLOW = 10  # connections beyond the pool (SQLAlchemy's default), each closed after use
# How long a query waits for a connection when the pool and its overflow are all in use.
POOL_WAIT_SECONDS = 30.0
# TCP keepalives (libpq's, unless the URL sets its own): a NAT or a firewall drops an idle
# connection, and the writer lock's session idles while a run reads and encodes files; a
# probe every 30 s keeps it open, and a peer that is gone is noticed within a minute.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10,
              "keepalives_count": 3}  # fmt: skip


def postgres_engine(
    location: PostgresLocation, application: str = "ctxsearch", pooled: int | None = None
) -> Engine:
    """An engine whose connections see the index's schema and no other, keeping `pooled`
    of them between uses (default $CTXSEARCH_POSTGRES_POOL).

    `search_path` is the index's schema alone (with the system catalogs PostgreSQL always
    searches), so an unqualified name can never resolve to a table of another index:
    with pgvector in `public` and an index there, another index's missing table would
    otherwise be found in `public`. pgvector's type, operators and operator classes are
    named with the schema the extension lives in (`vector_schema`) instead."""
    try:
        import pgvector  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as error:
        raise MissingDependency(
            f"the PostgreSQL backend needs packages that are not installed ({error.name}): "
            "pip install 'ctxsearch[postgres]'"
        ) from error
    given = location.url.query  # type: ignore[attr-defined]
    keepalives = {name: value for name, value in KEEPALIVES.items() if name not in given}
    engine = create_engine(
        location.url,  # type: ignore[arg-type]
        # no ping before each use (a round trip per query): a snapshot, and the writer's
        # lock, start again on a new connection when the server ended the old one
        # (`read_transaction.py`, `lock.py`)
        # the searches running at once keep their connections between queries (a new
        # connection costs a server process and several round trips); past the pool, up
        # to OVERFLOW more are opened for a query each
        pool_size=postgres_pool() if pooled is None else pooled,
        max_overflow=OVERFLOW,
        pool_timeout=POOL_WAIT_SECONDS,
        connect_args={
            "application_name": application,
            "connect_timeout": CONNECT_TIMEOUT_SECONDS,
            **keepalives,
        },
    )
    schema = location.schema
    from psycopg.pq import TransactionStatus

    from indexer.store.postgres.parked import settle
    from indexer.store.postgres.query_vector import register_query_vectors

    @event.listens_for(engine, "connect")
    def _search_path(connection, record) -> None:  # type: ignore[no-untyped-def]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT n.nspname FROM pg_extension e "
                "JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
            )
            found = cursor.fetchone()
            cursor.execute(f"SET search_path TO {quoted(schema)}")
            # the depth every graph search starts from (a query that wants more sets it in
            # its transaction), set once here rather than in every query's transaction
            cursor.execute(f"SET hnsw.ef_search TO {HNSW_EF_SEARCH}")
        connection.commit()
        register_query_vectors(connection)
        record.info[_VECTOR_SCHEMA] = found[0] if found else None

    @event.listens_for(engine, "reset")
    def _settle_parked(connection, record, state) -> None:  # type: ignore[no-untyped-def]
        # a connection parked with its COMMIT's answer unread, its store dropped without
        # `close` (parked.py): psycopg's ROLLBACK would fail on it
        if connection.pgconn.transaction_status == TransactionStatus.ACTIVE:
            settle(connection)

    return engine


_VECTOR_SCHEMA = "ctxsearch_vector_schema"


def vector_schema(connection: Connection) -> str:
    """The quoted name of the schema holding pgvector, as this connection found it."""
    found = connection.info.get(_VECTOR_SCHEMA)
    if found is None:
        raise StoreUnavailable("the database has no `vector` extension (pgvector)")
    return quoted(found)


def quoted(name: str) -> str:
    """An identifier quoted for SQL (schema names come from the catalog or a checked URL)."""
    return '"' + name.replace('"', '""') + '"'


def translate_errors(where: str) -> Callable[[F], F]:
    """Raise database errors out of the decorated function as ctxsearch's own errors."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with database_errors(where):
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


@contextmanager
def database_errors(where: str) -> Iterator[None]:
    """Turn SQLAlchemy/psycopg errors raised in the block into one-line ctxsearch errors."""
    try:
        yield
    except DBAPIError as error:
        raise translated(error, where) from error
    except PoolTimeout as error:  # not a DBAPIError: every connection is taken
        raise IndexLocked(
            f"{where}: every database connection of this store is in use "
            f"(${POSTGRES_POOL.name} {postgres_pool()} + {OVERFLOW} more); try again"
        ) from error


def translated(error: DBAPIError, where: str) -> Exception:
    """The ctxsearch error a database error means, with the driver's first line."""
    message = first_line(error)
    if isinstance(error, OperationalError) or error.connection_invalidated:
        if "lock" in message and "timeout" in message:
            return IndexLocked(f"{where}: the database is busy ({message})")
        return StoreUnavailable(f"cannot use the index database {where}: {message}")
    if "relation" in message and "does not exist" in message:
        return IndexNotFound(f"{where}: the index was removed ({message})")
    return IndexCorrupt(f"the index database {where} failed: {message}")


def first_line(error: BaseException) -> str:
    """The first line of a database error's own message."""
    original = getattr(error, "orig", None) or error
    lines = str(original).strip().splitlines()
    return lines[0] if lines else type(original).__name__

"""Read connections whose snapshot's COMMIT was sent and not waited for.

A snapshot is a read-only transaction: its COMMIT changes nothing, and the server ends
the transaction (its snapshot and its locks) as the message arrives. Waiting for the
answer only delays the caller, by 0.3-0.5 ms after a graph search at 100,000 vectors on
this machine (the server frees the scan's memory first): a tenth of such a query. So a
snapshot that ends well sends its COMMIT and parks its connection here; the next snapshot
takes it, reads the answer that came in meanwhile, and begins on it, with no trip through
the pool either. A connection whose answer is not a clean COMMIT (its server went away)
is closed, and the next one taken.

A parked connection stays checked out of the store's pool; at most `limit` are parked
(the store parks half its pool: a snapshot ending past that waits for its COMMIT as
before), and `release` settles them all and gives them back to the pool.
"""

from __future__ import annotations

import select
import threading
from contextlib import suppress

import psycopg
from psycopg import pq
from sqlalchemy import Connection

# How long a parked connection's COMMIT may take to answer before it counts as lost.
SETTLE_SECONDS = 10.0


class ParkedConnections:
    """Connections of ended snapshots, their COMMIT sent, waiting for the next snapshot."""

    def __init__(self, limit: int):
        self._limit = limit
        self._parked: list[Connection] = []
        self._lock = threading.Lock()

    def park(self, connection: Connection) -> bool:
        """Send the COMMIT of `connection`'s transaction and keep it for the next snapshot;
        False, with nothing sent, when `limit` connections are parked already."""
        with self._lock:
            if len(self._parked) >= self._limit:
                return False
            try:
                _send_commit(_driver(connection))
            except psycopg.Error:  # the server went away: the caller's COMMIT will say so
                return False
            self._parked.append(connection)
            return True

    def take(self) -> Connection | None:
        """A parked connection, its COMMIT's answer read (out of its transaction, ready
        for the next); None when none is parked."""
        while True:
            with self._lock:
                if not self._parked:
                    return None
                connection = self._parked.pop()
            if settle(_driver(connection)):
                return connection
            _discard(connection)

    def release(self) -> None:
        """Settle every parked connection and give it back to the pool (closed if lost)."""
        with self._lock:
            parked, self._parked = self._parked, []
        for connection in parked:
            if settle(_driver(connection)):
                connection.close()
            else:
                _discard(connection)


def _driver(connection: Connection) -> psycopg.Connection:
    raw = connection.connection.driver_connection
    assert isinstance(raw, psycopg.Connection)
    return raw


def _send_commit(raw: psycopg.Connection) -> None:
    """Send COMMIT without reading its answer (libpq's own call: psycopg would wait)."""
    pgconn = raw.pgconn
    pgconn.send_query(b"COMMIT")
    while pgconn.flush():  # a nonblocking connection may not send it all at once
        select.select([], [pgconn.socket], [], SETTLE_SECONDS)


def settle(raw: psycopg.Connection) -> bool:
    """Read a sent COMMIT's answer: whether it committed and the connection is idle (the
    pool's reset calls it too, for a connection whose store was dropped unclosed)."""
    pgconn = raw.pgconn
    try:
        pgconn.consume_input()
        while pgconn.is_busy():
            readable, _, _ = select.select([pgconn.socket], [], [], SETTLE_SECONDS)
            if not readable:
                return False
            pgconn.consume_input()
        statuses = []
        while (result := pgconn.get_result()) is not None:
            statuses.append(result.status)
    except psycopg.Error:
        return False
    committed = statuses == [pq.ExecStatus.COMMAND_OK]
    return committed and pgconn.transaction_status == pq.TransactionStatus.IDLE


def _discard(connection: Connection) -> None:
    """Close a connection whose state is unknown, so the pool never hands it out again."""
    with suppress(Exception):
        connection.invalidate()
    with suppress(Exception):
        connection.close()

"""One writer per PostgreSQL index: a session-level advisory lock, keyed by the schema.

The lock lives as long as the writer's database session: when the process dies, however
it dies, the server ends the session and releases the lock, so a lock is never stale.
The same session runs the writer's transactions (`AdvisoryLock.connection`), so a lock
lost with its session (`pg_terminate_backend`, `idle_session_timeout`, a NAT dropping
the connection) takes the run's open transaction with it: a run commits only through
the session that holds the lock, and `confirm` checks that inside the transaction.
The holder names itself in `application_name`, so a refused writer can say who holds it.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from indexer.errors import IndexLocked
from indexer.store.postgres.database import first_line

_HELD = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND mode = 'ExclusiveLock' AND pid = pg_backend_pid() AND objsubid = 1 "
    "AND classid = CAST(:c AS oid) AND objid = CAST(:o AS oid)"
)


def lock_key(schema: str) -> int:
    """A stable signed 64-bit key for the schema's writer lock."""
    digest = hashlib.sha256(f"ctxsearch writer {schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class AdvisoryLock:
    """The exclusive right to write one index schema, held on a connection of its own."""

    def __init__(self, engine: Engine, schema: str, where: str):
        self.engine = engine
        self.key = lock_key(schema)
        self.where = where
        self._connection: Connection | None = None

    def acquire(self, wait: bool = False, poll_seconds: float = 0.2) -> AdvisoryLock:
        """Take the lock; if another session holds it, wait (`wait`) or raise `IndexLocked`."""
        me = f"ctxsearch writer pid {os.getpid()} on {socket.gethostname()}"
        connection = self._named_session(me)
        try:
            while not connection.execute(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}
            ).scalar_one():
                if not wait:
                    raise IndexLocked(
                        f"{self.where}: another ctxsearch process{self._holder(connection)} is "
                        "writing this index; wait for it to finish, or pass --wait"
                    )
                connection.commit()
                time.sleep(poll_seconds)
            connection.commit()  # the lock outlives the transaction; the session is idle
        except BaseException:
            connection.invalidate()
            connection.close()
            raise
        self._connection = connection
        return self

    def _named_session(self, name: str) -> Connection:
        """A connection of its own, named `name` for pg_stat_activity: a new one if the
        server ended the pooled one (the pool does not ping)."""
        for attempt in (1, 2):
            connection = self.engine.connect()
            try:
                connection.execute(
                    text("SELECT set_config('application_name', :me, false)"), {"me": name}
                )
                return connection
            except DBAPIError as error:
                connection.invalidate()
                connection.close()
                if attempt == 2 or not error.connection_invalidated:
                    raise
        raise AssertionError("unreachable")

    def _holder(self, connection: Connection) -> str:
        classid, objid = self._halves()
        name = connection.execute(
            text(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                "WHERE l.locktype = 'advisory' AND l.granted "
                "AND l.classid = CAST(:c AS oid) AND l.objid = CAST(:o AS oid)"
            ),
            {"c": classid, "o": objid},
        ).scalar()
        prefix = "ctxsearch writer "
        return f" ({name.removeprefix(prefix)})" if name and name.startswith(prefix) else ""

    def _halves(self) -> tuple[int, int]:
        """The key as pg_locks shows a bigint advisory lock: (classid, objid)."""
        return (self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF

    @property
    def lost(self) -> bool:
        """Whether the session that held the lock is known to be gone."""
        return self._connection is None or self._connection.invalidated

    @property
    def connection(self) -> Connection:
        """The lock's own connection, for the writer's transactions (`IndexLocked` once its
        session is gone: SQLAlchemy would reconnect it silently, without the lock)."""
        if self._connection is None or self._connection.invalidated:
            raise self.lost_error("its database session ended")
        return self._connection

    def confirm(self, connection: Connection) -> None:
        """Inside a transaction on `connection`: raise unless its session holds the lock."""
        classid, objid = self._halves()
        held = connection.execute(text(_HELD), {"c": classid, "o": objid}).scalar_one()
        if not held:
            raise self.lost_error("the database session no longer holds it")

    def lost_error(self, why: str | BaseException) -> IndexLocked:
        """The error of a run that lost the lock before it committed."""
        reason = first_line(why) if isinstance(why, BaseException) else why
        return IndexLocked(
            f"{self.where}: this run lost its writer lock ({reason}), so another process "
            "may be writing; nothing of it was committed: run it again"
        )

    def release(self) -> None:
        """Give the lock up, then end the session that held it (never back to the pool).

        Unlocking first matters: a closed session's locks are freed only when the server
        notices, which may be after the next writer has asked. A session already gone
        has nothing left to free, and a run that committed through it stays committed."""
        if self._connection is not None:
            try:
                if not self._connection.invalidated:
                    self._connection.rollback()
                    self._connection.execute(
                        text("SELECT pg_advisory_unlock(:key)"), {"key": self.key}
                    )
            except DBAPIError:
                pass  # the session ended, and its locks with it
            finally:
                self._connection.invalidate()
                self._connection.close()
                self._connection = None

    def __enter__(self) -> AdvisoryLock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()

"""One writer per PostgreSQL index: a session-level advisory lock, keyed by the schema.

The lock lives as long as the writer's connection: when the process dies, however it
dies, the server ends the session and releases the lock, so a lock is never stale.
The holder names itself in `application_name`, so a refused writer can say who holds it.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time

from sqlalchemy import Connection, Engine, text

from indexer.errors import IndexLocked


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
        connection = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        me = f"ctxsearch writer pid {os.getpid()} on {socket.gethostname()}"
        connection.execute(text("SELECT set_config('application_name', :me, false)"), {"me": me})
        try:
            while not connection.execute(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}
            ).scalar_one():
                if not wait:
                    raise IndexLocked(
                        f"{self.where}: another ctxsearch process{self._holder(connection)} is "
                        "writing this index; wait for it to finish, or pass --wait"
                    )
                time.sleep(poll_seconds)
        except BaseException:
            connection.invalidate()
            connection.close()
            raise
        self._connection = connection
        return self

    def _holder(self, connection: Connection) -> str:
        classid, objid = (self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF
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

    def release(self) -> None:
        """Give the lock up, then end the session that held it (never back to the pool).

        Unlocking first matters: a closed session's locks are freed only when the server
        notices, which may be after the next writer has asked."""
        if self._connection is not None:
            try:
                self._connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": self.key})
            finally:
                self._connection.invalidate()
                self._connection.close()
                self._connection = None

    def __enter__(self) -> AdvisoryLock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()

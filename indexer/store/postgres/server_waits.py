"""How many times a piece of work waits for the PostgreSQL server: the round trips that
decide a query's latency on a network, counted from libpq's protocol trace. The store's
tests hold its reads to their round trips with it, and the lab's benchmark reports it."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from indexer.store.base import Store


def server_waits(store: Store, action: Callable[[], object]) -> list[str]:
    """The messages the client sends while `action` runs on the PostgreSQL store's (one,
    pooled) connection and waits for, from libpq's protocol trace: each `Sync` or `Query`
    answered (its `ReadyForQuery` read) before `action` returns. A COMMIT sent and parked
    (`indexer.store.postgres.parked`) is not waited for; connections parked before are
    given back to the pool first, so that `action` starts on the one traced."""
    store.parked.release()  # type: ignore[attr-defined]
    with store.engine.connect() as connection:  # type: ignore[attr-defined]
        raw = connection.connection.dbapi_connection
    with tempfile.TemporaryDirectory(prefix="ctxsearch-trace-") as folder:
        trace = Path(folder) / "libpq.trace"
        with trace.open("w") as out:
            raw.pgconn.trace(out.fileno())
            try:
                action()
            finally:
                raw.pgconn.untrace()
        lines = trace.read_text().splitlines()
    sent: list[str] = []
    answered = 0
    for line in lines:
        fields = line.split("\t")
        message = fields[3].strip().split(" ")[0]
        if fields[1] == "F" and message in ("Sync", "Query"):
            sent.append(message)
        elif fields[1] == "B" and message == "ReadyForQuery":
            answered += 1
    return sent[:answered]

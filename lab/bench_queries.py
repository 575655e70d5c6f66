"""Whole queries as a user asks them (`Searcher.search`) on an index, per mode, against a
baseline index of the same documents (a folder store against a PostgreSQL one, say), in
one run.

Each query runs on both indexes, the one that goes first alternating, so a busy moment of
the machine hurts both. A row's `p50_ms` is the response's `search_seconds`: everything a
search does but encoding the query (the snapshot, the searches, hydration, duplicates,
the match signal, snippets); `total_p50_ms` is the whole call. On PostgreSQL a row also
counts the waits for the server of one query (`server_waits`: each `Sync` or `Query` sent
and answered before the query returns).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from indexer.store.backends import is_database_url
from indexer.store.base import Store, Target

MODES = ("contextual", "lexical", "hybrid")


def query_rows(
    index: Target,
    queries: list[str],
    baseline: Target | None = None,
    modes: tuple[str, ...] = MODES,
    k: int = 10,
) -> list[dict[str, Any]]:
    """p50/p95 ms of `Searcher.search` per mode on `index` (and on `baseline`,
    alternating), its waits for the server on PostgreSQL, and the ratio: the baseline's
    p50 over this row's (above 1: faster than the baseline)."""
    from search.engine import Searcher

    targets = {"index": index} if baseline is None else {"index": index, "baseline": baseline}
    rows: list[dict[str, Any]] = []
    with ExitStack() as opened:
        searchers = {name: opened.enter_context(Searcher(at)) for name, at in targets.items()}
        for mode in modes:
            search_ms: dict[str, list[float]] = {name: [] for name in searchers}
            total_ms: dict[str, list[float]] = {name: [] for name in searchers}
            for searcher in searchers.values():  # warm-up: model load, caches, prepares
                for query in queries[:6]:
                    searcher.search(query, mode=mode, k=k)
            for number, query in enumerate(queries):
                order = list(searchers) if number % 2 == 0 else list(reversed(searchers))
                for name in order:
                    started = time.perf_counter()
                    response = searchers[name].search(query, mode=mode, k=k)
                    total_ms[name].append((time.perf_counter() - started) * 1000)
                    search_ms[name].append(response.timings["search_seconds"] * 1000)
            mode_rows = {
                name: _row(name, targets[name], mode, search_ms[name], total_ms[name])
                | {"server_waits": _waits(searchers[name], targets[name], queries[0], mode, k)}
                for name in searchers
            }
            if baseline is not None:
                for row in mode_rows.values():
                    row["ratio"] = round(mode_rows["baseline"]["p50_ms"] / row["p50_ms"], 2)
                    row["note"] = "ratio = the baseline's p50 / this p50; encoding left out"
            rows += mode_rows.values()
    return rows


def _row(
    name: str, target: Target, mode: str, search_ms: list[float], total_ms: list[float]
) -> dict[str, Any]:
    if is_database_url(target):
        from indexer.store.postgres.location import PostgresLocation

        where = f"postgresql {PostgresLocation.parse(str(target)).schema}"
    else:
        where = f"folder {Path(target).name}"
    return {
        "benchmark": f"{mode}, {name}: {where}"[:50],
        "index": str(target),
        "mode": mode,
        "queries": len(search_ms),
        "p50_ms": round(statistics.median(search_ms), 3),
        "p95_ms": round(float(np.percentile(search_ms, 95)), 3),
        "total_p50_ms": round(statistics.median(total_ms), 3),
    }


def _waits(searcher: Any, target: Target, query: str, mode: str, k: int) -> int | None:
    """How many times one query waits for the server (None: not PostgreSQL)."""
    if not is_database_url(target):
        return None
    return len(server_waits(searcher.store, lambda: searcher.search(query, mode=mode, k=k)))


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

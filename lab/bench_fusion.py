"""Query latency of the default hybrid fusion against the one it replaced, in one run."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lab.fusion_variants import linear_fusion
from search.fusion import Fused, HybridFusion, Ranked, Scores

# 0.1 searched each side 100 deep for hybrid.
OLD_DEPTH = 100


def old_hybrid(
    dense: Ranked,
    lexical: Ranked,
    dense_weight: float | None = None,
    _dense_scores: Scores | None = None,
    _lexical_scores: Scores | None = None,
    _query: str = "",
) -> Fused:
    """The hybrid fusion of 0.1: min-max normalised scores, 0.4 dense + 0.6 lexical
    (missing scores never looked up)."""
    return linear_fusion(dense, lexical, 0.4 if dense_weight is None else dense_weight)


def read_queries(path: Path, limit: int) -> list[str]:
    """The first `limit` query texts of a BEIR queries.jsonl (or of its folder)."""
    file = path / "queries.jsonl" if path.is_dir() else path
    with file.open(encoding="utf-8") as handle:
        texts = [json.loads(line)["text"] for line in handle if line.strip()]
    return texts[:limit]


def fusion_latency_rows(index_dir: Path, queries: list[str], k: int = 10) -> list[dict[str, Any]]:
    """`Searcher.search` in hybrid mode, 0.1's fusion and depth vs the default's,
    alternating per query.

    The model is loaded and both arms warmed up first; each query runs once per arm,
    the arm that goes first alternating, so a busy moment of the machine hurts both.
    """
    from search.engine import Searcher

    timings: dict[str, list[float]] = {"old": [], "default": []}
    fusing: dict[str, list[float]] = {"old": [], "default": []}
    with Searcher(index_dir) as searcher:
        default = searcher.hybrid
        arms = {
            "old": HybridFusion(_timed(old_hybrid, fusing["old"]), OLD_DEPTH, completes=False),
            "default": replace(default, fuse=_timed(default.fuse, fusing["default"])),
        }
        for name in arms:  # warm-up: model load, FAISS and SQLite caches
            searcher.hybrid = arms[name]
            searcher.search(queries[0], k=k)
        for number, query in enumerate(queries):
            order = ["old", "default"] if number % 2 == 0 else ["default", "old"]
            for name in order:
                searcher.hybrid = arms[name]
                started = time.perf_counter()
                searcher.search(query, k=k)
                timings[name].append((time.perf_counter() - started) * 1000)
        searcher.hybrid = default
    rows = []
    for what, samples in (("hybrid query", timings), ("fusion step alone", fusing)):
        old = _summary(f"{what}, old fusion", samples["old"][-len(queries) :])
        new = _summary(f"{what}, default fusion", samples["default"][-len(queries) :])
        new["ratio_p50"] = round(new["p50_ms"] / old["p50_ms"], 3)
        new["ratio_p95"] = round(new["p95_ms"] / old["p95_ms"], 3)
        new["note"] = "ratios: default / old, same Searcher, alternating"
        rows += [old, new]
    return rows


def _timed(fusion: Callable[..., Fused], into: list[float]) -> Callable[..., Fused]:
    """`fusion`, appending the milliseconds of each call to `into`."""

    def timed(*args: Any) -> Fused:
        started = time.perf_counter()
        fused = fusion(*args)
        into.append((time.perf_counter() - started) * 1000)
        return fused

    return timed


def _summary(name: str, samples: list[float]) -> dict[str, Any]:
    return {
        "benchmark": name,
        "p50_ms": round(statistics.median(samples), 3),
        "p95_ms": round(_percentile(samples, 95), 3),
        "queries": len(samples),
    }


def _percentile(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * percent / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

"""The two stores' vector search compared: FAISS HNSW vs pgvector HNSW, each against exact.

Each store is filled through the `Store` interface (documents, chunks, vectors in one
change) with the clustered synthetic 384-d vectors of `bench_faiss`, published with
`index_type` flat (exact) and hnsw, and queried through `snapshot().vector_search` one
query at a time, each in its own snapshot, exactly as `Searcher` reads. Recall@10 is
measured against the exact answers computed with NumPy in the same run; the ratio is
FAISS HNSW's p50 over this row's p50 (above 1: faster than FAISS HNSW).
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from indexer.reading.sources import Document
from indexer.splitting.chunking import Chunk
from indexer.store.backends import open_store
from indexer.store.base import NewDocument, Target
from indexer.store.manifest import Manifest
from lab.bench_faiss import DIM, synthetic_vectors

CHUNKS_PER_DOCUMENT = 1000
SPACE = "contextual"


def _manifest(index_type: str) -> Manifest:
    return Manifest(
        model="synthetic",
        model_fingerprint="synthetic",
        pooling="mean",
        dim=DIM,
        max_tokens=256,
        chunk_tokens=254,
        chunk_overlap=0,
        version="bench",
        spaces=[SPACE],
        index_type=index_type,
    )


def _fill(target: Target, vectors: np.ndarray, index_type: str) -> float:
    """Create a store at `target` holding `vectors`; the seconds it took to publish."""
    started = time.perf_counter()
    store = open_store(target, create=True)
    try:
        with store.writer():
            store.initialise(_manifest(index_type))
            with store.change() as change:
                for first in range(0, len(vectors), CHUNKS_PER_DOCUMENT):
                    block = vectors[first : first + CHUNKS_PER_DOCUMENT]
                    chunks = [Chunk(i, 0, 1, f"c{first + i}") for i in range(len(block))]
                    document = Document(Path(f"/bench/{first:09d}.txt"), "", 0, 0, "0" * 64)
                    change.add_documents([NewDocument(document, chunks, {SPACE: block})])
        seconds = time.perf_counter() - started
        with store.snapshot() as snapshot:  # recall below relies on ids in insertion order
            ends = snapshot.chunks([1, len(vectors)])
            assert [ends[1].text, ends[len(vectors)].text] == ["c0", f"c{len(vectors) - 1}"]
    finally:
        store.close()
    return seconds


def _query(target: Target, probes: np.ndarray, k: int) -> tuple[list[list[int]], list[float]]:
    store = open_store(target)
    found, seconds = [], []
    try:
        with store.snapshot() as snapshot:  # warm: load the space, open connections
            snapshot.vector_search(SPACE, probes[:1], k)
        for row in range(len(probes)):
            started = time.perf_counter()
            with store.snapshot() as snapshot:
                [hits] = snapshot.vector_search(SPACE, probes[row : row + 1], k)
            seconds.append(time.perf_counter() - started)
            found.append([chunk_id for chunk_id, _ in hits])
    finally:
        store.close()
    return found, seconds


def store_rows(
    postgres: str, count: int = 100_000, queries: int = 200, k: int = 10
) -> list[dict[str, Any]]:
    """Build, p50/p95 ms and recall@k of exact and HNSW search in each store (PostgreSQL's:
    the database at the URL `postgres`, pgvector in it)."""
    vectors, probes = synthetic_vectors(count, queries)
    exact = np.argsort(-(probes @ vectors.T), axis=1)[:, :k]
    rows: list[dict[str, Any]] = []
    database = postgres
    with tempfile.TemporaryDirectory(prefix="ctxsearch-bench-stores-") as scratch:
        name = uuid.uuid4().hex[:8]
        targets: dict[str, Target] = {
            "faiss": Path(scratch) / "local",
            "pgvector": f"{database}{'&' if '?' in database else '?'}index=bench_{name}",
        }
        for backend, base in targets.items():
            for structure in ("flat", "hnsw"):
                target: Target = (
                    Path(f"{base}-{structure}")
                    if isinstance(base, Path)
                    else base.replace(f"bench_{name}", f"bench_{name}_{structure}")
                )
                build = _fill(target, vectors, structure)
                found, seconds = _query(target, probes, k)
                # chunk ids start at 1, in insertion order: id - 1 is the row of `vectors`
                recall = np.mean(
                    [
                        len({i - 1 for i in got} & set(truth.tolist())) / k
                        for got, truth in zip(found, exact, strict=True)
                    ]
                )
                rows.append(
                    {
                        "benchmark": f"{backend} {structure} @ {count:,}",
                        "backend": backend,
                        "structure": structure,
                        "vectors": count,
                        "build_seconds": round(build, 1),
                        "p50_ms": round(statistics.median(seconds) * 1000, 3),
                        "p95_ms": round(float(np.percentile(seconds, 95)) * 1000, 3),
                        f"recall@{k}": round(float(recall), 4),
                    }
                )
    baseline = next(r for r in rows if r["backend"] == "faiss" and r["structure"] == "hnsw")
    for row in rows:
        row["ratio"] = round(baseline["p50_ms"] / row["p50_ms"], 2)
        row["note"] = "ratio = FAISS HNSW p50 / this p50; each query in its own snapshot"
    return rows

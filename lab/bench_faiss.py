"""FAISS structures compared on synthetic 384-d vectors: Flat (exact) vs HNSW, IVF, IVF-PQ.

The vectors are clustered like sentence embeddings (a point is a random cluster centre
plus noise, L2-normalised; queries are fresh points drawn the same way), since uniform
random vectors have no neighbourhoods for an approximate index to find. Each structure
is timed building (on every core) and answering one query at a time on one thread, as a
search request does (p50, p99): with two threads, a single query waits on OpenMP's
hand-off whenever the other core is busy. Recall@10 is measured against Flat's exact
answers in the same run; memory is the serialised index size.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import faiss
import numpy as np

from indexer.store.index_types import HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH, HNSW_NEIGHBOURS

DIM = 384
CLUSTER_SIZE = 100  # vectors per cluster, on average
NOISE = 1.0  # per dimension, against centres of norm ~sqrt(DIM): cosine to centre ~0.7
IVF_NPROBE = 16
PQ_SUBVECTORS = 48  # 8 dimensions per 8-bit code
PQ_TRAINING_POINTS = 39 * 256  # FAISS's minimum for 256 centroids per sub-quantizer


def synthetic_vectors(count: int, queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`count` database and `queries` query vectors, clustered, unit length, float32."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, count // CLUSTER_SIZE), DIM), dtype=np.float32)

    def draw(n: int) -> np.ndarray:
        out = np.empty((n, DIM), dtype=np.float32)
        for first in range(0, n, 100_000):
            size = min(100_000, n - first)
            block = centres[rng.integers(len(centres), size=size)]
            block += NOISE * rng.standard_normal((size, DIM), dtype=np.float32)
            out[first : first + size] = block
        faiss.normalize_L2(out)
        return out

    return draw(count), draw(queries)


def _structures(count: int) -> dict[str, Callable[[], faiss.Index]]:
    nlist = max(16, int(math.sqrt(count)))

    def hnsw() -> faiss.Index:
        index = faiss.IndexHNSWFlat(DIM, HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        index.hnsw.efSearch = HNSW_EF_SEARCH
        return index

    def ivf() -> faiss.Index:
        return faiss.IndexIVFFlat(faiss.IndexFlatIP(DIM), DIM, nlist, faiss.METRIC_INNER_PRODUCT)

    def ivfpq() -> faiss.Index:
        quantizer = faiss.IndexFlatIP(DIM)
        return faiss.IndexIVFPQ(quantizer, DIM, nlist, PQ_SUBVECTORS, 8, faiss.METRIC_INNER_PRODUCT)

    return {"flat": lambda: faiss.IndexFlatIP(DIM), "hnsw": hnsw, "ivf": ivf, "ivfpq": ivfpq}


def _build(make: Callable[[], faiss.Index], vectors: np.ndarray) -> tuple[faiss.Index, float]:
    started = time.perf_counter()
    index = make()
    if not index.is_trained:
        sample = min(len(vectors), max(64 * index.nlist, PQ_TRAINING_POINTS))
        index.train(vectors[np.random.default_rng(1).choice(len(vectors), sample, replace=False)])
        index.nprobe = IVF_NPROBE
    index.add(vectors)
    return index, time.perf_counter() - started


def _one_at_a_time(index: faiss.Index, queries: np.ndarray, k: int) -> tuple[np.ndarray, list]:
    found, seconds = [], []
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    for row in range(len(queries)):
        started = time.perf_counter()
        _scores, ids = index.search(queries[row : row + 1], k)
        seconds.append(time.perf_counter() - started)
        found.append(ids[0])
    faiss.omp_set_num_threads(threads)
    return np.asarray(found), seconds


def faiss_rows(sizes: list[int], queries: int = 200, k: int = 10) -> list[dict[str, Any]]:
    """One row per (size, structure): build s, p50/p99 ms, recall@10, MB, ratios vs Flat."""
    rows = []
    for count in sizes:
        vectors, probes = synthetic_vectors(count, queries)
        exact: np.ndarray | None = None
        flat: dict[str, float] = {}
        for name, make in _structures(count).items():
            index, build_seconds = _build(make, vectors)
            found, seconds = _one_at_a_time(index, probes, k)
            if exact is None:
                exact = found
            recall = np.mean([len(set(a) & set(b)) / k for a, b in zip(found, exact, strict=True)])
            p50, p99 = (float(np.percentile(seconds, q)) * 1000 for q in (50, 99))
            megabytes = faiss.serialize_index(index).nbytes / 2**20
            if name == "flat":
                flat = {"p50": p50, "megabytes": megabytes}
            rows.append(
                {
                    "benchmark": f"faiss {name} @ {count:,}",
                    "vectors": count,
                    "structure": name,
                    "build_seconds": round(build_seconds, 2),
                    "p50_ms": round(p50, 3),
                    "p99_ms": round(p99, 3),
                    f"recall@{k}": round(float(recall), 4),
                    "megabytes": round(megabytes, 1),
                    "ratio": round(flat["p50"] / p50, 2),
                    "memory_vs_flat": round(megabytes / flat["megabytes"], 3),
                    "note": "ratio = Flat p50 / this p50 (query speed-up over exact search)",
                }
            )
            del index
    return rows

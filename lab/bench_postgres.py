"""PostgreSQL vector queries on real text's vectors: filtered HNSW and the per-query cost.

The vectors are the static space's (the model's token embeddings, averaged) of real
text: the sentences of a BEIR corpus, then pairs and triples of consecutive sentences
until there are `count`; the probes are the same encoder's vectors of the corpus's
queries. Such vectors crowd together as text does (unlike synthetic clusters, on which
every structure finds the exact top 10).

The chunks go in through the `Store` interface, 100 to a document, the documents spread
over nested folders so that `--under /bench/x` keeps 50% of them, `/bench/x/y` 10% and
`/bench/x/y/z` 1%. Instead of a corpus's text, a float32 `.npy` of static vectors can be
given (`vectors_path`, e.g. a million real passages' from `python -m
lab.passage_vectors`: no BEIR corpus has that many sentences); its first `count`
rows are the chunks. Each query runs in its own snapshot, as `Searcher` reads, and hydrates
its hits (`snapshot.chunks`), so a row's times are the store's whole share of a query.
Recall@10 is against the exact answers among the allowed chunks, computed with NumPy in
the same run; the ratio is the exact scan's p50 over this row's (above 1: faster).
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from indexer.reading.sources import Document
from indexer.splitting.chunking import Chunk
from indexer.store.backends import open_store
from indexer.store.base import CandidateSearch, NewDocument
from indexer.store.filters import make_filter
from indexer.store.index_types import HNSW_NEIGHBOURS
from indexer.store.manifest import Manifest
from indexer.store.postgres import nearest as pg_nearest
from indexer.store.postgres import vectors as pg_vectors

CHUNKS_PER_DOCUMENT = 100
SPACE = "static"
# (filter label, folder under which the documents are, share of documents)
FOLDERS = (("50%", "/bench/x"), ("10%", "/bench/x/y"), ("1%", "/bench/x/y/z"))


def folder_of(document: int) -> str:
    """Where document number `document` goes: 1% in x/y/z, 9% more in x/y, 40% more in x."""
    bucket = (document * 7919) % 100
    if bucket < 1:
        return "/bench/x/y/z"
    if bucket < 10:
        return "/bench/x/y"
    if bucket < 50:
        return "/bench/x"
    return "/bench/w"


def real_texts(corpus: Path, count: int) -> list[str]:
    """`count` texts from a BEIR corpus.jsonl: its sentences, then runs of 2 and 3."""
    documents = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    sentences_by_document = [_sentences(row.get("text", "")) for row in documents]
    texts: list[str] = []
    for run in (1, 2, 3, 4, 5):
        for sentences in sentences_by_document:
            texts += [" ".join(sentences[i : i + run]) for i in range(len(sentences) - run + 1)]
            if len(texts) >= count:
                return texts[:count]
    raise ValueError(f"{corpus} has too little text for {count:,} passages")


def _sentences(text: str) -> list[str]:
    import re

    return [piece for piece in re.split(r"(?<=[.!?])\s+", text) if piece.strip()]


def static_vectors(texts: list[str]) -> np.ndarray:
    """The default model's static-space vectors of `texts` (unit length)."""
    from indexer.encoders.loading import load_model
    from indexer.encoders.spaces import static_encoder

    return np.asarray(static_encoder(load_model()).encode(texts), dtype=np.float32)


def _manifest(dim: int, index_type: str = "hnsw") -> Manifest:
    return Manifest(
        model="static-bench", model_fingerprint="static-bench", pooling="mean", dim=dim,
        max_tokens=256, chunk_tokens=254, chunk_overlap=0, version="bench", spaces=[SPACE],
        index_type=index_type,
    )  # fmt: skip


def fill(
    url: str,
    matrix: np.ndarray,
    log: Callable[[str], None] = lambda _line: None,
    quantize: str = "none",
) -> tuple[float, list[str]]:
    """Put `matrix` in a new index at `url`, then build its graph in the form `quantize`
    (none: float32) as a second publish (a graph build that fails keeps the rows); the
    seconds both took and each chunk's folder (by chunk id - 1). `log` hears when the rows
    are in and when the graph is built (a long fill's stages)."""
    started = time.perf_counter()
    store = open_store(url, create=True)
    folders: list[str] = []
    try:
        with store.writer():
            store.initialise(_manifest(matrix.shape[1], "flat"))
            with store.change() as change:
                for first in range(0, len(matrix), CHUNKS_PER_DOCUMENT):
                    block = matrix[first : first + CHUNKS_PER_DOCUMENT]
                    number = first // CHUNKS_PER_DOCUMENT
                    folder = folder_of(number)
                    chunks = [Chunk(i, 0, 1, f"c{first + i}") for i in range(len(block))]
                    path = Path(f"{folder}/{number:07d}.txt")
                    document = Document(path, "", 0, 0, "0" * 64)
                    change.add_documents([NewDocument(document, chunks, {SPACE: block})])
                    folders += [folder] * len(block)
            log(f"{len(matrix):,} rows committed in {time.perf_counter() - started:.0f} s")
            with store.change() as change:
                change.set_index_type("hnsw")
                change.set_quantize(quantize)
        log(f"graph ({quantize}) built at {time.perf_counter() - started:.0f} s")
    finally:
        store.close()
    return time.perf_counter() - started, folders


def _run(url: str, probes: np.ndarray, k: int, under: str | None, exact: bool):
    """Each probe in its own snapshot, searched (exact, or as the store chooses) with its
    hits' rows, as `Searcher` asks for its candidates; the ids found and the seconds per
    query."""
    store = open_store(url)
    where = make_filter(under=under) if under else None
    found, seconds = [], []
    chosen = pg_nearest.EXACT_UP_TO
    # the store's own threshold, or one nothing reaches: the exact scan (the baseline)
    pg_nearest.EXACT_UP_TO = pg_nearest.ALWAYS_EXACT if exact else chosen
    try:
        for row in [probes[0], *probes]:  # the first one warms the connection
            started = time.perf_counter()
            with store.snapshot() as snapshot:
                hits = snapshot.search(CandidateSearch({SPACE: row}, None, k, where)).vector[SPACE]
            seconds.append(time.perf_counter() - started)
            found.append([chunk_id for chunk_id, _ in hits])
    finally:
        pg_nearest.EXACT_UP_TO = chosen
        store.close()
    return found[1:], seconds[1:]


def postgres_rows(
    corpus: Path | None,
    queries_path: Path,
    postgres: str,
    count: int = 100_000,
    queries: int = 200,
    k: int = 10,
    vectors_path: Path | None = None,
    log: Callable[[str], None] = lambda _line: None,
    forms: bool = True,
    quantize: str = "none",
    prewarm_server: bool = False,
) -> list[dict[str, Any]]:
    """p50/p95 ms and recall@k of PostgreSQL vector queries (the database at the URL
    `postgres`), unfiltered and under each filter, exact and through the graph, on the
    static vectors of real text (of `corpus`, or the first `count` rows of `vectors_path`)
    with the graph in the form `quantize`, then (with `forms`) a row per graph form
    (`form_rows`: each a rebuild); with `prewarm_server`, the table and graph are read into
    the server's cache before timing; `log` hears each stage and row."""
    claims = [json.loads(line)["text"] for line in queries_path.read_text().splitlines()]
    if vectors_path is not None:
        from lab.bench_quantize import read_vectors

        matrix = np.ascontiguousarray(read_vectors(vectors_path)[:count])
        if len(matrix) < count:
            raise ValueError(f"{vectors_path} has {len(matrix):,} vectors, not {count:,}")
    else:
        assert corpus is not None, "a corpus or a vectors file"
        matrix = static_vectors(real_texts(corpus, count))
    probes = static_vectors(claims[:queries])
    rows: list[dict[str, Any]] = []
    log(f"the table and graph need about {cache_for(count, matrix.shape[1])} of shared_buffers")
    url = f"{postgres}{'&' if '?' in postgres else '?'}index=bench_pg_{uuid.uuid4().hex[:8]}"
    build, folders = fill(url, matrix, log, quantize)
    if prewarm_server:
        log(f"prewarmed {prewarm(url):,} pages")
    kept = np.asarray(folders)
    for label, under in (("none", None), *FOLDERS):
        allowed = np.ones(len(kept), bool) if under is None else np.char.startswith(kept, under)
        ids = np.flatnonzero(allowed)
        scores = probes @ matrix[ids].T
        truth = [set((ids[np.argsort(-row)[:k]] + 1).tolist()) for row in scores]
        for how in ("exact", "graph"):
            found, seconds = _run(url, probes, k, under, exact=how == "exact")
            recall = np.mean([len(set(f) & t) / k for f, t in zip(found, truth, strict=True)])
            rows.append(
                {
                    "benchmark": f"pgvector {how}, filter {label} @ {count:,}",
                    "filter": label,
                    "allowed": int(allowed.sum()),
                    "how": how,
                    "graph": FORM_NAMES[quantize],
                    "build_seconds": round(build, 1),
                    "p50_ms": round(statistics.median(seconds) * 1000, 3),
                    "p95_ms": round(float(np.percentile(seconds, 95)) * 1000, 3),
                    f"recall@{k}": round(float(recall), 4),
                }
            )
            log(json.dumps(rows[-1]))
    for row in rows:
        baseline = next(r for r in rows if r["filter"] == row["filter"] and r["how"] == "exact")
        row["ratio"] = round(baseline["p50_ms"] / row["p50_ms"], 2)
        row["note"] = "ratio = the exact scan's p50 / this p50, same filter; snapshot + hydration"
    truth = truths(matrix, probes, k)
    for row in form_rows(url, probes, truth, k, warm=prewarm_server) if forms else []:
        log(json.dumps(row))
        rows.append(row)
    return rows


def prewarm(url: str) -> int:
    """Write what the last build left dirty (CHECKPOINT: else the server writes it while
    the queries are timed), then read the space's table and graph into `shared_buffers`
    (pg_prewarm, as docs/postgres.md tells a server after a restart); the pages read. The
    extension is made in the first index's schema it is asked from: later indexes call
    it there."""
    from sqlalchemy import text

    from indexer.store.postgres.database import quoted

    store = open_store(url)
    try:
        with store.engine.begin() as connection:
            connection.execute(text("CHECKPOINT"))
            connection.execute(text("CREATE EXTENSION IF NOT EXISTS pg_prewarm"))
            schema = connection.execute(
                text("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                     "ON n.oid = e.extnamespace WHERE e.extname = 'pg_prewarm'")
            ).scalar_one()  # fmt: skip
            names = connection.execute(
                text("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
                     "AND tablename = :t"),
                {"t": pg_vectors.table_name(SPACE)},
            ).scalars().all()  # fmt: skip
            return sum(
                connection.execute(
                    text(f"SELECT {quoted(schema)}.pg_prewarm(CAST(:r AS regclass))"),
                    {"r": name},
                ).scalar_one()
                for name in [pg_vectors.table_name(SPACE), *names]
            )
    finally:
        store.close()


def cache_for(count: int, dim: int) -> str:
    """`shared_buffers` that holds the space table and its float32 graph, +20%
    (docs/postgres.md: a graph walk is fast only from PostgreSQL's own cache)."""
    table = 4 * dim + 104  # a row: its vector, chunk id and tuple header, page slack
    graph = 4 * dim + 2 * HNSW_NEIGHBOURS * 8 + 64  # pgvector's graph tuple: value, links
    return f"{max(128, int(count * (table + graph) * 1.2 / 2**20) + 1)}MB"


def truths(matrix: np.ndarray, probes: np.ndarray, k: int) -> list[set[int]]:
    """The chunk ids (row + 1) of each probe's exact float32 top `k`."""
    scores = probes @ np.asarray(matrix).T
    return [set((np.argsort(-row)[:k] + 1).tolist()) for row in scores]


# The float32 graph last: the index comes with it, and each form's build time is a rebuild.
FORMS = ("halfvec", "binary", "none")
FORM_NAMES = {"none": "float32", "halfvec": "halfvec", "binary": "binary + float32 re-rank"}


def form_rows(
    url: str, probes: np.ndarray, truth: list[set[int]], k: int, warm: bool = False
) -> list[dict[str, Any]]:
    """One row per form of the graph (`index --quantize`: float32, halfvec, binary) on the
    index at `url`: the publish that made the graph (build s), table + indexes bytes per
    vector, recall@k against exact float32, p50/p99 ms of the store's search (snapshot,
    search, hydration), and the ratios against the float32 graph's row. With `warm` (a
    server of the benchmark's own) each new graph is read into the cache first, as after
    the fill: every row is a prewarmed server's, as docs/postgres.md sizes one."""
    from indexer.store.postgres.vectors import table_name

    rows: list[dict[str, Any]] = []
    for form in FORMS:
        store = open_store(url)
        try:
            started = time.perf_counter()
            with store.writer(), store.change() as change:
                change.set_index_type("hnsw")
                change.set_quantize(form)
            build = time.perf_counter() - started
            with store.snapshot() as snapshot:
                table = table_name(SPACE)
                [(vectors, held)] = snapshot.rows(
                    "SELECT count(*), pg_relation_size(CAST(:t AS regclass)) "
                    "+ pg_indexes_size(CAST(:t AS regclass)) FROM " + table,
                    {"t": table},
                )
        finally:
            store.close()
        if warm:
            prewarm(url)
        found, seconds = _run(url, probes, k, None, exact=False)
        recall = np.mean([len(set(f) & t) / k for f, t in zip(found, truth, strict=True)])
        rows.append(
            {
                "benchmark": f"pgvector graph {FORM_NAMES[form]} @ {vectors:,}",
                "filter": "none",
                "how": f"graph-{form}",
                "quantize": form,
                "build_seconds": round(build, 1),
                "bytes_per_vector": round(held / vectors),
                "p50_ms": round(statistics.median(seconds) * 1000, 3),
                "p95_ms": round(float(np.percentile(seconds, 95)) * 1000, 3),
                "p99_ms": round(float(np.percentile(seconds, 99)) * 1000, 3),
                f"recall@{k}": round(float(recall), 4),
                "load": round(os.getloadavg()[0], 1),
            }
        )
    baseline = next(row for row in rows if row["quantize"] == "none")
    for row in rows:
        row["ratio"] = round(baseline["p50_ms"] / row["p50_ms"], 2)
        row["bytes_ratio"] = round(row["bytes_per_vector"] / baseline["bytes_per_vector"], 3)
        row["note"] = (
            "ratio = the float32 graph's p50 / this p50; bytes = table + its indexes "
            "(chunk ids, float32 column, graph) per vector"
        )
    return rows

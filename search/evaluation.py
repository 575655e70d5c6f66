"""Retrieval evaluation on BEIR-layout data: every method, one forward pass, cached.

The corpus is encoded once with all hidden states (every pooling, every layer), once
with the static table, and each method's vectors go into an exact FAISS index kept in a
work directory under a key made of the corpus content and the model: a second run
re-encodes nothing. Documents are encoded as the published MTEB figures do it: title and
text, cut to the model's window (the number of documents cut is reported).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from indexer.encoders.layers import LayerwiseEncoder
from indexer.encoders.loading import LoadedModel, load_model
from indexer.encoders.static import StaticEncoder
from indexer.errors import InvalidQuery
from search.datasets import RetrievalDataset, load_retrieval_dataset
from search.metrics import mean_metrics

CACHE_FORMAT = 1
TOP_K = 100
LATENCY_QUERIES = 50
Progress = Callable[[str, int, int], None]


def default_work_dir() -> Path:
    """$CTXSEARCH_EVAL_CACHE, else $XDG_CACHE_HOME/ctxsearch/eval (~/.cache/ctxsearch/eval)."""
    if os.environ.get("CTXSEARCH_EVAL_CACHE"):
        return Path(os.environ["CTXSEARCH_EVAL_CACHE"])
    cache_home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache_home) / "ctxsearch" / "eval"


def available_methods(loaded: LoadedModel) -> list[str]:
    """Every method this model offers: static, the poolings, then each layer."""
    return ["static", *LayerwiseEncoder(loaded).methods]


def evaluate_retrieval(
    dataset_dir: Path,
    split: str = "test",
    methods: Sequence[str] | None = None,
    work_dir: Path | None = None,
    model: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """nDCG@10, MRR@10, Recall@100 and MAP@100 of each method, with speed and size."""
    started = time.perf_counter()
    report = progress or (lambda _stage, _done, _total: None)
    dataset = load_retrieval_dataset(dataset_dir, split)
    loaded = load_model(model)
    offered = available_methods(loaded)
    chosen = _expand_layers(methods, offered) if methods else offered
    unknown = [m for m in chosen if m not in offered]
    if unknown:
        raise InvalidQuery(
            f"unknown method(s) {', '.join(unknown)}: choose from {', '.join(offered)}"
        )
    cache = _CorpusCache(dataset, loaded, work_dir or default_work_dir())
    cache.ensure(chosen, report)
    query_ids = list(dataset.queries)
    query_texts = [dataset.queries[q] for q in query_ids]
    query_vectors = _encode_queries(loaded, query_texts, chosen)
    latencies = _query_latencies(loaded, cache, query_texts[:LATENCY_QUERIES], chosen)
    results = {}
    for method in chosen:
        index = cache.index(method)
        scores, rows = index.search(query_vectors[method], min(TOP_K, index.ntotal))
        run = {
            query_id: {
                cache.doc_ids[row]: float(score)
                for score, row in zip(s, r, strict=True)
                if row >= 0
            }
            for query_id, s, r in zip(query_ids, scores, rows, strict=True)
        }
        results[method] = {
            **{name: round(value, 4) for name, value in mean_metrics(run, dataset.qrels).items()},
            "docs_per_second": cache.docs_per_second(method),
            "query_ms": latencies[method],
            "index_bytes": cache.path(method).stat().st_size,
            **_method_kind(method),
        }
    return {
        "dataset": dataset.name,
        "split": split,
        "model": loaded.name,
        "documents": len(dataset.corpus),
        "queries": len(query_ids),
        "max_tokens": loaded.max_tokens,
        "truncated_documents": cache.meta["truncated_documents"],
        "cache": str(cache.directory),
        "wall_seconds": round(time.perf_counter() - started, 2),
        "methods": results,
    }


def _expand_layers(methods: Sequence[str], offered: list[str]) -> list[str]:
    """The methods asked for, with `layers` standing for every layer, without repeats."""
    chosen: list[str] = []
    for method in methods:
        names = [m for m in offered if m.startswith("layer-")] if method == "layers" else [method]
        chosen += [name for name in names if name not in chosen]
    return chosen


def _method_kind(method: str) -> dict[str, Any]:
    if method == "static":
        return {"kind": "static"}
    if method.startswith("layer-"):
        return {"kind": "layer", "layer": int(method.removeprefix("layer-"))}
    return {"kind": "pooling"}


class _CorpusCache:
    """Exact FAISS indexes of a corpus, one per method, under a content-and-model key."""

    def __init__(self, dataset: RetrievalDataset, loaded: LoadedModel, work_dir: Path):
        key = hashlib.sha256(
            f"{CACHE_FORMAT}:{dataset.content_hash()}:{loaded.fingerprint}:{loaded.max_tokens}".encode()
        ).hexdigest()[:16]
        self.dataset = dataset
        self.loaded = loaded
        self.directory = Path(work_dir) / f"{dataset.name}-{key}"
        self.doc_ids = list(dataset.corpus)
        meta_file = self.directory / "meta.json"
        self.meta: dict[str, Any] = (
            json.loads(meta_file.read_text()) if meta_file.exists() else {"seconds": {}}
        )
        self.meta.setdefault("truncated_documents", self._count_truncated())

    def path(self, method: str) -> Path:
        return self.directory / f"{method}.faiss"

    def index(self, method: str) -> faiss.Index:
        return faiss.read_index(str(self.path(method)))

    def docs_per_second(self, method: str) -> float | None:
        group = "static" if method == "static" else "contextual"
        seconds = self.meta["seconds"].get(group)
        return round(len(self.doc_ids) / seconds, 1) if seconds else None

    def ensure(self, methods: Sequence[str], report: Progress) -> None:
        """Encode the corpus for whatever methods are not cached yet."""
        missing = [m for m in methods if not self.path(m).exists()]
        if not missing:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        texts = [self.dataset.corpus[doc_id] for doc_id in self.doc_ids]
        if "static" in missing:
            started = time.perf_counter()
            self._write({"static": StaticEncoder(self.loaded).encode(texts)})
            self.meta["seconds"]["static"] = time.perf_counter() - started
        if any(m != "static" for m in missing):
            done = 0

            def advance(count: int) -> None:
                nonlocal done
                done += count
                report("encode", done, len(texts))

            started = time.perf_counter()
            vectors = LayerwiseEncoder(self.loaded).encode(texts, progress=advance)
            self.meta["seconds"]["contextual"] = time.perf_counter() - started
            self._write(vectors)
        (self.directory / "meta.json").write_text(json.dumps(self.meta, indent=2))

    def _write(self, vectors: dict[str, np.ndarray]) -> None:
        for method, matrix in vectors.items():
            index = faiss.IndexFlatIP(matrix.shape[1])
            index.add(matrix)
            temporary = self.path(method).with_suffix(".tmp")
            faiss.write_index(index, str(temporary))
            os.replace(temporary, self.path(method))

    def _count_truncated(self) -> int:
        limit = self.loaded.max_tokens
        count = 0
        texts = list(self.dataset.corpus.values())
        for first in range(0, len(texts), 256):
            encoded = self.loaded.tokenizer(texts[first : first + 256], verbose=False)
            count += sum(len(ids) > limit for ids in encoded["input_ids"])
        return count


def _encode_queries(
    loaded: LoadedModel, texts: list[str], methods: Sequence[str]
) -> dict[str, np.ndarray]:
    vectors: dict[str, np.ndarray] = {}
    if "static" in methods:
        vectors["static"] = StaticEncoder(loaded).encode(texts)
    if any(m != "static" for m in methods):
        vectors.update(LayerwiseEncoder(loaded).encode(texts))
    return vectors


def _query_latencies(
    loaded: LoadedModel, cache: _CorpusCache, texts: list[str], methods: Sequence[str]
) -> dict[str, float]:
    """Median milliseconds to encode one query alone and search the exact index."""
    from indexer.encoders.transformer import ContextualEncoder

    latencies = {}
    static = StaticEncoder(loaded)
    for method in methods:
        index = cache.index(method)
        if method == "static":
            encode = static.encode
        elif method.startswith("layer-"):
            layerwise = LayerwiseEncoder(loaded)
            encode = lambda batch, name=method, enc=layerwise: enc.encode(batch)[name]  # noqa: E731
        else:
            pooling = {"contextual": "mean"}.get(method, method)
            encode = ContextualEncoder(loaded, pooling).encode
        timings = []
        for text in texts:
            started = time.perf_counter()
            index.search(encode([text]), min(TOP_K, index.ntotal))
            timings.append((time.perf_counter() - started) * 1000)
        latencies[method] = round(statistics.median(timings), 2) if timings else None
    return latencies

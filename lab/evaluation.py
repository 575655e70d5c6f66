"""Retrieval evaluation on BEIR-layout data: every method, one forward pass, cached.

The corpus is encoded once with all hidden states (every pooling, every layer), once
with each static method (the token table, GloVe, Word2Vec and FastText trained on the
corpus, a distilled Model2Vec), and each method's vectors go into an exact FAISS index
kept in a work directory under a key made of the corpus content and the model: a second
run re-encodes nothing. Trained word vectors and distilled models are cached there too.
Documents are encoded as the published MTEB figures do it: title and text, cut to the
model's window (the number of documents cut is reported).
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

from indexer.config import eval_cache_dir
from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel, load_model
from indexer.errors import InvalidQuery
from indexer.store.local.fts import TextCollection
from lab.datasets import content_hash
from lab.encoders.layers import LayerwiseEncoder
from lab.encoders.static_methods import (
    STATIC_METHODS,
    missing_note,
    missing_packages,
    require_packages,
    static_encoder,
)
from lab.fusion_variants import linear_fusion, reciprocal_rank_fusion
from search.completion import exact_scores
from search.fusion import FUSION_DEPTH, hybrid_fusion, zscore_fusion
from search.judged.collection import RetrievalDataset, load_retrieval_dataset
from search.judged.metrics import mean_metrics

CACHE_FORMAT = 1
TOP_K = 100
LATENCY_QUERIES = 50
Progress = Callable[[str, int, int], None]


def static_models_dir(work_dir: Path | None = None) -> Path:
    """Where trained word vectors and distilled models are cached, inside the work dir."""
    return Path(work_dir or eval_cache_dir()) / "static-models"


# `hybrid` is what `query --mode hybrid` does (adaptive z-score fusion); the others name
# a fusion explicitly: `hybrid-linear` is 0.1's hybrid (min-max, 0.4 dense), `hybrid-rrf`
# reciprocal rank fusion (k = 1), `hybrid-zscore` z-scores at a fixed 0.5.
FUSED_METHODS = ("hybrid", "hybrid-rrf", "hybrid-linear", "hybrid-zscore")


def available_methods(loaded: LoadedModel) -> list[str]:
    """Every method: the static ones, the poolings, each layer, lexical, the hybrids."""
    return [*STATIC_METHODS, *LayerwiseEncoder(loaded).methods, "lexical", *FUSED_METHODS]


def default_methods(loaded: LoadedModel) -> tuple[list[str], list[str]]:
    """What `eval` runs when no method is named (every method), and what it leaves out for
    want of a package."""
    offered = available_methods(loaded)
    unavailable = [m for m in offered if m in STATIC_METHODS and missing_packages(m)]
    return [m for m in offered if m not in unavailable], unavailable


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
    dataset = load_retrieval_dataset(dataset_dir, split)
    loaded = load_model(model)
    offered = available_methods(loaded)
    left_out: list[str] = []
    if methods:
        chosen = _expand_layers(methods, offered)
    else:
        chosen, left_out = default_methods(loaded)
    unknown = [m for m in chosen if m not in offered]
    if unknown:
        raise InvalidQuery(
            f"unknown method(s) {', '.join(unknown)}: choose from {', '.join(offered)}"
        )
    require_packages(chosen)
    retrieval = Retrieval(dataset, loaded, work_dir, progress)
    lists = retrieval.ranked_lists(chosen)
    latencies = retrieval.latencies(chosen)
    results = {}
    for method in chosen:
        results[method] = {
            **{
                name: round(value, 4)
                for name, value in mean_metrics(retrieval.run(lists[method]), dataset.qrels).items()
            },
            "docs_per_second": retrieval.cache.docs_per_second(method),
            "query_ms": latencies[method],
            "index_bytes": retrieval.cache.index_bytes(method),
            **_method_kind(method),
            **retrieval.static_details(method),
        }
    return {
        "dataset": dataset.name,
        "split": split,
        "model": loaded.name,
        "documents": len(dataset.corpus),
        "queries": len(dataset.queries),
        "max_tokens": loaded.max_tokens,
        "truncated_documents": retrieval.cache.meta["truncated_documents"],
        "cache": str(retrieval.cache.directory),
        "wall_seconds": round(time.perf_counter() - started, 2),
        "methods": results,
        **({"left_out": left_out, "note": missing_note(left_out)} if left_out else {}),
    }


RankedLists = dict[str, list[tuple[int, float]]]


class Retrieval:
    """Ranked lists of corpus rows for every query of a dataset, by method."""

    def __init__(
        self,
        dataset: RetrievalDataset,
        loaded: LoadedModel,
        work_dir: Path | None = None,
        progress: Progress | None = None,
    ):
        self.dataset = dataset
        self.loaded = loaded
        self.cache = _CorpusCache(dataset, loaded, work_dir or eval_cache_dir())
        self.progress = progress or (lambda _stage, _done, _total: None)
        self.query_ids = list(dataset.queries)
        self.query_texts = [dataset.queries[q] for q in self.query_ids]

    def ranked_lists(self, methods: Sequence[str], depth: int = TOP_K) -> dict[str, RankedLists]:
        """{method: {query id: [(row, score), ...] best first}}, `depth` deep.

        A fused method fuses lists as deep as `fusion_depth` says (`hybrid`: as deep as
        `query --mode hybrid` searches).
        """
        wanted = depth
        depth = max([depth, *(fusion_depth(m) for m in methods if m in FUSED_METHODS)])
        base = _base_methods(methods)
        self.cache.ensure(base, self.progress)
        vectors = _encode_queries(self.loaded, self.cache, self.query_texts, base)
        lists: dict[str, RankedLists] = {}
        for method in base:
            if method == "lexical":
                space = self.cache.lexical_space()
                lists[method] = {
                    q: space.search(t, depth)
                    for q, t in zip(self.query_ids, self.query_texts, strict=True)
                }
                continue
            index = self.cache.index(method)
            scores, rows = index.search(vectors[method], min(depth, index.ntotal))
            lists[method] = {
                query_id: [
                    (int(r), float(s)) for s, r in zip(row_scores, row_ids, strict=True) if r >= 0
                ]
                for query_id, row_scores, row_ids in zip(self.query_ids, scores, rows, strict=True)
            }
        for method in (m for m in methods if m in FUSED_METHODS):
            cut = fusion_depth(method)
            dense = {q: pairs[:cut] for q, pairs in lists["contextual"].items()}
            lexical = {q: pairs[:cut] for q, pairs in lists["lexical"].items()}
            exact = (
                self.exact_scores(dense, lexical, cut, vectors["contextual"])
                if method == "hybrid"
                else {}
            )
            lists[method] = {
                query_id: fuse(
                    method,
                    dense[query_id],
                    lexical[query_id],
                    *exact.get(query_id, ({}, {})),
                    query=text,
                )
                for query_id, text in zip(self.query_ids, self.query_texts, strict=True)
            }
        for method in base:
            lists[method] = {query: pairs[:wanted] for query, pairs in lists[method].items()}
        return lists

    def exact_scores(
        self,
        dense: RankedLists,
        lexical: RankedLists,
        depth: int,
        vectors: np.ndarray | None = None,
    ) -> dict[str, tuple[dict[int, float], dict[int, float]]]:
        """For each query, what hybrid search looks up before fusing (`search.completion`):
        the cosines of the rows only the lexical list holds, and the BM25 of the rows only
        the dense list holds (asked only of a lexical list `depth` long). `vectors`: the
        queries' contextual vectors, if already encoded."""
        if vectors is None:
            encoded = _encode_queries(self.loaded, self.cache, self.query_texts, ["contextual"])
            vectors = encoded["contextual"]
        lookup = ExactScores(self.cache)
        queries = zip(self.query_ids, self.query_texts, vectors, strict=True)
        return {
            query_id: exact_scores(lookup, text, vector, dense[query_id], lexical[query_id], depth)
            for query_id, text, vector in queries
        }

    def run(self, ranked: RankedLists) -> dict[str, dict[str, float]]:
        """Ranked rows as a trec-style run: {query id: {document id: score}}."""
        return {
            query_id: {self.cache.doc_ids[row]: score for row, score in pairs[:TOP_K]}
            for query_id, pairs in ranked.items()
        }

    def latencies(self, methods: Sequence[str]) -> dict[str, float | None]:
        """Median milliseconds to answer one query alone, per method."""
        return _query_latencies(
            self.loaded, self.cache, self.query_texts[:LATENCY_QUERIES], methods
        )

    def static_details(self, method: str) -> dict[str, Any]:
        """What a static method cost to set up, and how many query words it has vectors for.

        `setup_seconds` is the one-off training (word2vec, fasttext: on this corpus) or
        distillation (model2vec), measured when it ran, not counted in `docs_per_second`.
        """
        if method not in STATIC_METHODS:
            return {}
        encoder = self.cache.encoder(method)
        info = getattr(encoder, "info", {})
        details: dict[str, Any] = {
            "setup_seconds": info.get("train_seconds", info.get("distil_seconds")),
            "dim": encoder.dim,
        }
        if hasattr(encoder, "coverage"):
            details["query_word_coverage"] = round(encoder.coverage(self.query_texts), 4)
        return details


def fusion_depth(method: str) -> int:
    """How deep each side is read before a fused method fuses (0.1's methods: TOP_K)."""
    return FUSION_DEPTH if method == "hybrid" else TOP_K


class ExactScores:
    """The exact scores hybrid search looks up (`search.completion`), over a corpus cache:
    rows stand for chunks."""

    def __init__(self, cache: _CorpusCache):
        self.index = cache.index("contextual")
        self.lexical = cache.lexical_space()

    def similarities(self, _space: str, query: np.ndarray, rows: list[int]) -> dict[int, float]:
        """The cosine of the query vector with each row's contextual vector."""
        found = self.index.reconstruct_batch(np.array(rows, dtype=np.int64))
        return dict(zip(rows, (found @ query).tolist(), strict=True))

    def lexical_scores(self, query: str, rows: list[int]) -> dict[int, float]:
        """The BM25 of each row that holds a query term."""
        return self.lexical.scores(query, rows)


def fuse(
    method: str,
    dense: list[tuple[int, float]],
    lexical: list[tuple[int, float]],
    cosines: dict[int, float] | None = None,
    bm25: dict[int, float] | None = None,
    query: str = "",
):
    """Fuse a dense and a lexical list the way `method` does (`hybrid`: completed by the
    exact scores given, see `ExactScores`, and weighing whether `query` is a question)."""
    if method == "hybrid-rrf":
        return reciprocal_rank_fusion({"contextual": dense, "lexical": lexical})
    if method == "hybrid-linear":
        return linear_fusion(dense, lexical, 0.4)
    if method == "hybrid-zscore":
        return zscore_fusion(dense, lexical, 0.5)
    return hybrid_fusion(dense, lexical, None, cosines, bm25, query)


def _base_methods(methods: Sequence[str]) -> list[str]:
    """The methods that retrieve on their own, fused methods replaced by what they fuse."""
    base: list[str] = []
    for method in methods:
        needed = ["contextual", "lexical"] if method in FUSED_METHODS else [method]
        base += [name for name in needed if name not in base]
    return base


def _expand_layers(methods: Sequence[str], offered: list[str]) -> list[str]:
    """The methods asked for, with `layers` standing for every layer, without repeats."""
    chosen: list[str] = []
    for method in methods:
        names = [m for m in offered if m.startswith("layer-")] if method == "layers" else [method]
        chosen += [name for name in names if name not in chosen]
    return chosen


def _method_kind(method: str) -> dict[str, Any]:
    if method in STATIC_METHODS:
        return {"kind": "static"}
    if method == "lexical":
        return {"kind": method}
    if method in FUSED_METHODS:
        return {"kind": "hybrid"}
    if method.startswith("layer-"):
        return {"kind": "layer", "layer": int(method.removeprefix("layer-"))}
    return {"kind": "pooling"}


class _CorpusCache:
    """Exact FAISS indexes of a corpus, one per method, under a content-and-model key."""

    def __init__(self, dataset: RetrievalDataset, loaded: LoadedModel, work_dir: Path):
        key = hashlib.sha256(
            f"{CACHE_FORMAT}:{content_hash(dataset)}:{loaded.fingerprint}:{loaded.max_tokens}".encode()
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
        self.encoders: dict[str, Encoder] = {}

    def encoder(self, method: str, report: Progress | None = None) -> Encoder:
        """The encoder of a static method; word2vec and fasttext are trained on this corpus."""
        if method not in self.encoders:
            self.encoders[method] = static_encoder(
                method,
                self.loaded,
                static_models_dir(self.directory.parent),
                corpus=[self.dataset.corpus[doc_id] for doc_id in self.doc_ids],
                progress=(lambda done, total: report(_setup_stage(method), done, total))
                if report
                else None,
            )
        return self.encoders[method]

    def path(self, method: str) -> Path:
        """The cached index of a method that retrieves on its own."""
        if method == "lexical":
            return self.directory / "lexical.sqlite"
        return self.directory / f"{method}.faiss"

    def index(self, method: str) -> faiss.Index:
        """The exact FAISS index of a dense method (row = position in `doc_ids`)."""
        return faiss.read_index(str(self.path(method)))

    def lexical_space(self) -> TextCollection:
        """The corpus's BM25 space, the same FTS5 setup as an index's lexical space."""
        return TextCollection(self.path("lexical"))

    def index_bytes(self, method: str) -> int:
        """The size on disk of what the method searches."""
        return sum(self.path(m).stat().st_size for m in _base_methods([method]))

    def docs_per_second(self, method: str) -> float | None:
        """Corpus documents indexed per second (dense: one shared pass for all methods)."""
        own = {m: [m] for m in (*STATIC_METHODS, "lexical")}
        groups = own.get(method, ["contextual"])
        if method in FUSED_METHODS:
            groups = ["contextual", "lexical"]
        seconds = [self.meta["seconds"].get(group) for group in groups]
        if not all(seconds):
            return None
        return round(len(self.doc_ids) / sum(seconds), 1)

    def ensure(self, methods: Sequence[str], report: Progress) -> None:
        """Encode the corpus for whatever methods are not cached yet."""
        missing = [m for m in methods if not self.path(m).exists()]
        if not missing:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        texts = [self.dataset.corpus[doc_id] for doc_id in self.doc_ids]
        if "lexical" in missing:
            started = time.perf_counter()
            self._write_lexical(texts)
            self.meta["seconds"]["lexical"] = time.perf_counter() - started
        for method in (m for m in STATIC_METHODS if m in missing):
            encoder = self.encoder(method, report)
            started = time.perf_counter()
            self._write({method: encoder.encode(texts)})
            self.meta["seconds"][method] = time.perf_counter() - started
        if any(m not in (*STATIC_METHODS, "lexical") for m in missing):
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

    def _write_lexical(self, texts: list[str]) -> None:
        temporary = self.path("lexical").with_suffix(".tmp")
        TextCollection.write(temporary, texts).close()
        os.replace(temporary, self.path("lexical"))

    def _count_truncated(self) -> int:
        limit = self.loaded.max_tokens
        count = 0
        texts = list(self.dataset.corpus.values())
        for first in range(0, len(texts), 256):
            encoded = self.loaded.tokenizer(texts[first : first + 256], verbose=False)
            count += sum(len(ids) > limit for ids in encoded["input_ids"])
        return count


def _setup_stage(method: str) -> str:
    if method == "model2vec":
        return "Distilling model2vec (minutes)"
    return f"Training {method} (epochs)"


def _encode_queries(
    loaded: LoadedModel, cache: _CorpusCache, texts: list[str], methods: Sequence[str]
) -> dict[str, np.ndarray]:
    vectors: dict[str, np.ndarray] = {}
    for method in (m for m in STATIC_METHODS if m in methods):
        vectors[method] = cache.encoder(method).encode(texts)
    if any(m not in (*STATIC_METHODS, "lexical") for m in methods):
        vectors.update(LayerwiseEncoder(loaded).encode(texts))
    return vectors


def _query_latencies(
    loaded: LoadedModel, cache: _CorpusCache, texts: list[str], methods: Sequence[str]
) -> dict[str, float | None]:
    """Median milliseconds to answer one query alone (encode, search, fuse), per method."""
    latencies: dict[str, float | None] = {}
    for method in methods:
        answer = _single_query_answerer(loaded, cache, method)
        timings = []
        for query in texts:
            started = time.perf_counter()
            answer(query)
            timings.append((time.perf_counter() - started) * 1000)
        latencies[method] = round(statistics.median(timings), 2) if timings else None
    return latencies


def _single_query_answerer(
    loaded: LoadedModel, cache: _CorpusCache, method: str, depth: int = TOP_K
) -> Callable[[str], list[tuple[int, float]]]:
    """A function that answers one query the way `method` does (`depth` deep)."""
    if method == "lexical":
        space = cache.lexical_space()
        return lambda query: space.search(query, depth)
    if method == "hybrid":
        return _hybrid_answerer(loaded, cache)
    if method in FUSED_METHODS:
        dense = _single_query_answerer(loaded, cache, "contextual", fusion_depth(method))
        lexical = _single_query_answerer(loaded, cache, "lexical", fusion_depth(method))
        return lambda query: fuse(method, dense(query), lexical(query))
    encode = _single_query_encoder(loaded, cache, method)
    search = _vector_search(cache, method, depth)
    return lambda query: search(encode(query))


def _hybrid_answerer(
    loaded: LoadedModel, cache: _CorpusCache
) -> Callable[[str], list[tuple[int, float]]]:
    """`hybrid` for one query: one encoding, both searches, the exact scores, the fusion."""
    depth = fusion_depth("hybrid")
    encode = _single_query_encoder(loaded, cache, "contextual")
    dense = _vector_search(cache, "contextual", depth)
    lexical = cache.lexical_space()
    lookup = ExactScores(cache)

    def answer(query: str) -> list[tuple[int, float]]:
        vector = encode(query)
        found_dense, found_lexical = dense(vector), lexical.search(query, depth)
        scores = exact_scores(lookup, query, vector[0], found_dense, found_lexical, depth)
        return fuse("hybrid", found_dense, found_lexical, *scores, query=query)

    return answer


def _vector_search(
    cache: _CorpusCache, method: str, depth: int
) -> Callable[[np.ndarray], list[tuple[int, float]]]:
    index = cache.index(method)

    def search(vector: np.ndarray) -> list[tuple[int, float]]:
        scores, rows = index.search(vector, min(depth, index.ntotal))
        return [(int(r), float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]

    return search


def _single_query_encoder(
    loaded: LoadedModel, cache: _CorpusCache, method: str
) -> Callable[[str], np.ndarray]:
    from indexer.encoders.transformer import ContextualEncoder

    if method in STATIC_METHODS:
        static = cache.encoder(method)
        return lambda query: static.encode([query])
    if method.startswith("layer-"):
        layerwise = LayerwiseEncoder(loaded)
        return lambda query: layerwise.encode([query])[method]
    contextual = ContextualEncoder(loaded, {"contextual": "mean"}.get(method, method))
    return lambda query: contextual.encode([query])

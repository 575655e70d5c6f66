"""The read path: encode a query, search one space or fuse several, hydrate hits from SQL."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from indexer.errors import IndexLocked, InvalidQuery
from indexer.store.index import StoredIndex
from indexer.store.lexical import SqliteLexicalSpace, query_terms
from indexer.store.manifest import Manifest
from indexer.store.metadata import StaleGeneration
from search.documents import DocumentText, load_document
from search.fusion import FUSION_DEPTH, hybrid_fusion
from search.modes import DEFAULT_MODE, MODES
from search.snippets import make_snippet

_SNAPSHOT_ATTEMPTS = 20


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk of a document, its score and where it sits.

    `found_by` maps each space that retrieved the chunk to its rank there (1 = first);
    `highlights` are [start, end) spans of query words inside `snippet`.
    """

    rank: int
    score: float
    path: str
    start: int
    end: int
    snippet: str
    chunk_id: int
    document_id: int
    ordinal: int
    space: str
    found_by: dict[str, int] = field(default_factory=dict)
    highlights: list[tuple[int, int]] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The hit as plain JSON-ready values."""
        return asdict(self)


@dataclass
class SearchResponse:
    """The hits for one query, with how long each step took."""

    query: str
    mode: str
    results: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The response as the JSON object `ctxsearch query --json` prints."""
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [hit.to_dict() for hit in self.results],
            "timings": self.timings,
        }


@dataclass
class _Candidates:
    """Chunks ranked by one mode, with each chunk's rank in every space that found it."""

    ranked: list[tuple[int, float]]
    found_by: dict[int, dict[str, int]]
    exhausted: bool


class Searcher:
    """Searches one index. The model loads on the first dense query, once.

    `model` and `pooling`, when given, must match the index's manifest (`ModelMismatch`
    otherwise); by default the index's own are used. Threads may share a Searcher: its
    calls run one at a time, because the tokenizer, the lazily loaded model and the
    spaces it reloads when a writer publishes are not safe to change under a running call.
    """

    def __init__(self, index_dir: str | Path, model: str | None = None, pooling: str | None = None):
        self.index = StoredIndex.open(Path(index_dir))
        try:
            if model is not None:
                from indexer.encoders.loading import canonical_model_name

                self.index.manifest.check_model(canonical_model_name(model))
            if pooling is not None:
                self.index.manifest.check_pooling(pooling)
        except Exception:
            self.index.close()
            raise
        self.lexical = SqliteLexicalSpace(self.index.metadata.engine)
        # hybrid mode's fusion of the contextual and lexical lists, and how deep each is
        # searched for it (a benchmark swaps them)
        self.fusion = hybrid_fusion
        self.fusion_depth = FUSION_DEPTH
        self._encoders: dict | None = None
        self._lock = threading.RLock()

    @property
    def manifest(self) -> Manifest:
        """The settings the index was built with."""
        return self.index.manifest

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the index."""
        self.index.close()

    def encoders(self) -> dict:
        """The index's encoders by space name, loading the model on first use."""
        with self._lock:
            return self._load_encoders()

    def _load_encoders(self) -> dict:
        if self._encoders is None:
            from indexer.encoders.loading import load_model
            from indexer.encoders.static import StaticEncoder
            from indexer.encoders.transformer import ContextualEncoder

            loaded = load_model(self.manifest.model)
            self.manifest.check_model(loaded.name, loaded.fingerprint)
            self._encoders = {
                "contextual": ContextualEncoder(loaded, self.manifest.pooling),
                "static": StaticEncoder(loaded),
            }
        return self._encoders

    def search(
        self,
        query: str,
        k: int = 10,
        mode: str = DEFAULT_MODE,
        all_chunks: bool = False,
        space: str | None = None,
        dense_weight: float | None = None,
    ) -> SearchResponse:
        """The `k` best hits for `query`: one per document unless `all_chunks` is set.

        `mode` is `hybrid` (contextual and lexical fused, see `search.fusion`),
        `contextual`, `static` or `lexical`; `space` is an older name for `mode`.
        `dense_weight` (0 to 1, hybrid only) fixes the contextual side's share of the
        fused score instead of the per-query weighting.
        """
        mode = space or mode
        _check_query(query, k, mode)
        _check_dense_weight(dense_weight, mode)
        with self._lock:
            timings = {"model_load_seconds": 0.0}
            if mode != "lexical" and self._encoders is None:
                started = time.perf_counter()
                self._load_encoders()
                timings["model_load_seconds"] = round(time.perf_counter() - started, 4)
            started = time.perf_counter()
            vectors = self._encode(query, mode)
            timings["encode_seconds"] = round(time.perf_counter() - started, 4)
            started = time.perf_counter()
            hits = self._hits(query, vectors, k, mode, all_chunks, dense_weight)
            timings["search_seconds"] = round(time.perf_counter() - started, 4)
        return SearchResponse(query=query, mode=mode, results=hits, timings=timings)

    def document(self, document_id: int) -> DocumentText:
        """A document's stored facts and text (`DocumentNotFound` if the id is unknown)."""
        return load_document(self.index.metadata, document_id)

    def _encode(self, query: str, mode: str) -> dict[str, np.ndarray]:
        spaces = {"hybrid": ["contextual"], "lexical": []}.get(mode, [mode])
        return {space: self._load_encoders()[space].encode([query]) for space in spaces}

    def _candidates(
        self,
        query: str,
        vectors: dict[str, np.ndarray],
        mode: str,
        depth: int,
        dense_weight: float | None = None,
    ) -> _Candidates:
        lists: dict[str, list[tuple[int, float]]] = {}
        exhausted = True
        depth = max(depth, self.fusion_depth) if mode == "hybrid" else depth
        for space, vector in vectors.items():
            scores, ids = self.index.spaces[space].search(vector, depth)
            lists[space] = [
                (int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0
            ]
            exhausted = exhausted and depth >= len(self.index.spaces[space])
        if mode in ("hybrid", "lexical"):
            lists["lexical"] = self.lexical.search(query, depth)
            exhausted = exhausted and len(lists["lexical"]) < depth
        found_by: dict[int, dict[str, int]] = {}
        for space, ranked in lists.items():
            for rank, (chunk_id, _score) in enumerate(ranked, start=1):
                found_by.setdefault(chunk_id, {})[space] = rank
        if mode == "hybrid":
            fused = self.fusion(lists["contextual"], lists["lexical"], dense_weight)
        else:
            fused = lists[mode]
        return _Candidates(fused, found_by, exhausted)

    def _hits(
        self,
        query: str,
        vectors: dict[str, np.ndarray],
        k: int,
        mode: str,
        all_chunks: bool,
        dense_weight: float | None = None,
    ) -> list[Hit]:
        for _attempt in range(_SNAPSHOT_ATTEMPTS):
            self.index.refresh()
            try:
                return self._hits_in_generation(query, vectors, k, mode, all_chunks, dense_weight)
            except StaleGeneration:
                continue  # a writer published meanwhile: search the new state instead
        raise IndexLocked(f"{self.index.directory}: the index changes too fast to read")

    def _hits_in_generation(
        self,
        query: str,
        vectors: dict[str, np.ndarray],
        k: int,
        mode: str,
        all_chunks: bool,
        dense_weight: float | None = None,
    ) -> list[Hit]:
        """Hits whose ids and rows all come from the generation the spaces were loaded at."""
        terms = query_terms(query)
        depth = k if all_chunks else k * 4
        generation = self.index.manifest.generation
        while True:
            candidates = self._candidates(query, vectors, mode, depth, dense_weight)
            chunks = self.index.metadata.chunks(
                (chunk_id for chunk_id, _ in candidates.ranked), generation=generation
            )
            hits: list[Hit] = []
            seen_documents: set[int] = set()
            for chunk_id, score in candidates.ranked:
                chunk = chunks.get(chunk_id)
                if chunk is None:  # only if the store is inconsistent (`ctxsearch verify`)
                    continue
                if not all_chunks and chunk.document_id in seen_documents:
                    continue
                seen_documents.add(chunk.document_id)
                snippet = make_snippet(chunk.text, terms)
                hits.append(
                    Hit(
                        rank=len(hits) + 1,
                        score=round(score, 6),
                        path=chunk.path,
                        start=chunk.start,
                        end=chunk.end,
                        snippet=snippet.text,
                        chunk_id=chunk.id,
                        document_id=chunk.document_id,
                        ordinal=chunk.ordinal,
                        space=mode,
                        found_by=candidates.found_by.get(chunk_id, {}),
                        highlights=snippet.highlights,
                    )
                )
                if len(hits) == k:
                    return hits
            if candidates.exhausted:
                return hits
            depth *= 4


def _check_query(query: str, k: int, mode: str) -> None:
    if not query or not query.strip():
        raise InvalidQuery("the query is empty")
    if k <= 0:
        raise InvalidQuery(f"k must be a positive number of results, not {k}")
    if mode not in MODES:
        raise InvalidQuery(f"unknown mode {mode!r}: choose one of {', '.join(MODES)}")


def _check_dense_weight(dense_weight: float | None, mode: str) -> None:
    if dense_weight is None:
        return
    if mode != "hybrid":
        raise InvalidQuery(f"a dense weight only applies to hybrid mode, not to {mode}")
    if not 0.0 <= dense_weight <= 1.0:
        raise InvalidQuery(f"the dense weight must be between 0 and 1, not {dense_weight}")

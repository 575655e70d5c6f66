"""The read path: encode a query, search a vector space, hydrate hits from SQL."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from indexer.errors import InvalidQuery
from indexer.store.index import StoredIndex
from indexer.store.manifest import Manifest
from search.snippets import make_snippet

SPACES = ("contextual", "static")


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk of a document, its score and where it sits."""

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

    def to_dict(self) -> dict:
        """The hit as plain JSON-ready values."""
        return asdict(self)


@dataclass
class SearchResponse:
    """The hits for one query, with how long each step took."""

    query: str
    space: str
    results: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The response as the JSON object `ctxsearch query --json` prints."""
        return {
            "query": self.query,
            "space": self.space,
            "results": [hit.to_dict() for hit in self.results],
            "timings": self.timings,
        }


class Searcher:
    """Searches one index. The model loads on the first query, once.

    `model` and `pooling`, when given, must match the index's manifest (`ModelMismatch`
    otherwise); by default the index's own are used.
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
        self._encoders: dict | None = None

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
        self, query: str, k: int = 10, space: str = "contextual", all_chunks: bool = False
    ) -> SearchResponse:
        """The `k` best hits for `query`: one per document unless `all_chunks` is set."""
        _check_query(query, k, space)
        load_started = time.perf_counter()
        encoder = self.encoders()[space]
        started = time.perf_counter()
        vector = encoder.encode([query])
        encoded = time.perf_counter()
        hits = self._nearest(vector, k, space, all_chunks)
        finished = time.perf_counter()
        timings = {
            "model_load_seconds": round(started - load_started, 4),
            "encode_seconds": round(encoded - started, 4),
            "search_seconds": round(finished - encoded, 4),
        }
        return SearchResponse(query=query, space=space, results=hits, timings=timings)

    def _nearest(self, vector: np.ndarray, k: int, space: str, all_chunks: bool) -> list[Hit]:
        vectors = self.index.spaces[space]
        fetch = k if all_chunks else k * 4
        while True:
            scores, ids = vectors.search(vector, fetch)
            ranked = [(float(s), int(i)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
            chunks = self.index.metadata.chunks(i for _, i in ranked)
            hits: list[Hit] = []
            seen_documents: set[int] = set()
            for score, chunk_id in ranked:
                chunk = chunks.get(chunk_id)
                if chunk is None:  # a vector whose chunk is being replaced by a writer
                    continue
                if not all_chunks and chunk.document_id in seen_documents:
                    continue
                seen_documents.add(chunk.document_id)
                hits.append(
                    Hit(
                        rank=len(hits) + 1,
                        score=round(score, 6),
                        path=chunk.path,
                        start=chunk.start,
                        end=chunk.end,
                        snippet=make_snippet(chunk.text),
                        chunk_id=chunk.id,
                        document_id=chunk.document_id,
                        ordinal=chunk.ordinal,
                        space=space,
                    )
                )
                if len(hits) == k:
                    return hits
            if fetch >= len(vectors):
                return hits
            fetch *= 4


def _check_query(query: str, k: int, space: str) -> None:
    if not query or not query.strip():
        raise InvalidQuery("the query is empty")
    if k <= 0:
        raise InvalidQuery(f"k must be a positive number of results, not {k}")
    if space not in SPACES:
        raise InvalidQuery(f"unknown space {space!r}: choose one of {', '.join(SPACES)}")

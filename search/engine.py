"""The read path: encode a query, search one space or fuse several, hydrate hits.

Every query reads one `Snapshot` of the store, so its candidates, scores and hydrated
chunks all come from one published state, whatever a writer does meanwhile.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from indexer.errors import IndexClosed, InvalidQuery, ModelNotAvailable
from indexer.spaces import Space
from indexer.store.base import Snapshot, Store, Target, open_reader, open_store
from indexer.store.manifest import Manifest
from indexer.terms import query_terms
from search.batching import QueryBatcher
from search.documents import DocumentText, load_document
from search.fusion import FUSION_DEPTH, Fusion, hybrid_fusion
from search.limits import check_document_id, check_k, check_query
from search.modes import DEFAULT_MODE, Mode
from search.snippets import make_snippet


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
    host: str = ""  # the machine that indexed the file (PostgreSQL indexes; "" when local)

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
    # what encoded the query in each vector space searched: onnx, table, model2vec,
    # glove (all without torch) or torch; and why torch, when it had to stand in
    query_encoder: dict[str, str] = field(default_factory=dict)
    query_encoder_note: str = ""

    def to_dict(self) -> dict:
        """The response as the JSON object `ctxsearch query --json` prints."""
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [hit.to_dict() for hit in self.results],
            "timings": self.timings,
            "query_encoder": self.query_encoder,
            "query_encoder_note": self.query_encoder_note,
        }


@dataclass
class _Candidates:
    """Chunks ranked by one mode, with each chunk's rank in every space that found it."""

    ranked: list[tuple[int, float]]
    found_by: dict[int, dict[str, int]]
    exhausted: bool


class Searcher:
    """Searches one index: a folder, or a `postgresql+psycopg://` URL.

    The encoder of each vector space loads on the first query that needs it, once.
    `query_encoder` says which: `auto` (the default, or $CTXSEARCH_QUERY_ENCODER) takes
    the torch-free ones where this machine has them (ONNX Runtime over the model's export,
    the saved token table; see `indexer.encoders.query`), else the torch encoders, which
    stay the reference; `onnx` insists on the torch-free ones; `torch` never uses them.
    `model` and `pooling`, when given, must match the index's manifest (`ModelMismatch`
    otherwise); by default the index's own are used. Threads may share a Searcher: each
    search reads its own snapshot (its own database connection), searches needing no
    model run side by side, and the query encodings of concurrent searches are made
    together, one pass for those waiting (`search.batching`). With `one_shot`, for a
    process that asks a query or two and exits (`ctxsearch query`), a folder index is
    read through the light reader (sqlite3 without SQLAlchemy, only the vector spaces a
    query searches; `open_reader`), on one thread.
    """

    def __init__(
        self,
        index: Target,
        model: str | None = None,
        pooling: str | None = None,
        query_encoder: str | None = None,
        one_shot: bool = False,
    ):
        from indexer.encoders.query import query_encoder_choice

        self.query_encoder = query_encoder_choice(query_encoder)
        self.store: Store = open_reader(index) if one_shot else open_store(index)
        try:
            if model is not None:
                from indexer.encoders.loading import canonical_model_name

                self.manifest.check_model(canonical_model_name(model))
            if pooling is not None:
                self.manifest.check_pooling(pooling)
        except Exception:
            self.store.close()
            raise
        # hybrid mode's fusion of the contextual and lexical lists, and how deep each is
        # searched for it (a benchmark swaps them)
        self.fusion: Fusion = hybrid_fusion
        self.fusion_depth = FUSION_DEPTH
        self._encoders: dict | None = None
        self.encoder_kinds: dict[str, str] = {}  # space -> onnx, table, ..., torch
        self.encoder_note = ""  # why torch stood in for a torch-free encoder, if it did
        self._lock = threading.RLock()
        # Concurrent searches' query encodings, one forward pass for those waiting.
        self._batcher = QueryBatcher(self._space_encoder)
        self._closed = False

    @property
    def manifest(self) -> Manifest:
        """The settings the index was built with."""
        assert self.store.manifest is not None  # open_store refuses an index without one
        return self.store.manifest

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the index; later calls raise `IndexClosed`."""
        self._closed = True
        self.store.close()

    def _check_open(self) -> None:
        if self._closed:
            raise IndexClosed(f"{self.store.target}: the searcher was closed")

    def encoders(self) -> dict:
        """The index's encoders by space name, each loaded on first use."""
        with self._lock:
            return {space: self._encoder(space) for space in self.manifest.spaces}

    def _space_encoder(self, space: str):  # -> Encoder
        with self._lock:
            return self._encoder(space)

    def _encoder(self, space: str):  # -> Encoder; call with the lock held
        if self._encoders is None:
            self._encoders = {}
        if space not in self._encoders:
            self._encoders.update(self._load_encoder(space))
        return self._encoders[space]

    def _load_encoder(self, space: str) -> dict:
        """The encoder of `space` without torch if it may and can be, else every space's
        torch encoder (the model is loaded once for all of them)."""
        from indexer.encoders.query import FastEncoderUnavailable, fast_query_encoder

        if self.query_encoder != "torch":
            try:
                encoder, kind = fast_query_encoder(self.manifest, space)
                self.encoder_kinds[space] = kind
                return {space: encoder}
            except FastEncoderUnavailable as error:
                if self.query_encoder == "onnx":
                    raise ModelNotAvailable(
                        f"{error} (query encoder onnx; ctxsearch index makes the export)"
                    ) from error
                self.encoder_note = f"{space} query encoded with torch: {error}"
        from indexer.encoders.loading import load_model
        from indexer.encoders.spaces import space_encoders

        loaded = load_model(self.manifest.model)
        self.manifest.check_model(loaded.name, loaded.fingerprint)
        made = space_encoders(loaded, self.manifest.pooling, self.manifest.static)
        if self.query_encoder == "auto":
            self._export_for_next_time(loaded)
        fresh = {name: encoder for name, encoder in made.items() if name not in self._encoders}
        self.encoder_kinds.update(dict.fromkeys(fresh, "torch"))
        return fresh

    def _export_for_next_time(self, loaded) -> None:
        """Export the model for ONNX Runtime, once, so that later queries need no torch
        (unless that failed before with this ctxsearch and torch)."""
        from indexer.encoders.export import ExportFailed, export_query_model, previous_failure

        if previous_failure(loaded.fingerprint) is not None:
            return
        try:
            export_query_model(loaded)
        except ExportFailed as error:
            self.encoder_note += f"; {error}"

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
        Bad input (wrong types, an empty or over-long query, `k` outside 1 to `MAX_K`)
        raises `InvalidQuery`: see `search.limits`.
        """
        chosen, k = _check_query(query, k, space or mode, all_chunks)
        _check_dense_weight(dense_weight, chosen)
        self._check_open()
        timings = {"model_load_seconds": 0.0}
        started = time.perf_counter()
        with self._lock:  # load the encoders this mode needs, once
            for space in chosen.vector_spaces:
                self._encoder(space.value)
            kinds = {space.value: self.encoder_kinds[space.value] for space in chosen.vector_spaces}
            note = self.encoder_note if "torch" in kinds.values() else ""
        timings["model_load_seconds"] = round(time.perf_counter() - started, 4)
        started = time.perf_counter()
        vectors = {
            space: self._batcher.encode(space.value, query) for space in chosen.vector_spaces
        }
        timings["encode_seconds"] = round(time.perf_counter() - started, 4)
        started = time.perf_counter()
        with self.store.snapshot([space.value for space in chosen.vector_spaces]) as snapshot:
            fusion = _FusionChoice(self.fusion, self.fusion_depth, dense_weight)
            hits = _hits(snapshot, query, vectors, k, chosen, all_chunks, fusion)
        timings["search_seconds"] = round(time.perf_counter() - started, 4)
        return SearchResponse(
            query=query,
            mode=chosen.value,
            results=hits,
            timings=timings,
            query_encoder=kinds,
            query_encoder_note=note,
        )

    def document(self, document_id: int) -> DocumentText:
        """A document's stored facts and text (`DocumentNotFound` if the id is unknown,
        `InvalidQuery` if it is not a whole number from 1 to 2**63 - 1)."""
        document_id = check_document_id(document_id)
        self._check_open()
        with self.store.snapshot() as snapshot:
            return load_document(snapshot, document_id)


@dataclass(frozen=True)
class _FusionChoice:
    """How hybrid mode fuses: the function, each side's depth, and a fixed weight if any."""

    fusion: Fusion
    depth: int
    dense_weight: float | None


def _candidates(
    snapshot: Snapshot,
    query: str,
    vectors: dict[Space, np.ndarray],
    mode: Mode,
    depth: int,
    fusion: _FusionChoice,
) -> _Candidates:
    lists: dict[str, list[tuple[int, float]]] = {}
    exhausted = True
    depth = max(depth, fusion.depth) if mode is Mode.HYBRID else depth
    for space, vector in vectors.items():
        lists[space.value] = snapshot.vector_search(space.value, vector, depth)[0]
        exhausted = exhausted and depth >= snapshot.space_size(space.value)
    if Space.LEXICAL in mode.spaces:
        lists[Space.LEXICAL.value] = snapshot.lexical_search(query, depth)
        exhausted = exhausted and len(lists[Space.LEXICAL.value]) < depth
    found_by: dict[int, dict[str, int]] = {}
    for space, ranked in lists.items():
        for rank, (chunk_id, _score) in enumerate(ranked, start=1):
            found_by.setdefault(chunk_id, {})[space] = rank
    if mode is Mode.HYBRID:
        fused = fusion.fusion(
            lists[Space.CONTEXTUAL.value], lists[Space.LEXICAL.value], fusion.dense_weight
        )
    else:
        fused = lists[mode.value]
    return _Candidates(fused, found_by, exhausted)


def _hits(
    snapshot: Snapshot,
    query: str,
    vectors: dict[Space, np.ndarray],
    k: int,
    mode: Mode,
    all_chunks: bool,
    fusion: _FusionChoice,
) -> list[Hit]:
    """The best `k` hits, searching deeper while documents repeat and more is left."""
    terms = query_terms(query)
    depth = k if all_chunks else k * 4
    while True:
        candidates = _candidates(snapshot, query, vectors, mode, depth, fusion)
        chunks = snapshot.chunks(chunk_id for chunk_id, _ in candidates.ranked)
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
                    space=mode.value,
                    found_by=candidates.found_by.get(chunk_id, {}),
                    highlights=snippet.highlights,
                    host=chunk.host,
                )
            )
            if len(hits) == k:
                return hits
        if candidates.exhausted:
            return hits
        depth *= 4


def _check_dense_weight(dense_weight: float | None, mode: Mode) -> None:
    if dense_weight is None:
        return
    if mode is not Mode.HYBRID:
        raise InvalidQuery(f"a dense weight only applies to hybrid mode, not to {mode}")
    if isinstance(dense_weight, bool) or not isinstance(dense_weight, (int, float)):
        raise InvalidQuery(f"the dense weight must be a number, not {dense_weight!r}")
    if not 0.0 <= dense_weight <= 1.0:
        raise InvalidQuery(f"the dense weight must be between 0 and 1, not {dense_weight}")


def _check_query(query: str, k: int, mode: str, all_chunks: bool) -> tuple[Mode, int]:
    """The mode and `k` (a plain int) of a usable query; `InvalidQuery` otherwise."""
    return check_query(query, k, mode, all_chunks), check_k(k)

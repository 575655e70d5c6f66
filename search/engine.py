"""The read path: encode a query, search one space or fuse several, hydrate hits.

Every query reads one `Snapshot` of the store, so its candidates, scores and hydrated
chunks all come from one published state, whatever a writer does meanwhile.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.errors import IndexClosed, InvalidQuery, ModelNotAvailable
from indexer.reading.formats import text_kind
from indexer.records.record import record_id_of
from indexer.spaces import Space
from indexer.store.backends import open_store
from indexer.store.base import CandidateSearch, Copies, Snapshot, Store, StoredChunk, Target
from indexer.store.completeness import Completeness
from indexer.store.manifest import Manifest
from indexer.terms import query_terms, stop_words
from search.batching import QueryBatcher
from search.document_scores import DOCUMENT_DEPTH, mode_ranked
from search.documents import DocumentText, load_document
from search.exact_evidence import ExactMatch, exact_match, keep_in_view
from search.explanation import Explainer, SideLists
from search.fusion import HYBRID, HybridFusion
from search.hints import filter_hints
from search.large_documents import swamping_documents
from search.limits import check_document_id, check_queries
from search.locations import fill_locations
from search.markup import plain_heading, plain_text
from search.match import MatchEvidence, match_label, term_coverage
from search.match_lines import LineSimilarity, match_location, static_line_similarity
from search.modes import Mode
from search.placing import Places, crowding
from search.request import SearchRequest, search_request
from search.snippets import make_snippet
from search.stand_in import stand_in_cosines

if TYPE_CHECKING:
    from search.passage_words import ExplainingEncoders


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
    line: int | None = None  # 1-based line of the chunk's start in the file
    end_line: int | None = None  # 1-based line of its last character
    heading: str | None = None  # the title of the section that holds it (Markdown, rST, HTML)
    # That section's trail, outermost title first, joined by a right-pointing angle quote
    # (`Passage.section`); None outside any heading, for a PDF, and for rows from before
    # migration 0006.
    section: str | None = None
    page: int | None = None  # the PDF page it starts on
    # The raw cosine of query and chunk in the contextual space (every mode computes it;
    # None only for an index without that space): comparable across queries, unlike
    # `score`. Rounded to 6 digits; `min_similarity` cuts on this rounded value.
    similarity: float | None = None
    # How well it matches: `strong`, `weak` or `none` (`search.match`, calibrated on
    # judged and nonsense queries); None for a `similar` search's hits.
    match: str | None = None
    # The lexical evidence behind `match`: the IDF-weighted share of the query's terms
    # the passage holds, 0 to 1 (`search.match.term_coverage`); None where `match` is.
    term_coverage: float | None = None
    # A record's id and metadata (see `Indexer.upsert_records`); None for a file.
    id: str | None = None
    metadata: dict[str, str | int | float | bool] | None = None
    # The line inside the chunk that best matches the query (1-based, in the file like
    # `line`; see `search.match_lines`); for a PDF, `match_page` and `match_page_line`
    # (the line within that page) instead. None where the file has no lines.
    # `match_start`/`match_end`: that line's [start, end) in the extracted text.
    match_line: int | None = None
    match_page: int | None = None
    match_page_line: int | None = None
    match_start: int | None = None
    match_end: int | None = None
    # The other files with the same extracted text (collapsed into this hit), by path.
    duplicates: list[str] = field(default_factory=list)
    # Why it ranks where it does, when the search was asked to explain (`search.explanation`).
    explain: dict[str, Any] | None = None

    def to_dict(self) -> dict:
        """The hit as plain JSON-ready values (`explain` only when it was asked for)."""
        shown = asdict(self)
        if self.explain is None:
            del shown["explain"]
        return shown


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
    filters: dict[str, list[str] | dict[str, str]] | None = None  # the filters asked for
    min_similarity: float | None = None
    # Why the filters can match nothing, when there are no hits (`search.hints`)
    hints: list[str] = field(default_factory=list)
    # How complete the index searched was while a run fills the contextual space (its
    # newest passages are found by the lexical and static spaces only until then:
    # `indexer.runs.fill`); None when every passage has its contextual vector (known from
    # the manifest, so a query of a complete index counts nothing)
    completeness: Completeness | None = None

    def to_dict(self) -> dict:
        """The response as the JSON object `ctxsearch query --json` prints."""
        shown = {
            "query": self.query,
            "mode": self.mode,
            "results": [hit.to_dict() for hit in self.results],
            "timings": self.timings,
            "query_encoder": self.query_encoder,
            "query_encoder_note": self.query_encoder_note,
            "hints": self.hints,
        }
        if self.filters is not None:
            shown["filters"] = self.filters
        if self.min_similarity is not None:
            shown["min_similarity"] = self.min_similarity
        complete = {"contextual_complete": True}
        shown["completeness"] = self.completeness.to_dict() if self.completeness else complete
        return shown


@dataclass
class _Candidates:
    """Chunks ranked by one mode, with each chunk's rank in every space that found it,
    and the rows and content keys the store read with them."""

    ranked: list[tuple[int, float]]
    found_by: dict[int, dict[str, int]]
    exhausted: bool
    similarities: dict[int, float]
    chunks: dict[int, StoredChunk] = field(default_factory=dict)
    content_keys: dict[int, str] = field(default_factory=dict)
    # hybrid: the lexical side's clear exact match, kept among the first hits
    exact: ExactMatch | None = None
    sides: SideLists = field(default_factory=SideLists)  # what `explain` reads
    # the candidates' files that swamp the search (`search.large_documents`)
    swamping: set[int] = field(default_factory=set)


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
    together, one pass for those waiting (`search.batching`). Opening is cheap for a
    process that asks one query and exits: a folder index is read with sqlite3 (no
    SQLAlchemy), and only the vector spaces a query searches are loaded. `one_shot` is
    accepted, for the callers that pass it, and changes nothing.
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
        self.store: Store = open_store(index)
        try:
            if model is not None:
                from indexer.encoders.loading import canonical_model_name

                self.manifest.check_model(canonical_model_name(model))
            if pooling is not None:
                self.manifest.check_pooling(pooling)
        except Exception:
            self.store.close()
            raise
        # how hybrid mode fuses the contextual and lexical lists (a benchmark swaps it)
        self.hybrid: HybridFusion = HYBRID
        self._encoders: dict | None = None
        self.encoder_kinds: dict[str, str] = {}  # space -> onnx, table, ..., torch
        self.encoder_note = ""  # why torch stood in for a torch-free encoder, if it did
        self._lock = threading.RLock()
        # Concurrent searches' query encodings, one forward pass for those waiting.
        self._batcher = QueryBatcher(self._space_encoder)
        self._explaining: ExplainingEncoders | None = None  # made by the first `explain`
        # the completeness of the last generation searched, and that generation
        self._completeness_of: tuple[tuple[str, int], Completeness] | None = None
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
        from indexer.encoders.for_index import encoders_for

        # Queries are encoded in fp32, the reference; the model is the process's one
        # (a writable server's writes use it too).
        made = encoders_for(self.manifest, "fp32")
        if self.query_encoder == "auto":
            self._export_for_next_time(made.loaded)
        fresh = {
            name: encoder for name, encoder in made.spaces.items() if name not in self._encoders
        }
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

    def search(self, query: str | SearchRequest, **options: Any) -> SearchResponse:
        """The `k` best hits for `query`: one per document unless `all_chunks` is set.

        `query` is a `SearchRequest`, or its text with the request's other fields as
        keywords (`search("bank", k=5, mode="lexical")`; given with a request, they
        change it). `mode` is `hybrid` (contextual and lexical fused, see
        `search.fusion`), `contextual`, `static` or `lexical`; `space` is an older name
        for `mode`. `dense_weight` (0 to 1, hybrid only) fixes the contextual side's
        share of the fused score instead of the per-query weighting.
        `under` (absolute folders or files), `path` (globs such as `*.md`) and
        `file_type` (`md`, `rst`, `txt`, `html`, `pdf`, `office`, `epub`, `code` or an
        extension) limit the search to those documents, inside every space searched
        (see `indexer.store.filters`): `k` hits come back whenever that many match.
        `min_similarity` (-1 to 1) drops hits whose contextual cosine (`Hit.similarity`,
        six digits) is below it. Every hit says how well it matches (`Hit.match`:
        strong, weak or none; see `search.match`). `where` (`{"key": value}`, or
        `["key=value"]`) keeps the records whose metadata holds every pair (numbers
        compare as numbers, strings as strings: see `indexer.records.record`); files
        have no metadata, so it leaves them out.
        Bad input (wrong types, an empty or over-long query, `k` outside 1 to `MAX_K`)
        raises `InvalidQuery`: see `search.request` and `search.limits`.
        """
        return self._search([search_request(query, **options)])[0]

    def search_batch(
        self, queries: Sequence[str | SearchRequest], **options: Any
    ) -> list[SearchResponse]:
        """One `SearchResponse` per query, in order, `options` (a search's keywords)
        applied to each: what `search` answers for each, with the queries encoded
        together (one pass per space for up to `MAX_BATCH_QUERIES`) and searched in one
        snapshot. `InvalidQuery` for no query, more than `MAX_BATCH_QUERIES`, or any bad
        one (naming it: `query 2: ...`). Each response's `encode_seconds` is the batch's."""
        requests = []
        for number, query in enumerate(check_queries(queries), start=1):
            try:
                requests.append(search_request(query, **options))
            except InvalidQuery as error:
                raise InvalidQuery(f"query {number}: {error}") from None
        return self._search(requests)

    def _search(self, requests: list[SearchRequest]) -> list[SearchResponse]:
        self._check_open()
        timings = {"model_load_seconds": 0.0}
        # The contextual vector gives every hit its similarity, and with it its `match`,
        # in every mode (static and lexical mode encode the query for that alone).
        indexed = self.manifest.spaces
        wanted = [_vector_spaces(request, indexed) for request in requests]
        encoded = sorted(set().union(*wanted), key=lambda item: item.value)
        started = time.perf_counter()
        with self._lock:  # load the encoders these searches need, once
            for space in encoded:
                self._encoder(space.value)
            kinds = {space.value: self.encoder_kinds[space.value] for space in encoded}
            note = self.encoder_note if "torch" in kinds.values() else ""
        timings["model_load_seconds"] = round(time.perf_counter() - started, 4)
        started = time.perf_counter()
        vectors: list[dict[Space, np.ndarray]] = [{} for _ in requests]
        for space in encoded:
            asking = [n for n, spaces in enumerate(wanted) if space in spaces]
            texts = [requests[n].searched for n in asking]
            rows = self._batcher.encode_many(space.value, texts)
            for row, n in enumerate(asking):
                vectors[n][space] = rows[row : row + 1]
        timings["encode_seconds"] = round(time.perf_counter() - started, 4)
        responses = []
        with self.store.snapshot([space.value for space in encoded]) as snapshot:
            for request, own in zip(requests, vectors, strict=True):
                spaces = {space.value: kinds[space.value] for space in own}
                started = time.perf_counter()
                lines = None
                if Space.STATIC in own:  # ties between lines: the static space, at hand
                    encoder = self._space_encoder(Space.STATIC.value)
                    lines = static_line_similarity(encoder, own[Space.STATIC][0])
                explainer = self._explainer(request) if request.explain else None
                hits = _hits(snapshot, request, own, self.hybrid, lines, explainer)
                hints = filter_hints(snapshot, request.filter) if not hits else []
                searched = round(time.perf_counter() - started, 4)
                responses.append(
                    SearchResponse(
                        query=request.query,
                        mode=request.mode.value,
                        results=hits,
                        timings={**timings, "search_seconds": searched},
                        query_encoder=spaces,
                        query_encoder_note=note if "torch" in spaces.values() else "",
                        filters=request.filter.to_dict() if request.filter else None,
                        min_similarity=request.min_similarity,
                        hints=hints,
                    )
                )
            if snapshot.manifest.unfilled:  # read after the searches: they go with the BEGIN
                filling = self._completeness(snapshot)
                for response in responses:
                    response.completeness = None if filling.contextual_complete else filling
        return responses

    def completeness(self) -> Completeness:
        """How complete the index is now: how many of its passages have their contextual
        vector (all, but while a run fills them)."""
        self._check_open()
        with self.store.snapshot([]) as snapshot:
            return self._completeness(snapshot)

    def _completeness(self, snapshot: Snapshot) -> Completeness:
        """The completeness of the snapshot's state, counted once per generation."""
        manifest = snapshot.manifest
        state = (manifest.index_id, manifest.generation)
        known = self._completeness_of
        if known is None or known[0] != state:
            known = self._completeness_of = (state, snapshot.completeness())
        return known[1]

    def _explainer(self, request: SearchRequest) -> Explainer:
        """What explains the hits of `request`: the words of their passages by the
        index's own encoders, unless no vector space ranked them (lexical mode)."""
        from search.passage_words import ExplainingEncoders, PassageWords

        with self._lock:
            if self._explaining is None:
                self._explaining = ExplainingEncoders(self.manifest)
        words = None
        if request.mode is not Mode.LEXICAL:
            words = PassageWords(self.manifest, request.query, self._explaining).explain
        return Explainer(request.mode, request.query, request.dense_weight, self.hybrid, words)

    def similar(
        self,
        item: str | None = None,
        line: int | None = None,
        chunk_id: int | None = None,
        **options: Any,
    ):  # -> search.similar.SimilarResponse
        """More like this: the `k` nearest documents (or passages, with `all_chunks`) to
        one the index holds, from its stored vectors (nothing is encoded).

        `item` is a stored path (a file's absolute path, or `record:ID`): the whole
        document, searched with the normalised mean of its passages' vectors; with
        `line` (1-based), the passage at that line, searched with its own vector.
        `chunk_id` (a hit's) names a passage instead. The item's document is left out.
        `options` are a search's (`k`, `mode`: contextual, the default, or static;
        `all_chunks`, `under`, `path`, `file_type`, `where`, `min_similarity`); hits
        are `Hit`s, `similarity` their contextual cosine to the item. An unknown item
        raises `DocumentNotFound`; a line past the end or bad options `InvalidQuery`.
        See `search.similar`.
        """
        from search.similar import find_similar

        self._check_open()
        return find_similar(self.store, _hydrate_neighbours, item, line, chunk_id, **options)

    def document(self, document_id: int) -> DocumentText:
        """A document's stored facts and text (`DocumentNotFound` if the id is unknown,
        `InvalidQuery` if it is not a whole number from 1 to 2**63 - 1)."""
        document_id = check_document_id(document_id)
        self._check_open()
        with self.store.snapshot() as snapshot:
            return load_document(snapshot, document_id)


def _vector_spaces(request: SearchRequest, indexed: Collection[str]) -> set[Space]:
    """The spaces whose query vector `request` needs: its mode's, and the contextual one
    for every hit's similarity and `match` (always when asked to drop weak hits)."""
    wanted = set(request.mode.vector_spaces)
    if request.min_similarity is not None or Space.CONTEXTUAL.value in indexed:
        wanted.add(Space.CONTEXTUAL)
    return wanted


def _candidates(
    snapshot: Snapshot,
    request: SearchRequest,
    vectors: dict[Space, np.ndarray],
    hybrid: HybridFusion,
    depth: int,
) -> _Candidates:
    query, mode = request.searched, request.mode
    depth = max(depth, hybrid.depth) if mode is Mode.HYBRID else depth
    contextual = vectors.get(Space.CONTEXTUAL)
    found = snapshot.search(
        CandidateSearch(
            vectors={space.value: vectors[space][0] for space in vectors if space in mode.spaces},
            text=query if Space.LEXICAL in mode.spaces else None,
            depth=depth,
            where=request.filter or None,
            cosine=None if contextual is None else (Space.CONTEXTUAL.value, contextual[0]),
            complete_lexical=mode is Mode.HYBRID and hybrid.completes,
        )
    )
    lists: dict[str, list[tuple[int, float]]] = dict(found.vector)
    exhausted = all(depth >= found.sizes[space] for space in found.vector)
    if found.lexical is not None:
        lists[Space.LEXICAL.value] = found.lexical
        exhausted = exhausted and len(found.lexical) < depth
    found_by: dict[int, dict[str, int]] = {}
    for space, ranked in lists.items():
        for rank, (chunk_id, _score) in enumerate(ranked, start=1):
            found_by.setdefault(chunk_id, {})[space] = rank
    # each candidate's contextual cosine: its list's score, or looked up (`found.cosines`)
    similarities = dict(lists.get(Space.CONTEXTUAL.value, [])) | found.cosines
    exact = None
    if mode is Mode.HYBRID:
        dense, lexical = lists[Space.CONTEXTUAL.value], lists[Space.LEXICAL.value]
        cosines, bm25 = (found.cosines, found.bm25) if hybrid.completes else ({}, {})
        if snapshot.manifest.unfilled:  # passages with no contextual vector yet
            cosines = {**cosines, **stand_in_cosines(dense, lexical, similarities)}
        fused = hybrid.fuse(dense, lexical, request.dense_weight, cosines, bm25, query)
        if hybrid.keeps_exact:
            exact = exact_match(query_terms(query), lexical, found.chunks)
    else:
        fused = lists[mode.value]
    sides = SideLists(lists, found.cosines, found.bm25, dict(fused))
    minimum = request.min_similarity
    if minimum is not None and Space.CONTEXTUAL.value in lists:
        # The contextual list is in cosine order: once its last entry is below the bar,
        # every chunk that clears it has been seen, however deep the other lists go.
        dense = lists[Space.CONTEXTUAL.value]
        exhausted = exhausted or (bool(dense) and dense[-1][1] < minimum)
    return _Candidates(
        fused,
        found_by,
        exhausted,
        similarities,
        found.chunks,
        found.content_keys,
        exact,
        sides,
        swamping_documents(found),
    )


def _hits(
    snapshot: Snapshot,
    request: SearchRequest,
    vectors: dict[Space, np.ndarray],
    hybrid: HybridFusion,
    lines: LineSimilarity | None = None,
    explainer: Explainer | None = None,
) -> list[Hit]:
    """The best `k` hits, searching deeper while documents (or files with the same text)
    repeat, hits fall below the similarity asked for, and more is left; each explained
    by `explainer`, when given."""
    terms = query_terms(request.searched)
    k, minimum = request.k, request.min_similarity
    # one hit per document: deep enough that a document's next passages support it
    depth = k if request.all_chunks else max(k * 4, DOCUMENT_DEPTH)
    while True:
        candidates = _candidates(snapshot, request, vectors, hybrid, depth)
        chunks, keys = candidates.chunks, candidates.content_keys
        ranked = candidates.ranked
        if not request.all_chunks:  # one hit per document: scored as the document
            documents = {i: (chunk.document_id, chunk.section) for i, chunk in chunks.items()}
            ranked = mode_ranked(ranked, documents, request.mode)
        if candidates.exact is not None:
            ranked = keep_in_view(
                ranked, candidates.exact, _hit_unit(chunks, request), candidates.similarities
            )
        exact = candidates.exact.holders if candidates.exact is not None else frozenset()
        held_back = crowding(candidates.swamping, exact)
        places = Places(k, held_back, every_passage=request.all_chunks)
        holder: dict[str, int] = {}  # content key -> the document whose hits stand for it
        for chunk_id, score in ranked:
            chunk = chunks.get(chunk_id)
            if chunk is None:  # only if the store is inconsistent (`ctxsearch verify`)
                continue
            similarity = candidates.similarities.get(chunk_id)
            if minimum is not None and (similarity is None or round(similarity, 6) < minimum):
                continue  # cut on the value the hit shows (`Hit.similarity`)
            if places.shown(chunk.document_id):
                continue
            key = keys.get(chunk.document_id)
            if key is not None and holder.setdefault(key, chunk.document_id) != chunk.document_id:
                continue  # a copy of a file already shown: listed under its `duplicates`
            places.offer(chunk, score)
            if places.full:
                break
        if places.full or candidates.exhausted:
            return _shown_hits(
                snapshot, places.hits(), candidates, request, terms, lines, explainer
            )
        depth *= 4


def _hit_unit(chunks: dict[int, StoredChunk], request: SearchRequest) -> Callable[[int], int]:
    """What one hit stands for: its chunk's document, or the chunk with `all_chunks`."""
    if request.all_chunks:
        return lambda chunk_id: chunk_id
    return lambda chunk_id: chunks[chunk_id].document_id if chunk_id in chunks else chunk_id


def _hydrate_neighbours(
    snapshot: Snapshot,
    chosen: list[tuple[StoredChunk, float]],
    similarities: dict[int, float],
    found_by: dict[int, dict[str, int]],
    request: SearchRequest,
) -> list[Hit]:
    """The hits of a similar search (`search.similar`): shown as a query's (each the copy
    first in path order, listing the others), without query words to highlight."""
    candidates = _Candidates([], found_by, True, similarities)
    return _shown_hits(snapshot, chosen, candidates, request, [], None, labelled=False)


def _shown_hits(
    snapshot: Snapshot,
    chosen: list[tuple[StoredChunk, float]],
    candidates: _Candidates,
    request: SearchRequest,
    terms: list[str],
    lines: LineSimilarity | None,
    explainer: Explainer | None = None,
    labelled: bool = True,
) -> list[Hit]:
    """The chosen chunks as hits, from what the store reads of them in one call: their
    copies, and the query terms' evidence behind each one's `match` (and explanation)."""
    ids = [chunk.id for chunk, _ in chosen]
    shown = snapshot.shown(ids, terms if labelled else [], request.filter or None)
    coverage = term_coverage(shown.terms, terms, ids) if labelled else {}
    explained = None
    if explainer is not None:
        stored = [chunk for chunk, _ in chosen]
        explained = explainer.explain(stored, candidates.sides, shown.terms, terms)
    chosen, copies = _first_of_copies(chosen, shown.copies, candidates, coverage)
    located = fill_locations(snapshot, [chunk for chunk, _ in chosen])
    shown_hits = [
        _hit(rank, located[stored.id], score, candidates, request.mode, terms, lines, copies,
             coverage if labelled else None)
        for rank, (stored, score) in enumerate(chosen, start=1)
    ]  # fmt: skip
    if explained is None:
        return shown_hits
    return [
        replace(hit, explain=explanation)
        for hit, explanation in zip(shown_hits, explained, strict=True)
    ]


def _first_of_copies(
    chosen: list[tuple[StoredChunk, float]],
    holding: dict[int, Copies],
    candidates: _Candidates,
    coverage: dict[int, float],
) -> tuple[list[tuple[StoredChunk, float]], dict[int, list[str]]]:
    """Each chosen chunk as the same passage of the copy first in path order, and the
    other copies' paths by document id. Copies score alike, so the copy a mode happened
    to rank first would name the hit differently from mode to mode."""
    placed, copies = [], {}
    for chunk, score in chosen:
        found = holding.get(chunk.id)
        files = found.files if found else []
        twin = found.first_passage if found else None
        if twin is not None:
            for scores in (candidates.similarities, candidates.found_by, coverage):
                if chunk.id in scores:
                    scores[twin.id] = scores[chunk.id]  # type: ignore[index]
            chunk = twin
        placed.append((chunk, score))
        copies[chunk.document_id] = [path for other, path in files if other != chunk.document_id]
    return placed, copies


def _hit(
    rank: int,
    chunk: StoredChunk,
    score: float,
    candidates: _Candidates,
    mode: Mode,
    terms: list[str],
    lines: LineSimilarity | None,
    copies: dict[int, list[str]],
    coverage: dict[int, float] | None,
) -> Hit:
    """One hit, ready to show: its snippet, best line, similarity and match."""
    snippet = make_snippet(plain_text(chunk.text, text_kind(chunk.path)), terms)
    similarity = candidates.similarities.get(chunk.id)
    shown = None if similarity is None else round(similarity, 6)
    matched = match_location(chunk, terms, lines)
    covered = None if coverage is None else round(coverage[chunk.id], 6)
    content = not all(term in stop_words() for term in terms)
    label = None
    if covered is not None:
        label = match_label(MatchEvidence(shown, covered, content, first=rank == 1))
    return Hit(
        rank=rank,
        score=round(score, 6),
        path=chunk.path,
        start=chunk.start,
        end=chunk.end,
        snippet=snippet.text,
        chunk_id=chunk.id,
        document_id=chunk.document_id,
        ordinal=chunk.ordinal,
        space=mode.value,
        found_by=candidates.found_by.get(chunk.id, {}),
        highlights=snippet.highlights,
        host=chunk.host,
        line=chunk.line,
        end_line=chunk.end_line,
        heading=plain_heading(chunk.heading, chunk.path),
        section=plain_heading(chunk.section, chunk.path),
        page=chunk.page,
        similarity=shown,
        match=label,
        term_coverage=covered,
        id=record_id_of(chunk.path) if chunk.metadata_json is not None else None,
        metadata=None if chunk.metadata_json is None else json.loads(chunk.metadata_json),
        match_line=matched.line,
        match_page=matched.page,
        match_page_line=matched.page_line,
        match_start=matched.start,
        match_end=matched.end,
        duplicates=copies.get(chunk.document_id, []),
    )

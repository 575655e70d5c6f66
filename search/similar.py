"""More like this: the documents or passages nearest to one that the index already holds.

Nothing is encoded: the item's vector is read from the store (`Snapshot.vectors`).

- A passage (a chunk id, or a document's path and a line in it) is searched with its own
  stored vector.
- A whole document is searched with the mean of its passages' vectors, normalised. That
  is the direction with the highest summed cosine to all of its passages, so a long
  document is matched by what it is about overall rather than by one of its passages,
  and it costs one search whatever the document's length (a search per passage, fused,
  would cost as many searches as it has passages).

The item's own document is left out of the results, and so are its copies (files with
the same text), which the item lists as its `duplicates`; copies of a neighbour are one
hit listing the others, as in a query. The search's filters (`under`, `path`,
`file_type`, `where`, `min_similarity`) apply inside the space, as for a query, and to
the copies listed. Hits are the search's `Hit`s (hydrated by the same code), so they
carry every key a query's hits carry.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from indexer.errors import DocumentNotFound, IndexCorrupt, InvalidQuery, NotFilledYet
from indexer.spaces import Space
from indexer.store.base import CandidateSearch, Snapshot, Store, StoredChunk
from indexer.store.chunk_ranges import holds
from search.large_documents import swamping_documents
from search.limits import MAX_DOCUMENT_ID
from search.locations import fill_locations
from search.markup import plain_heading
from search.modes import Mode
from search.placing import Places, crowding
from search.request import SearchRequest, search_request

# Makes the hits of chosen (chunk, score) pairs as a search does (copies collapsed into
# one hit), given each chunk's contextual cosine, its rank in the space searched and the
# request (`search.engine` passes its own).
Hydrate = Callable[
    [
        Snapshot,
        list[tuple[StoredChunk, float]],
        dict[int, float],
        dict[int, dict[str, int]],
        SearchRequest,
    ],
    list[Any],
]
SIMILAR_MODES = (Mode.CONTEXTUAL.value, Mode.STATIC.value)
PASSAGE, DOCUMENT = "passage", "document mean"


@dataclass(frozen=True)
class SimilarItem:
    """What the neighbours are near: a document or one of its passages, and which vector.

    `vector` is `passage` (that passage's stored vector) or `document mean` (the mean of
    the document's `passages` stored vectors, normalised)."""

    path: str
    document_id: int
    vector: str
    chunk_ids: list[int]
    passages: int
    line: int | None = None
    end_line: int | None = None
    heading: str | None = None
    # The other files with the same extracted text (left out of the results), by path.
    duplicates: list[str] = field(default_factory=list)


@dataclass
class SimilarResponse:
    """The neighbours of one item, best first (`ctxsearch similar --json`)."""

    item: SimilarItem
    mode: str
    results: list[Any]  # search.engine.Hit
    timings: dict[str, float] = field(default_factory=dict)
    filters: dict[str, Any] | None = None
    min_similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The response as plain JSON-ready values."""
        shown: dict[str, Any] = {
            "item": asdict(self.item),
            "mode": self.mode,
            "results": [hit.to_dict() for hit in self.results],
            "timings": self.timings,
        }
        if self.filters is not None:
            shown["filters"] = self.filters
        if self.min_similarity is not None:
            shown["min_similarity"] = self.min_similarity
        return shown


def similar_request(**options: Any) -> SearchRequest:
    """The search options of a similar search, checked as a query's are (`InvalidQuery`);
    the mode is contextual unless given, and only contextual or static (the item has a
    vector in each, but no query text for the lexical side)."""
    options.setdefault("mode", Mode.CONTEXTUAL.value)
    # The request type needs query text; the item stands in for it (see `SimilarItem`).
    request = search_request("similar", **options)
    if request.mode.value not in SIMILAR_MODES:
        raise InvalidQuery(
            f"similar searches the contextual or static space, not {request.mode.value}: "
            "lexical and hybrid need query text"
        )
    return request


def find_similar(
    store: Store,
    hydrate: Hydrate,
    item: str | None = None,
    line: int | None = None,
    chunk_id: int | None = None,
    **options: Any,
) -> SimilarResponse:
    """The neighbours of `item` (a stored path, or `record:ID`; with `line`, the passage
    at that 1-based line) or of the passage `chunk_id` (see `Searcher.similar`)."""
    request = similar_request(**options)
    _check_item(item, line, chunk_id)
    space = request.mode.value
    spaces = sorted({space, Space.CONTEXTUAL.value})
    started = time.perf_counter()
    with store.snapshot(spaces) as snapshot:
        found, chunks = _resolve(snapshot, store.host, item, line, chunk_id)
        vectors = {name: _item_vector(snapshot, name, chunks) for name in spaces}
        copies = _copies(snapshot, chunks[0].id, request)
        duplicates = [path for document, path in copies if document != found.document_id]
        found = replace(found, duplicates=duplicates)
        own = {found.document_id} | {document for document, _ in copies}
        hits = _neighbours(snapshot, request, own, vectors, hydrate)
    return SimilarResponse(
        item=found,
        mode=space,
        results=hits,
        timings={"search_seconds": round(time.perf_counter() - started, 4)},
        filters=request.filter.to_dict() if request.filter else None,
        min_similarity=request.min_similarity,
    )


def _check_item(item: object, line: object, chunk_id: object) -> None:
    if (item is None) == (chunk_id is None):
        raise InvalidQuery("give the item: a path (or record:ID), or a passage's chunk_id")
    if item is not None and (not isinstance(item, str) or not item):
        raise InvalidQuery(f"the item must be a non-empty path or record:ID, not {item!r}")
    if line is not None:
        if chunk_id is not None:
            raise InvalidQuery("a line goes with a path, not with a chunk_id")
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise InvalidQuery(f"line must be a whole number from 1, not {line!r}")
    if chunk_id is not None and (
        isinstance(chunk_id, bool)
        or not isinstance(chunk_id, int)
        or not 1 <= chunk_id <= MAX_DOCUMENT_ID
    ):
        raise InvalidQuery(f"chunk_id must be a whole number from 1, not {chunk_id!r}")


def _resolve(
    snapshot: Snapshot, host: str, item: str | None, line: int | None, chunk_id: int | None
) -> tuple[SimilarItem, list[StoredChunk]]:
    """The item and the chunks whose vectors stand for it."""
    if chunk_id is not None:
        stored = snapshot.chunks([chunk_id]).get(chunk_id)
        if stored is None:
            raise DocumentNotFound(f"no passage with chunk_id {chunk_id} in the index")
        return _passage_item(fill_locations(snapshot, [stored])[stored.id]), [stored]
    assert item is not None
    documents = snapshot.documents_at(item)
    if not documents:
        raise DocumentNotFound(
            f"{item}: no such document in the index (give an indexed file's path, or "
            "record:ID for a record)"
        )
    # A PostgreSQL index may hold the same path from several machines: this one's first.
    document = next((d for d in documents if d.host == host), documents[0])
    found = snapshot.document(document.id)
    if found is None or not found[1]:
        raise DocumentNotFound(f"{item}: the document has no passages in the index")
    located = fill_locations(snapshot, found[1])
    chunks = [located[chunk.id] for chunk in found[1]]
    if line is None:
        whole = SimilarItem(
            path=document.path,
            document_id=document.id,
            vector=DOCUMENT if len(chunks) > 1 else PASSAGE,
            chunk_ids=[chunk.id for chunk in chunks],
            passages=len(chunks),
            line=chunks[0].line,
            end_line=max((c.end_line for c in chunks if c.end_line is not None), default=None),
        )
        return whole, chunks
    passage = _passage_at(item, chunks, line)
    return _passage_item(passage), [passage]


def _passage_item(chunk: StoredChunk) -> SimilarItem:
    return SimilarItem(
        path=chunk.path,
        document_id=chunk.document_id,
        vector=PASSAGE,
        chunk_ids=[chunk.id],
        passages=1,
        line=chunk.line,
        end_line=chunk.end_line,
        heading=plain_heading(chunk.heading, chunk.path),
    )


def _passage_at(path: str, chunks: list[StoredChunk], line: int) -> StoredChunk:
    """The passage holding `line`: where passages overlap, the one it lies deepest in;
    on a blank line between two, the nearer."""
    lined = [c for c in chunks if c.line is not None and c.end_line is not None]
    if not lined:
        raise InvalidQuery(
            f"{path}: its passages have no line numbers (a PDF, or stored without them): "
            "give the whole document, or a passage's chunk_id"
        )
    last = max(c.end_line for c in lined)  # type: ignore[type-var]
    if line > last:
        raise InvalidQuery(f"{path}: line {line} is past the end of its text (line {last})")

    def fit(chunk: StoredChunk) -> tuple[int, int]:
        start, end = chunk.line, chunk.end_line
        assert start is not None and end is not None
        if start <= line <= end:
            return (0, -min(line - start, end - line))
        return (1, min(abs(line - start), abs(line - end)))

    return min(lined, key=fit)


def _copies(snapshot: Snapshot, chunk_id: int, request: SearchRequest) -> list[tuple[int, str]]:
    """The files (document id, path) holding the text of the document of the chunk
    `chunk_id`, itself included, that the request's filters allow (none for a record)."""
    found = snapshot.shown([chunk_id], [], request.filter or None).copies.get(chunk_id)
    return found.files if found else []


def _item_vector(snapshot: Snapshot, space: str, chunks: list[StoredChunk]) -> np.ndarray:
    """The item's vector in `space`: its one passage's, or the normalised mean."""
    stored = snapshot.vectors(space, [chunk.id for chunk in chunks])
    missing = [chunk.id for chunk in chunks if chunk.id not in stored]
    unfilled = snapshot.manifest.unfilled
    if space == Space.CONTEXTUAL and missing and all(holds(unfilled, i) for i in missing):
        raise NotFilledYet(
            f"{chunks[0].path}: its contextual vectors are not stored yet (a run is filling "
            "them: `ctxsearch info` says how far); ask again once it is done"
        )
    if missing:
        raise IndexCorrupt(
            f"the {space} space has no vector for chunks {missing[:5]}: run `ctxsearch verify`"
        )
    matrix = np.stack([stored[chunk.id] for chunk in chunks]).astype(np.float32)
    mean = matrix.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else matrix[0]


def _neighbours(
    snapshot: Snapshot,
    request: SearchRequest,
    own: set[int],
    vectors: dict[str, np.ndarray],
    hydrate: Hydrate,
) -> list[Any]:
    """The best `k` chunks of other documents (one per document unless `all_chunks`, one
    per content, what would crowd the first places held below them: `search.placing`),
    searching deeper while the item and its copies (`own`: the item's document and the
    files with its text), repeats or weak hits fill the list."""
    space, contextual = request.mode.value, Space.CONTEXTUAL.value
    where, k, minimum = request.filter or None, request.k, request.min_similarity
    size = snapshot.chunk_count(where) if where else snapshot.space_size(space)
    depth = k if request.all_chunks else k * 4
    while True:
        depth = min(depth, max(size, 1))
        found = snapshot.search(
            CandidateSearch(
                vectors={space: vectors[space]},
                depth=depth,
                where=where,
                cosine=(contextual, vectors[contextual]),
            )
        )
        ranked = found.vector[space]
        similarities = dict(found.vector.get(contextual, [])) | found.cosines
        places = Places(k, crowding(swamping_documents(found)), every_passage=request.all_chunks)
        holder: dict[str, int] = {}  # content -> the document standing for it
        for chunk_id, score in ranked:
            chunk = found.chunks.get(chunk_id)
            if chunk is None or places.shown(chunk.document_id):
                continue
            if chunk.document_id in own:
                continue  # the item, or a copy of it
            key = found.content_keys.get(chunk.document_id)
            if key is not None and holder.setdefault(key, chunk.document_id) != chunk.document_id:
                continue  # a copy of a document already chosen
            similarity = similarities.get(chunk_id)
            if minimum is not None and (similarity is None or round(similarity, 6) < minimum):
                continue
            places.offer(chunk, score)
            if places.full:
                break
        exhausted = depth >= size
        if minimum is not None and space == contextual and ranked:
            exhausted = exhausted or ranked[-1][1] < minimum
        if places.full or exhausted:
            found_by = {chunk_id: {space: rank} for rank, (chunk_id, _) in enumerate(ranked, 1)}
            return hydrate(snapshot, places.hits(), similarities, found_by, request)
        depth *= 4

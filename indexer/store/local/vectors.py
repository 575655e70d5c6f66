"""One vector space in a FAISS file: vectors keyed by their SQL chunk id.

FAISS holds only vectors and int64 ids (an `IndexIDMap2` over inner product); everything
else lives in SQL. The vectors sit in an exact `IndexFlatIP` or in an HNSW graph (see
`index_types`). A space is loaded from a base file, with the delta segments since
replayed on it (`segments.py`), and saved as a new base: written to a temporary file,
synced, then renamed into place.

HNSW cannot remove a node, so removing a vector from a graph overwrites its id with
`TOMBSTONE` (the id map is part of the file, so tombstones persist) and searches skip
negative ids; a rebuild drops them once they are `HNSW_REBUILD_TOMBSTONE_SHARE` of it.

A filtered search returns k allowed vectors whenever k are allowed. A graph walked with
a filter meets few allowed nodes when the filter is narrow (12 allowed of 3,012 found 6
of 10), so a filtered float32 graph is walked deeper by the share the filter keeps
(`_filtered_ef`), and where that walk would compute more distances than scoring every
allowed vector, the allowed vectors are scored exactly instead (`_scan`: the k best, as
a flat index finds). A quantized space scores its allowed vectors exactly when they are
a few (its float32 rows are read from disk). Any filtered graph search that comes back
short of k for a query is redone by `_scan` for it.

A quantized space (`flat-int8`, `hnsw-binary`...: `quantized.py`) holds codes in FAISS
and its float32 vectors beside it, and re-scores its candidates from those.

A reader holds a base once and masks what later deltas removed from it (`layered.py`)
through `without`: a view sharing the FAISS index that hides those ids from every read,
through the same id selectors as a filter.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import faiss
import numpy as np

from indexer.durable import write_atomically
from indexer.errors import IndexCorrupt, SpaceFileMissing
from indexer.store.index_types import (
    DEFAULT_QUANTIZATION,
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_SEARCH,
    HNSW_NEIGHBOURS,
    HNSW_REBUILD_TOMBSTONE_SHARE,
    space_structure,
)
from indexer.store.local.index_files import exact_file
from indexer.store.local.quantized import (
    ExactVectors,
    build_quantized,
    candidates,
    quantization_of,
    sign_codes,
    structure_of,
    write_exact,
)

TOMBSTONE = -1
_ID_MAPS = (faiss.IndexIDMap, faiss.IndexBinaryIDMap)  # the "2" variants are subclasses
_EXACT_ALLOWED_SHARE = 8  # a quantized search scores up to 8 x its candidates exactly
# About how many distances a graph search computes per unit of efSearch: each node it
# expands has up to 2 x M neighbours on the bottom layer.
_DISTANCES_PER_EF = 2 * HNSW_NEIGHBOURS
_SCAN_ROWS = 16_384  # float32 vectors an exact scan of a quantized space reads at once
_LIVE_IDS = faiss.IDSelectorNot(faiss.IDSelectorRange(np.iinfo(np.int64).min, 0))


def empty_structure(dim: int, structure: str) -> faiss.IndexIDMap2:
    """An empty space of unit vectors under inner product, in the given structure."""
    if structure == "hnsw":
        graph = faiss.IndexHNSWFlat(dim, HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        return faiss.IndexIDMap2(graph)
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


class VectorSpace:
    """A FAISS index of unit vectors under inner product (cosine), ids = chunk ids."""

    def __init__(self, dim: int, path: Path | None = None, structure: str = "flat"):
        self.dim = dim
        self.exact: ExactVectors | None = None  # a quantized space's float32 vectors
        if path is not None:
            self.index = self._load(path)
            if self.quantization != "none":
                self.exact = ExactVectors.open(exact_file(path), dim, self._id_map().copy())
        elif quantization_of(structure) != "none":
            raise ValueError("a quantized space is built from vectors: see `restructure`")
        else:
            self.index = empty_structure(dim, structure)
        # Counted once here and kept up to date by `remove`: `len` and `search` need it on
        # every query, and counting means scanning the whole id map.
        self._tombstones = int((self._id_map() < 0).sum())
        # Whether this is a view made by `without`, what it hides (sorted), how many of
        # those the space holds, and the selector that hides them (made when first needed).
        self._view = False
        self._hidden = np.zeros(0, dtype=np.int64)
        self._hidden_held = 0
        self._hiding: tuple[faiss.IDSelector, ...] | None = None
        self._sorted_ids: np.ndarray | None = None

    def _load(self, path: Path) -> faiss.Index:
        try:
            try:
                index = faiss.read_index(str(path))
            except RuntimeError:
                index = faiss.read_index_binary(str(path))  # a binary-quantized space
        except RuntimeError as error:
            if not path.exists():
                raise SpaceFileMissing(
                    f"{path.parent}: the vector space file {path.name} is missing: run "
                    "`ctxsearch repair` to rebuild it from the stored passages"
                ) from error
            raise IndexCorrupt(f"{path}: unreadable FAISS file") from error
        binary = isinstance(index, faiss.IndexBinary)
        if (index.d != 8 * ((self.dim + 7) // 8)) if binary else (index.d != self.dim):
            raise IndexCorrupt(f"{path}: dimension {index.d}, the manifest says {self.dim}")
        if not isinstance(index, _ID_MAPS):
            raise IndexCorrupt(f"{path}: not a FAISS index with ids")
        return index

    @property
    def structure(self) -> str:
        """`hnsw` or `flat`, with `-int8` or `-binary` when quantized."""
        return structure_of(self.index)

    @property
    def graph(self) -> bool:
        """Whether the space is an HNSW graph (which cannot drop a node: tombstones)."""
        return self.structure.startswith("hnsw")

    @property
    def quantization(self) -> str:
        """`none`, `int8` or `binary`."""
        return quantization_of(self.structure)

    def _codes(self, vectors: np.ndarray) -> np.ndarray:
        """What FAISS is given for float vectors: themselves, or their sign bits."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        return sign_codes(vectors) if self.quantization == "binary" else vectors

    def _id_map(self) -> np.ndarray:
        """The ids of the stored vectors in storage order (a view: writes go to FAISS)."""
        count = int(self.index.ntotal)
        if count == 0:
            return np.zeros(0, dtype=np.int64)
        return faiss.rev_swig_ptr(self.index.id_map.data(), count)

    def tombstones(self) -> int:
        """How many removed vectors an HNSW graph still holds."""
        return self._tombstones

    def __len__(self) -> int:
        return int(self.index.ntotal) - self.tombstones() - self._hidden_held

    def ids(self) -> np.ndarray:
        """Every id in the space."""
        stored = self._id_map()
        return self._visible(stored[stored >= 0].astype(np.int64))

    def _visible(self, ids: np.ndarray) -> np.ndarray:
        """`ids` without those a view hides."""
        return ids[~np.isin(ids, self._hidden)] if len(self._hidden) else ids

    def held(self, ids: np.ndarray) -> np.ndarray:
        """Those of `ids` the space holds (and does not hide), in their order."""
        if self._sorted_ids is None:
            stored = self._id_map()
            self._sorted_ids = np.sort(stored[stored >= 0])
        return self._visible(ids[_found_in(self._sorted_ids, ids)])

    def without(self, ids: np.ndarray) -> VectorSpace:
        """A view of this space that also hides `ids`, for reading only: it shares the
        FAISS index and the float32 vectors, so a reader loads a base once and masks
        what later deltas removed from it (never add to or remove from a view)."""
        self.held(np.zeros(0, np.int64))  # sorts the ids once, for every view to share
        view = copy.copy(self)
        view._view = True
        view._hidden = np.union1d(self._hidden, np.asarray(ids, dtype=np.int64))
        view._hidden_held = int(_found_in(self._sorted_ids, view._hidden).sum())
        view._hiding = None
        return view

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors under the given ids."""
        assert not self._view, "a view of a space is read-only"
        self._sorted_ids = None
        if len(ids):
            ids = np.asarray(ids, dtype=np.int64)
            self.index.add_with_ids(self._codes(vectors), ids)
            if self.exact is not None:
                self.exact.add(ids, np.asarray(vectors, dtype=np.float32))

    def remove(self, ids: np.ndarray) -> int:
        """Remove the given ids; return how many were present."""
        assert not self._view, "a view of a space is read-only"
        self._sorted_ids = None
        if not len(ids):
            return 0
        ids = np.asarray(ids, dtype=np.int64)
        if not self.graph:
            return int(self.index.remove_ids(ids))
        stored = self._id_map()
        hit = np.isin(stored, ids) & (stored >= 0)
        stored[hit] = TOMBSTONE
        self._tombstones += int(hit.sum())
        if self.exact is None:  # a quantized space keeps no reverse map (`quantized.py`)
            self.index.construct_rev_map()
        return int(hit.sum())

    def replay(self, tombstones: np.ndarray, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Apply a delta segment: remove its tombstones, then add its vectors, on one
        thread, so that an HNSW graph grows the same way at every replay."""
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            self.remove(tombstones)
            self.add(ids, vectors)
        finally:
            faiss.omp_set_num_threads(threads)

    def search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `k` nearest ids and their scores for each query row (-1 pads short lists);
        with `allowed`, only among those ids, and `k` of them whenever `k` are in the
        space (see the module doc). A quantized space re-scores its codes' best
        candidates from the float32 vectors."""
        k = max(1, min(k, len(self) if allowed is None else len(allowed)))
        if allowed is not None:
            allowed = self._visible(np.ascontiguousarray(allowed, dtype=np.int64))
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        fetch = (
            k if self.exact is None else max(1, min(candidates(self.quantization, k), len(self)))
        )
        ef = max(HNSW_EF_SEARCH, fetch)
        if allowed is not None:
            if self.exact is not None:
                if len(allowed) <= _EXACT_ALLOWED_SHARE * fetch:
                    # A few allowed ids: score them all exactly (this reads no more rows
                    # than a re-scoring would, much).
                    return self._scan(queries, k, allowed)
            elif self.graph:
                ef = max(ef, _filtered_ef(ef, len(self), len(allowed)))
                if len(allowed) <= ef * _DISTANCES_PER_EF:  # no more distances than the walk
                    return self._scan(queries, k, allowed)
        if self.exact is None:
            found = self._search(queries, k, allowed, ef)
        else:
            _, fetched = self._search(self._codes(queries), fetch, allowed, ef)
            found = _rescored(self.exact, queries, fetched, k)
        if allowed is not None and self.graph:
            short = (found[1] >= 0).sum(axis=1) < k
            if short.any():  # the walk met fewer than k allowed nodes: score them all
                found[0][short], found[1][short] = self._scan(queries[short], k, allowed)
        return found

    def _search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None, ef: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's search of the space (a graph walked with efSearch `ef`), among the
        `allowed` ids through a selector."""
        params = None
        selector = None
        if allowed is not None:
            selector = faiss.IDSelectorBatch(len(allowed), faiss.swig_ptr(allowed))
        elif len(self._hidden):
            selector = self._hidden_selector()
        if self.graph:
            params = faiss.SearchParametersHNSW(efSearch=ef)
            if selector is not None:
                params.sel = selector  # a tombstone's id (-1) is never an allowed one, nor shown
            elif self.tombstones():
                params.sel = _LIVE_IDS
        elif selector is not None:
            params = faiss.SearchParameters(sel=selector)
        return _one_thread_each(self.index, queries, k, params)

    def _hidden_selector(self) -> faiss.IDSelector:
        """A selector of the ids a view shows: not hidden, not a tombstone."""
        if self._hiding is None:
            hidden = np.append(self._hidden, TOMBSTONE)
            batch = faiss.IDSelectorBatch(len(hidden), faiss.swig_ptr(hidden))
            self._hiding = (faiss.IDSelectorNot(batch), batch)  # the batch kept alive with it
        return self._hiding[0]

    def _scan(
        self, queries: np.ndarray, k: int, allowed: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best of the `allowed` ids by exact inner product: the float32 vectors
        of a quantized space, or a flat scan of the vectors a graph keeps in storage
        order, through a selector that reads each position's id (-1 pads)."""
        if self.exact is not None:
            return _best_of(self.exact, queries, allowed, k)
        storage = faiss.downcast_index(self.index.index).storage
        batch = faiss.IDSelectorBatch(len(allowed), faiss.swig_ptr(allowed))
        selector = faiss.IDSelectorTranslated(self.index.id_map, batch)
        params = faiss.SearchParameters(sel=selector)
        scores, positions = _one_thread_each(storage, queries, k, params)
        return scores, np.where(positions >= 0, self._id_map()[positions], -1)

    def ranked(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[list[tuple[int, float]]]:
        """`search` as (id, score) lists, best first, one per query row; empty lists when
        the space holds nothing or nothing is allowed."""
        return ranked_hits(self, queries, k, allowed)

    def similarities(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        """The inner product (cosine) of one query vector with the stored vector of each id
        the space holds (ids it does not hold are left out)."""
        found: dict[int, float] = {}
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        if self.exact is not None:
            return {i: float(np.dot(v, query)) for i, v in self.vectors(ids).items()}
        for chunk_id in self._visible(np.asarray(ids, dtype=np.int64)):
            try:
                vector = self.index.reconstruct(int(chunk_id))
            except RuntimeError:
                continue
            found[int(chunk_id)] = float(np.dot(vector, query))
        return found

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vector of each id the space holds, by id (others left out)."""
        found: dict[int, np.ndarray] = {}
        if self.exact is not None:
            live = self.held(np.array([i for i in ids if i >= 0], dtype=np.int64))
            _, rows = self.exact.get(live)
            return {int(i): row for i, row in zip(live, rows, strict=True)}
        for chunk_id in self._visible(np.asarray(list(ids), dtype=np.int64)):
            if chunk_id < 0:  # a tombstone's id names no live vector
                continue
            try:
                found[int(chunk_id)] = self.index.reconstruct(int(chunk_id))
            except RuntimeError:
                continue
        return found

    def live_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The ids and vectors of every live entry, in storage order."""
        stored = self._id_map().copy()
        live = stored >= 0
        if len(self._hidden):
            live &= ~np.isin(stored, self._hidden)
        if self.exact is not None:
            return stored[live], self.exact.get(stored[live])[1]
        vectors = faiss.downcast_index(self.index.index).reconstruct_n(0, len(stored))
        return stored[live], vectors[live]

    def restructure(self, index_type: str, quantize: str = DEFAULT_QUANTIZATION) -> bool:
        """Rebuild into the structure `index_type` and `quantize` want at this size (from
        the float32 vectors); say if it rebuilt.

        Also rebuilds a graph whose tombstones reached their share.
        """
        wanted = space_structure(index_type, quantize, len(self))
        crowded = self.tombstones() >= HNSW_REBUILD_TOMBSTONE_SHARE * max(1, self.index.ntotal)
        if wanted == self.structure and not (self.graph and crowded):
            return False
        rebuilt = VectorSpace.built(self.dim, wanted, *self.live_vectors())
        self.index, self.exact, self._tombstones = rebuilt.index, rebuilt.exact, 0
        self._sorted_ids = None
        return True

    @classmethod
    def built(cls, dim: int, structure: str, ids: np.ndarray, vectors: np.ndarray) -> VectorSpace:
        """A space of `structure` holding `vectors` under `ids` (a quantized one trains its
        codes on them)."""
        space = cls(dim)
        if quantization_of(structure) == "none":
            space.index = empty_structure(dim, structure)
        else:
            space.index = build_quantized(structure, dim, vectors)
            space.exact = ExactVectors(dim)
        space.add(ids, vectors)
        return space

    def save_to(self, path: Path) -> None:
        """Write the space to `path` atomically and durably (`StoreWriteFailed` if the disk
        refuses: the file is not published, and the caller's run is rolled back)."""
        if self.exact is not None:  # first: a base is never published without its vectors
            write_exact(exact_file(path), self._id_map().copy(), self.exact, self.dim)
        write = faiss.write_index_binary if self.quantization == "binary" else faiss.write_index
        # Written through Python's file object, not FAISS's own writer: that one only
        # prints a failed close (a full disk) on stderr, and the file would look whole.
        write_atomically(
            path,
            lambda handle: write(self.index, faiss.PyCallbackIOWriter(handle.write)),
            "vector space file",
            "mid-space-save",
        )


class Searchable(Protocol):
    """A space that searches: a `VectorSpace`, or one with deltas laid over its base."""

    def __len__(self) -> int: ...

    def search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...


def ranked_hits(
    space: Searchable, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
) -> list[list[tuple[int, float]]]:
    """`space.search` as (id, score) lists, best first, one per query row, the -1 pads
    left out; empty lists when the space holds nothing or nothing is allowed."""
    if len(space) == 0 or (allowed is not None and len(allowed) == 0):
        return [[] for _ in range(len(queries))]
    scores, ids = space.search(queries, k, allowed)
    return [
        [(int(i), float(s)) for s, i in zip(row_scores, row_ids, strict=True) if i >= 0]
        for row_scores, row_ids in zip(scores, ids, strict=True)
    ]


def _found_in(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Which of `ids` are in `sorted_ids` (a mask)."""
    if not len(sorted_ids):
        return np.zeros(len(ids), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return sorted_ids[at] == ids


def _filtered_ef(ef: int, size: int, allowed: int) -> int:
    """The efSearch of a graph search that only `allowed` of `size` vectors may answer:
    `ef` over the share allowed, so the walk meets about as many allowed nodes as an
    unfiltered walk of `ef` meets nodes."""
    return -(-ef * size // max(allowed, 1))


def _one_thread_each(
    index: faiss.Index, queries: np.ndarray, k: int, params: faiss.SearchParameters | None
) -> tuple[np.ndarray, np.ndarray]:
    """`index.search`; one query runs on this thread alone."""
    if len(queries) > 1:
        return index.search(queries, k, params=params)
    # Split over OpenMP threads, one query waits on the slowest, and a busy core made
    # single queries 5x slower (see bench_faiss). The setting is per calling thread, so
    # it is restored for whatever runs next here.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        return index.search(queries, k, params=params)
    finally:
        faiss.omp_set_num_threads(threads)


def _best_of(
    exact: ExactVectors, queries: np.ndarray, allowed: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The best `k` of the `allowed` ids for each query by exact inner product (-1 pads),
    their float32 vectors read `_SCAN_ROWS` at a time."""
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    ids = np.full((len(queries), k), -1, dtype=np.int64)
    for start in range(0, len(allowed), _SCAN_ROWS):
        part = allowed[start : start + _SCAN_ROWS]
        known, vectors = exact.get(part)
        scores = np.hstack([scores, queries @ vectors[known].T])
        ids = np.hstack([ids, np.tile(part[known], (len(queries), 1))])
        best = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        scores, ids = np.take_along_axis(scores, best, 1), np.take_along_axis(ids, best, 1)
    return scores, ids


def _rescored(
    exact: ExactVectors, queries: np.ndarray, found: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The best `k` of each row's candidate ids by exact inner product (-1 pads)."""
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    ids = np.full((len(queries), k), -1, dtype=np.int64)
    for row, (query, candidate_ids) in enumerate(zip(queries, found, strict=True)):
        candidate_ids = candidate_ids[candidate_ids >= 0]
        known, vectors = exact.get(candidate_ids)
        exact_scores = vectors[known] @ query
        best = np.argsort(-exact_scores, kind="stable")[:k]
        scores[row, : len(best)] = exact_scores[best]
        ids[row, : len(best)] = candidate_ids[known][best]
    return scores, ids

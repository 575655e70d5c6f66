"""One vector space in a FAISS file: vectors keyed by their SQL chunk id.

FAISS holds only vectors and int64 ids (an `IndexIDMap2` over inner product); everything
else lives in SQL. The vectors sit in an exact `IndexFlatIP` or in an HNSW graph (see
`index_types`). A space is loaded from a base file, with the delta segments since
replayed on it (`segments.py`), and saved as a new base: written to a temporary file,
synced, then renamed into place.

HNSW cannot remove a node, so removing a vector from a graph overwrites its id with
`TOMBSTONE` (the id map is part of the file, so tombstones persist) and searches skip
negative ids; a rebuild drops them once they are `HNSW_REBUILD_TOMBSTONE_SHARE` of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import faiss
import numpy as np

from indexer.errors import IndexCorrupt, SpaceFileMissing, StoreWriteFailed
from indexer.faults import kill_point
from indexer.store.index_types import (
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_SEARCH,
    HNSW_NEIGHBOURS,
    HNSW_REBUILD_TOMBSTONE_SHARE,
    structure_for,
)

TOMBSTONE = -1
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
        self.index = self._load(path) if path is not None else empty_structure(dim, structure)
        # Counted once here and kept up to date by `remove`: `len` and `search` need it on
        # every query, and counting means scanning the whole id map.
        self._tombstones = int((self._id_map() < 0).sum())

    def _load(self, path: Path) -> faiss.IndexIDMap2:
        try:
            index = faiss.read_index(str(path))
        except RuntimeError as error:
            if not path.exists():
                raise SpaceFileMissing(
                    f"{path.parent}: the vector space file {path.name} is missing: run "
                    "`ctxsearch repair` to rebuild it from the stored passages"
                ) from error
            raise IndexCorrupt(f"{path}: unreadable FAISS file") from error
        if index.d != self.dim:
            raise IndexCorrupt(f"{path}: dimension {index.d}, the manifest says {self.dim}")
        if not isinstance(index, faiss.IndexIDMap2):
            raise IndexCorrupt(f"{path}: not a FAISS index with ids")
        return index

    @property
    def structure(self) -> str:
        """`hnsw` or `flat`."""
        inner = faiss.downcast_index(self.index.index)
        return "hnsw" if isinstance(inner, faiss.IndexHNSW) else "flat"

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
        return int(self.index.ntotal) - self.tombstones()

    def ids(self) -> np.ndarray:
        """Every id in the space."""
        stored = self._id_map()
        return stored[stored >= 0].astype(np.int64)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors under the given ids."""
        if len(ids):
            self.index.add_with_ids(
                np.ascontiguousarray(vectors, dtype=np.float32), np.asarray(ids, dtype=np.int64)
            )

    def remove(self, ids: np.ndarray) -> int:
        """Remove the given ids; return how many were present."""
        if not len(ids):
            return 0
        ids = np.asarray(ids, dtype=np.int64)
        if self.structure == "flat":
            return int(self.index.remove_ids(ids))
        stored = self._id_map()
        hit = np.isin(stored, ids) & (stored >= 0)
        stored[hit] = TOMBSTONE
        self._tombstones += int(hit.sum())
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
        with `allowed`, only among those ids (searched inside FAISS, through a selector)."""
        k = max(1, min(k, len(self) if allowed is None else len(allowed)))
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        params = None
        selector = None
        if allowed is not None:
            allowed = np.ascontiguousarray(allowed, dtype=np.int64)
            selector = faiss.IDSelectorBatch(len(allowed), faiss.swig_ptr(allowed))
        if self.structure == "hnsw":
            params = faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, k))
            if selector is not None:
                params.sel = selector  # a tombstone's id (-1) is never an allowed one
            elif self.tombstones():
                params.sel = _LIVE_IDS
        elif selector is not None:
            params = faiss.SearchParameters(sel=selector)
        if len(queries) > 1:
            return self.index.search(queries, k, params=params)
        # One query runs on this thread alone: split over OpenMP threads, it waits on the
        # slowest, and a busy core made single queries 5x slower (see bench_faiss). The
        # setting is per calling thread, so it is restored for whatever runs next here.
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            return self.index.search(queries, k, params=params)
        finally:
            faiss.omp_set_num_threads(threads)

    def ranked(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[list[tuple[int, float]]]:
        """`search` as (id, score) lists, best first, one per query row; empty lists when
        the space holds nothing or nothing is allowed."""
        if len(self) == 0 or (allowed is not None and len(allowed) == 0):
            return [[] for _ in range(len(queries))]
        scores, ids = self.search(queries, k, allowed)
        return [
            [(int(i), float(s)) for s, i in zip(row_scores, row_ids, strict=True) if i >= 0]
            for row_scores, row_ids in zip(scores, ids, strict=True)
        ]

    def similarities(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        """The inner product (cosine) of one query vector with the stored vector of each id
        the space holds (ids it does not hold are left out)."""
        found: dict[int, float] = {}
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        for chunk_id in ids:
            try:
                vector = self.index.reconstruct(int(chunk_id))
            except RuntimeError:
                continue
            found[int(chunk_id)] = float(np.dot(vector, query))
        return found

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vector of each id the space holds, by id (others left out)."""
        found: dict[int, np.ndarray] = {}
        for chunk_id in ids:
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
        vectors = faiss.downcast_index(self.index.index).reconstruct_n(0, len(stored))
        live = stored >= 0
        return stored[live], vectors[live]

    def restructure(self, index_type: str) -> bool:
        """Rebuild into the structure `index_type` wants at this size; say if it rebuilt.

        Also rebuilds a graph whose tombstones reached their share.
        """
        wanted = structure_for(index_type, len(self))
        crowded = self.tombstones() >= HNSW_REBUILD_TOMBSTONE_SHARE * max(1, self.index.ntotal)
        if wanted == self.structure and not (self.structure == "hnsw" and crowded):
            return False
        ids, vectors = self.live_vectors()
        self.index = empty_structure(self.dim, wanted)
        self._tombstones = 0
        self.add(ids, vectors)
        return True

    def save_to(self, path: Path) -> None:
        """Write the space to `path` atomically and durably (`StoreWriteFailed` if the disk
        refuses: the file is not published, and the caller's run is rolled back)."""
        temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        try:
            # Written through Python's file object, not FAISS's own writer: that one only
            # prints a failed close (a full disk) on stderr, and the file would look whole.
            with open(temporary, "wb") as handle:
                faiss.write_index(self.index, faiss.PyCallbackIOWriter(handle.write))
                handle.flush()
                os.fsync(handle.fileno())
        except (RuntimeError, OSError) as error:
            temporary.unlink(missing_ok=True)
            raise StoreWriteFailed(
                f"{path.parent}: cannot write the vector space file {path.name} "
                f"({_write_failure(error)})"
            ) from error
        kill_point("mid-space-save")
        os.replace(temporary, path)
        fsync_folder(path.parent)


def _write_failure(error: BaseException) -> str:
    """The operating system's reason in a FAISS or OS write error ("No space left on device")."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    found = re.search(r"\(([^()]+)\)\s*$", str(error))
    return found.group(1) if found else str(error).strip().splitlines()[-1]


def fsync_folder(folder: Path) -> None:
    """Make a rename inside `folder` durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

"""One vector space in a FAISS file: vectors keyed by their SQL chunk id.

FAISS holds only vectors and int64 ids (`IndexIDMap2` over inner product); everything
else lives in SQL. Saves are atomic: written to a temporary file, synced, then renamed.
"""

from __future__ import annotations

import os
from pathlib import Path

import faiss
import numpy as np

from indexer.errors import IndexCorrupt


class VectorSpace:
    """A FAISS index of unit vectors under inner product (cosine), ids = chunk ids."""

    def __init__(self, path: Path, dim: int):
        self.path = Path(path)
        self.dim = dim
        self.index = self._load() if self.path.exists() else self._empty()
        self.dirty = False

    def _empty(self) -> faiss.IndexIDMap2:
        return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))

    def _load(self) -> faiss.Index:
        try:
            index = faiss.read_index(str(self.path))
        except RuntimeError as error:
            raise IndexCorrupt(f"{self.path}: unreadable FAISS file") from error
        if index.d != self.dim:
            raise IndexCorrupt(f"{self.path}: dimension {index.d}, the manifest says {self.dim}")
        return index

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def ids(self) -> np.ndarray:
        """Every id in the space."""
        return faiss.vector_to_array(self.index.id_map).astype(np.int64)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors under the given ids."""
        if len(ids):
            self.index.add_with_ids(
                np.ascontiguousarray(vectors, dtype=np.float32), np.asarray(ids, dtype=np.int64)
            )
            self.dirty = True

    def remove(self, ids: np.ndarray) -> int:
        """Remove the given ids; return how many were present."""
        if not len(ids):
            return 0
        removed = int(self.index.remove_ids(np.asarray(ids, dtype=np.int64)))
        self.dirty = self.dirty or removed > 0
        return removed

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The `k` nearest ids and their scores for each query row (-1 pads short lists)."""
        k = max(1, min(k, len(self)))
        scores, ids = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        return scores, ids

    def save(self) -> None:
        """Write the space atomically if it changed since it was loaded or saved."""
        if not self.dirty and self.path.exists():
            return
        temporary = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        faiss.write_index(self.index, str(temporary))
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        _fsync_folder(self.path.parent)
        self.dirty = False


def _fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

"""One vector space in a FAISS file: vectors keyed by their SQL chunk id.

FAISS holds only vectors and int64 ids (`IndexIDMap2` over inner product); everything
else lives in SQL. A space is loaded from one generation's file and saved as the next
generation's: written to a temporary file, synced, then renamed into place.
"""

from __future__ import annotations

import os
from pathlib import Path

import faiss
import numpy as np

from indexer.errors import IndexCorrupt
from indexer.faults import kill_point


class VectorSpace:
    """A FAISS index of unit vectors under inner product (cosine), ids = chunk ids."""

    def __init__(self, dim: int, path: Path | None = None):
        self.dim = dim
        self.index = self._load(path) if path is not None else self._empty()

    def _empty(self) -> faiss.IndexIDMap2:
        return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))

    def _load(self, path: Path) -> faiss.Index:
        try:
            index = faiss.read_index(str(path))
        except RuntimeError as error:
            if not path.exists():
                raise FileNotFoundError(path) from error
            raise IndexCorrupt(f"{path}: unreadable FAISS file") from error
        if index.d != self.dim:
            raise IndexCorrupt(f"{path}: dimension {index.d}, the manifest says {self.dim}")
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

    def remove(self, ids: np.ndarray) -> int:
        """Remove the given ids; return how many were present."""
        if not len(ids):
            return 0
        return int(self.index.remove_ids(np.asarray(ids, dtype=np.int64)))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The `k` nearest ids and their scores for each query row (-1 pads short lists)."""
        k = max(1, min(k, len(self)))
        scores, ids = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        return scores, ids

    def save_to(self, path: Path) -> None:
        """Write the space to `path` atomically and durably."""
        temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        faiss.write_index(self.index, str(temporary))
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        kill_point("mid-space-save")
        os.replace(temporary, path)
        fsync_folder(path.parent)


def fsync_folder(folder: Path) -> None:
    """Make a rename inside `folder` durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

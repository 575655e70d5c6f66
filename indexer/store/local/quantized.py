"""Quantized vector spaces: codes in memory, float32 vectors on disk for re-scoring.

A quantized space keeps in memory only compact codes and the HNSW graph over them:
`int8` is FAISS's scalar quantizer (one byte a dimension, each dimension's range trained
on the vectors), `binary` the sign bit of each dimension searched by Hamming distance.
The float32 vectors stay in an `.exact.npy` file beside the base (one row per stored
position of the base, in its order), memory-mapped, never read whole; delta segments'
vectors are held in memory, as a replay holds them anyway. A search asks the codes for
`candidates(k)` ids and re-scores them exactly from the float32 vectors, so the scores
a quantized space returns are the same cosines a float32 one returns.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import BinaryIO

import faiss
import numpy as np

from indexer.durable import write_atomically
from indexer.errors import IndexCorrupt, SpaceFileMissing
from indexer.store.index_types import HNSW_EF_CONSTRUCTION, QUANTIZED_HNSW_NEIGHBOURS

# Candidates a search re-scores: at least `RESCORE_LEAST`, else `RESCORE_FACTOR[q]` x k
# (measured on real vectors by `ctxsearch lab bench --quantize`, docs/performance.md).
RESCORE_FACTOR = {"int8": 4, "binary": 50}
RESCORE_LEAST = {"int8": 40, "binary": 500}
_TRAINING_SAMPLE = 100_000
_WRITE_ROWS = 65_536


def quantization_of(structure: str) -> str:
    """`none`, `int8` or `binary`: the quantization a structure name says."""
    return structure.partition("-")[2] or "none"


def candidates(quantization: str, k: int) -> int:
    """How many candidates a search for `k` hits re-scores."""
    return max(RESCORE_LEAST[quantization], RESCORE_FACTOR[quantization] * k)


def sign_codes(vectors: np.ndarray) -> np.ndarray:
    """The binary codes of float vectors: one bit a dimension, set where it is positive."""
    return np.packbits(np.asarray(vectors) > 0, axis=1)


def build_quantized(structure: str, dim: int, vectors: np.ndarray) -> faiss.Index:
    """An empty quantized index of `structure` (`flat-int8`, `hnsw-binary`...), trained
    on `vectors` where its codes need it, wrapped in an id map without a reverse map
    (about 50 bytes a vector: the float32 vectors are looked up in `ExactVectors`)."""
    kind, _, quantization = structure.partition("-")
    if quantization == "binary":
        bits = 8 * ((dim + 7) // 8)
        if kind == "hnsw":
            inner = faiss.IndexBinaryHNSW(bits, QUANTIZED_HNSW_NEIGHBOURS)
            inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        else:
            inner = faiss.IndexBinaryFlat(bits)
        return faiss.IndexBinaryIDMap(inner)
    qtype = faiss.ScalarQuantizer.QT_8bit
    if kind == "hnsw":
        inner = faiss.IndexHNSWSQ(dim, qtype, QUANTIZED_HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    else:
        inner = faiss.IndexScalarQuantizer(dim, qtype, faiss.METRIC_INNER_PRODUCT)
    sample = vectors[:: max(1, len(vectors) // _TRAINING_SAMPLE)]
    # Trained on the sample and its negation, each dimension's range is symmetric about
    # zero: never empty (a single vector would give zero width), and room for what
    # later deltas add.
    inner.train(np.ascontiguousarray(np.concatenate([sample, -sample]), dtype=np.float32))
    return faiss.IndexIDMap(inner)


def structure_of(index: faiss.Index) -> str:
    """The structure name of a loaded FAISS index (`hnsw`, `flat-int8`, `hnsw-binary`...)."""
    if isinstance(index, faiss.IndexBinary):
        inner = faiss.downcast_IndexBinary(index.index)
        return "hnsw-binary" if isinstance(inner, faiss.IndexBinaryHNSW) else "flat-binary"
    inner = faiss.downcast_index(index.index)
    kind = "hnsw" if isinstance(inner, faiss.IndexHNSW) else "flat"
    if isinstance(inner, (faiss.IndexHNSWSQ, faiss.IndexScalarQuantizer)):
        return f"{kind}-int8"
    return kind


class ExactVectors:
    """The float32 vector of each id of a quantized space: the base's, memory-mapped,
    and those added since, in memory (the latest, for an id removed and added again)."""

    def __init__(self, dim: int, base_ids: np.ndarray | None = None, base_rows=None):
        self.dim = dim
        self._base_rows = base_rows
        ids = np.zeros(0, np.int64) if base_ids is None else np.asarray(base_ids, np.int64)
        order = np.argsort(ids, kind="stable")
        self._base_sorted, self._base_order = ids[order], order.astype(np.int32)
        self._added: list[tuple[np.ndarray, np.ndarray]] = []
        self._added_lookup: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @classmethod
    def open(cls, path: Path, dim: int, base_ids: np.ndarray) -> ExactVectors:
        """The vectors of a base whose storage order is `base_ids`, mapped from `path`."""
        try:
            rows = np.load(path, mmap_mode="r", allow_pickle=False)
        except FileNotFoundError as error:
            raise SpaceFileMissing(
                f"{path.parent}: the float32 vectors file {path.name} is missing: run "
                "`ctxsearch repair` to rebuild the spaces from the stored passages"
            ) from error
        except (OSError, ValueError) as error:
            raise IndexCorrupt(f"{path}: unreadable float32 vectors file") from error
        if rows.dtype != np.float32 or rows.shape != (len(base_ids), dim):
            raise IndexCorrupt(
                f"{path}: {rows.shape} float32 vectors, the space holds {len(base_ids)} x {dim}"
            )
        if isinstance(rows, np.memmap) and len(rows):
            rows._mmap.madvise(mmap.MADV_RANDOM)  # a re-scoring reads a few scattered rows
        return cls(dim, base_ids, rows)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Keep the vectors of ids added since the base."""
        if len(ids):
            self._added.append((np.asarray(ids, np.int64), np.asarray(vectors, np.float32)))
            self._added_lookup = None

    def get(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of `ids` are known, and their vectors (zero rows for the unknown)."""
        ids = np.asarray(ids, np.int64)
        found = np.zeros(len(ids), bool)
        out = np.zeros((len(ids), self.dim), np.float32)
        if self._added:
            sorted_ids, order, matrix = self._lookup()
            hit, rows = _positions(sorted_ids, order, ids)
            out[hit] = matrix[rows[hit]]
            found |= hit
        if self._base_rows is not None and len(self._base_sorted):
            hit, rows = _positions(self._base_sorted, self._base_order, ids)
            hit &= ~found
            wanted = np.flatnonzero(hit)
            if len(wanted):
                picked = rows[hit]
                sequence = np.argsort(picked)  # in file order: fewer, closer page reads
                out[wanted[sequence]] = self._base_rows[picked[sequence]]
            found |= hit
        return found, out

    def _lookup(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._added_lookup is None:
            ids = np.concatenate([ids for ids, _ in self._added])
            matrix = np.concatenate([vectors for _, vectors in self._added])
            # An id removed and added again (a graph replaying deltas keeps both): the
            # latest vector is its vector.
            _, last = np.unique(ids[::-1], return_index=True)
            latest = np.sort(len(ids) - 1 - last)
            ids, matrix = ids[latest], matrix[latest]
            self._added = [(ids, matrix)]
            order = np.argsort(ids, kind="stable")
            self._added_lookup = (ids[order], order, matrix)
        return self._added_lookup


def _positions(
    sorted_ids: np.ndarray, order: np.ndarray, ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each id: whether `sorted_ids` holds it, and its row (through `order`)."""
    at = np.searchsorted(sorted_ids, ids)
    inside = at < len(sorted_ids)
    hit = np.zeros(len(ids), bool)
    hit[inside] = sorted_ids[at[inside]] == ids[inside]
    rows = np.zeros(len(ids), np.int64)
    rows[hit] = order[at[hit]]
    return hit, rows


def write_exact(path: Path, stored_ids: np.ndarray, exact: ExactVectors, dim: int) -> None:
    """Write the float32 vector of each stored position (zeros for tombstones) to `path`,
    atomically, a slice at a time (never the whole matrix in memory twice); the caller
    syncs the folder (`VectorSpace.save_to`, after the codes' file)."""
    header = {"descr": "<f4", "fortran_order": False, "shape": (len(stored_ids), dim)}

    def write(handle: BinaryIO) -> None:
        np.lib.format.write_array_header_1_0(handle, header)
        for start in range(0, len(stored_ids), _WRITE_ROWS):
            _, rows = exact.get(stored_ids[start : start + _WRITE_ROWS])
            handle.write(rows.tobytes())

    write_atomically(path, write, "vectors file", "mid-space-save", sync_folder=False)

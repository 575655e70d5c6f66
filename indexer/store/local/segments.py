"""A vector space of an index folder as files: a base, and the delta segments since it.

A base is a whole space in one FAISS file (`vectors.py`). A delta segment is what one run
changed in it: the ids it removed (tombstones) and the vectors, with their ids, it added,
in one `.npz` file. A space is its base with each delta replayed in order, tombstones
first: the very operations a writer holding the space in memory makes, in the same order,
so a space read from segments holds what the merged base holds (graph and all: a replay
runs on one thread, so an HNSW graph grows the same way every time). That is how a
writer reads a space; a reader lays the deltas over a base it keeps (`layered.py`).

The manifest names each space's segments (`Segments`, in `Manifest.segments`); a run
publishes its delta, or a merged base when they pile up, by committing the manifest that
names it, and the sweep keeps exactly the files the published manifest names.

When a run merges (`merge_due`) instead of adding a delta: when the deltas, counting
each tombstone as the row it leaves dead in the base, would weigh more than
`MERGE_SHARE` of the base file and more than `MERGE_FLOOR_BYTES` (below that, replaying
costs readers little and a merge would cost the writer little too); when the space
wants the other structure (`auto` crossing the HNSW threshold); or at every run with
`CTXSEARCH_MAX_DELTAS=0`. The share bounds the merge's cost, amortised, to a few times
the bytes the deltas wrote, and makes the bases grow geometrically.

A space holds at most `CTXSEARCH_MAX_DELTAS` deltas (8): a run that would add one more
folds its change and the youngest deltas into one delta instead (`deltas_to_fold`,
`folded_delta`), leaving the base alone. Many small runs in a row (a contextual fill
publishes every few hundred passages) would otherwise rewrite the whole base every few
runs, a cost that grows with the square of the index; folded, each delta's bytes are
rewritten a few times at most, and readers keep their base.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from indexer import config
from indexer.durable import write_atomically
from indexer.errors import IndexCorrupt, SpaceFileMissing
from indexer.store.local.index_files import delta_file, exact_file, space_file

if TYPE_CHECKING:
    from indexer.store.local.vectors import VectorSpace
    from indexer.store.manifest import Manifest

MERGE_SHARE = 0.25
MERGE_FLOOR_BYTES = 4 * 2**20


@dataclass
class Segments:
    """The files of one space: the generation that wrote its base, those that wrote each
    delta since (in order), what the deltas weigh, and the base's structure."""

    base: int
    deltas: list[int] = field(default_factory=list)
    delta_bytes: int = 0
    tombstones: int = 0  # ids the deltas removed (each may leave a dead row in the base)
    # `flat` or `hnsw` (with `-int8` or `-binary` when quantized); "" for an index from
    # before segments
    structure: str = ""

    @classmethod
    def of(cls, manifest: Manifest, space: str) -> Segments:
        """The segments the manifest names for `space` (an index from before segments:
        the base of its generation, alone)."""
        recorded = manifest.segments.get(space)
        if recorded is None:
            return cls(base=manifest.generation)
        return cls(**recorded)

    def to_json(self) -> dict:
        """The segments as the manifest stores them."""
        return asdict(self)

    def files(self, directory: Path, space: str) -> list[Path]:
        """The base file (and a quantized base's float32 vectors), then each delta file,
        in replay order."""
        base = space_file(directory, space, self.base)
        exact = [exact_file(base)] if self.structure.partition("-")[2] else []
        return [base, *exact] + [
            delta_file(directory, space, generation) for generation in self.deltas
        ]

    def weight(self, dim: int) -> int:
        """The deltas' bytes, counting each tombstone as the dead row it may leave."""
        return self.delta_bytes + self.tombstones * dim * 4


def named_files(directory: Path, manifest: Manifest) -> set[Path]:
    """Every space file the manifest names: what the sweep must keep."""
    return {
        path
        for space in manifest.spaces
        for path in Segments.of(manifest, space).files(directory, space)
    }


def merge_due(segments: Segments, dim: int, base_bytes: int, wanted_structure: str) -> bool:
    """Whether a run should merge the space into a new base rather than add a delta to
    `segments`, which already count that delta."""
    if wanted_structure != segments.structure or config.max_deltas() == 0:
        return True
    return segments.weight(dim) > max(MERGE_SHARE * base_bytes, MERGE_FLOOR_BYTES)


def deltas_to_fold(sizes: list[int], change_size: int, most: int) -> int:
    """How many of the youngest deltas (`sizes`, oldest first) to fold with a run's change
    into one delta, so that at most `most` deltas stay: the fewest that bring the count
    down, then more while the folded ones weigh at least the next older one. The deltas'
    sizes then fall with their age, like a binary counter's digits, and each byte is
    rewritten a logarithmic number of times, never once per run."""
    folded, weight = 0, change_size
    while folded < len(sizes):
        older = sizes[len(sizes) - 1 - folded]
        if len(sizes) - folded + 1 <= most and weight < older:
            break
        weight += older
        folded += 1
    return folded


def folded_delta(
    deltas: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One delta (tombstones, ids, vectors) that leaves a space as `deltas` replayed in
    order do: every id they remove, then what they add that no later one removes."""
    tombstones = np.unique(
        np.concatenate([removed for removed, _, _ in deltas] or [np.zeros(0, np.int64)])
    )
    later: np.ndarray = np.zeros(0, np.int64)
    kept = []
    for removed, ids, vectors in reversed(deltas):
        keep = ~np.isin(ids, later)
        kept.append((ids[keep], vectors[keep]))
        later = np.concatenate([later, removed])
    dim = deltas[0][2].shape[1]
    ids = np.concatenate([ids for ids, _ in reversed(kept)] or [np.zeros(0, np.int64)])
    vectors = np.concatenate([v for _, v in reversed(kept)] or [np.zeros((0, dim), np.float32)])
    return tombstones.astype(np.int64), ids.astype(np.int64), vectors.astype(np.float32)


def load_space(directory: Path, space: str, dim: int, segments: Segments) -> VectorSpace:
    """The space the segments hold: the base with each delta replayed on it."""
    from indexer.store.local.vectors import VectorSpace

    loaded = VectorSpace(dim, space_file(directory, space, segments.base))
    deltas = [read_delta(delta_file(directory, space, g), dim) for g in segments.deltas]
    if loaded.graph:
        for tombstones, ids, vectors in deltas:
            loaded.replay(tombstones, ids, vectors)
        return loaded
    # A flat space compacts itself at every removal: the deltas replayed as one leave the
    # vectors in the same order as one delta at a time would.
    if deltas:
        loaded.replay(*folded_delta(deltas))
    return loaded


def write_delta(path: Path, tombstones: np.ndarray, ids: np.ndarray, vectors: np.ndarray) -> int:
    """Write a delta segment atomically and durably; its size in bytes (`StoreWriteFailed`
    if the disk refuses: nothing is published, and the run is rolled back)."""
    write_atomically(
        path,
        lambda handle: np.savez(handle, tombstones=tombstones, ids=ids, vectors=vectors),
        "delta segment",
        "mid-delta-save",
    )
    return path.stat().st_size


def read_delta(path: Path, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A delta segment's tombstones, ids and vectors."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            tombstones, ids, vectors = stored["tombstones"], stored["ids"], stored["vectors"]
    except FileNotFoundError as error:
        raise SpaceFileMissing(
            f"{path.parent}: the delta segment {path.name} is missing: run "
            "`ctxsearch repair` to rebuild the spaces from the stored passages"
        ) from error
    except (OSError, ValueError, KeyError) as error:
        raise IndexCorrupt(f"{path}: unreadable delta segment") from error
    if vectors.ndim != 2 or vectors.shape != (len(ids), dim) or tombstones.ndim != 1:
        raise IndexCorrupt(f"{path}: a delta segment of the wrong shape")
    return tombstones.astype(np.int64), ids.astype(np.int64), vectors.astype(np.float32)

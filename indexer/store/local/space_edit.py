"""The writer's view of one vector space during a change: what the run removes and adds,
published as one delta segment (folded with the youngest deltas when they would be too
many, or merged into a new base when they weigh too much).

The published space is loaded only if the run reads it (`vectors`, a merge): a
run that only removes and adds passages never reads the base, so what it costs to
publish depends on what it changed, not on the size of the index.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from indexer import config
from indexer.store.index_types import DEFAULT_QUANTIZATION, space_structure
from indexer.store.local.index_files import delta_file, space_file
from indexer.store.local.segments import (
    Segments,
    deltas_to_fold,
    folded_delta,
    load_space,
    merge_due,
    read_delta,
    write_delta,
)
from indexer.store.local.vectors import VectorSpace


class SpaceEdit:
    """One space's published `segments` (None: start from an empty space, as a rebuild
    does) and the run's removals and additions, kept in the order they happen."""

    def __init__(self, directory: Path, name: str, dim: int, segments: Segments | None):
        self.directory = directory
        self.name = name
        self.dim = dim
        self.segments = segments
        self._space: VectorSpace | None = None if segments is not None else VectorSpace(dim)
        self._removed: list[np.ndarray] = []
        self._added: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors under the given ids."""
        if not len(ids):
            return
        ids = np.array(ids, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self._space is not None:
            self._space.add(ids, vectors)
        if self.segments is not None:
            self._added.append((ids, vectors))

    def remove(self, ids: np.ndarray) -> None:
        """Remove the given ids (those the published space holds, and those this run
        added)."""
        if not len(ids):
            return
        ids = np.asarray(ids, dtype=np.int64)
        if self._space is not None:
            self._space.remove(ids)
        if self.segments is None:
            return
        self._removed.append(ids)
        kept = []
        for added_ids, vectors in self._added:
            keep = ~np.isin(added_ids, ids)
            if keep.any():
                kept.append((added_ids[keep], vectors[keep]))
        self._added = kept

    def loaded(self, consume: bool = False) -> VectorSpace:
        """The space as it stands in this run: the published one with the run's changes
        (`consume`: handing them over, so that they are not held twice)."""
        if self._space is None:
            assert self.segments is not None
            space = load_space(self.directory, self.name, self.dim, self.segments)
            for ids in self._removed:
                space.remove(ids)
            for index in range(len(self._added)):
                space.add(*self._added[index])
                if consume:
                    self._added[index] = (np.zeros(0, np.int64), np.zeros((0, self.dim)))
            self._space = space
        if consume:
            self._removed, self._added = [], []
        return self._space

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The vector of each id the space holds as it stands in this run, by id."""
        return self.loaded().vectors(ids)

    def changed(self) -> bool:
        """Whether the run removed or added anything here."""
        return bool(self._removed or self._added)

    def publish(
        self,
        generation: int,
        vectors: int,
        index_type: str,
        merge: bool = False,
        quantize: str = DEFAULT_QUANTIZATION,
    ) -> Segments:
        """Write the run's change as `generation`'s files; the segments that hold the space
        now. `vectors` is how many it holds (one per stored passage). A space whose
        structure or quantization is no longer the one wanted is rebuilt whole."""
        if self.segments is None or merge:
            return self._merge(generation, index_type, quantize)
        wanted = space_structure(index_type, quantize, vectors)
        if not self.changed():
            if wanted == self.segments.structure:
                return self.segments
            # another index type or quantization asked for
            return self._merge(generation, index_type, quantize)
        tombstones = (
            np.unique(np.concatenate(self._removed)) if self._removed else np.zeros(0, np.int64)
        )
        ids, added = self._additions()
        proposed = Segments(
            base=self.segments.base,
            deltas=[*self.segments.deltas, generation],
            delta_bytes=self.segments.delta_bytes + ids.nbytes + added.nbytes + tombstones.nbytes,
            tombstones=self.segments.tombstones + len(tombstones),
            structure=self.segments.structure,
        )
        base_bytes = space_file(self.directory, self.name, self.segments.base).stat().st_size
        if merge_due(proposed, self.dim, base_bytes, wanted):
            return self._merge(generation, index_type, quantize)
        if len(proposed.deltas) > config.max_deltas():
            return self._fold(generation, (tombstones, ids, added))
        written = write_delta(
            delta_file(self.directory, self.name, generation), tombstones, ids, added
        )
        proposed.delta_bytes = self.segments.delta_bytes + written
        return proposed

    def _fold(self, generation: int, change: tuple[np.ndarray, np.ndarray, np.ndarray]) -> Segments:
        """Write the run's change and the youngest deltas as one delta, `generation`'s
        (the base, and the older deltas, stay as they are)."""
        assert self.segments is not None
        deltas = self.segments.deltas
        paths = [delta_file(self.directory, self.name, g) for g in deltas]
        sizes = [path.stat().st_size for path in paths]
        folded = deltas_to_fold(sizes, sum(part.nbytes for part in change), config.max_deltas())
        kept = len(deltas) - folded
        parts = [read_delta(path, self.dim) for path in paths[kept:]]
        tombstones, ids, vectors = folded_delta([*parts, change])
        written = write_delta(
            delta_file(self.directory, self.name, generation), tombstones, ids, vectors
        )
        left_out = sum(len(removed) for removed, _, _ in parts)
        return Segments(
            base=self.segments.base,
            deltas=[*deltas[:kept], generation],
            delta_bytes=sum(sizes[:kept]) + written,
            tombstones=self.segments.tombstones - left_out + len(tombstones),
            structure=self.segments.structure,
        )

    def _additions(self) -> tuple[np.ndarray, np.ndarray]:
        if not self._added:
            return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
        ids = np.concatenate([ids for ids, _ in self._added])
        return ids, np.concatenate([vectors for _, vectors in self._added])

    def _merge(self, generation: int, index_type: str, quantize: str) -> Segments:
        """Write the space whole as `generation`'s base."""
        space = self.loaded(consume=True)
        space.restructure(index_type, quantize)
        space.save_to(space_file(self.directory, self.name, generation))
        return Segments(base=generation, structure=space.structure)

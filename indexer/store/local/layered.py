"""A vector space as readers hold it: the base loaded once, each delta laid over it.

A run publishes what it changed in a space as a delta segment, and merges the deltas
into a new base when they pile up (`segments.py`). A reader that replayed every delta on
a fresh copy of the base at each new generation would pay for the whole space at every
write, however small. Instead a reader keeps the base it loaded for as long as the
manifest names it, and lays the deltas over it:

- the base, as a view hiding every id a delta removed since (`VectorSpace.without`: the
  FAISS index and the float32 vectors are shared, never copied);
- then each delta's additions, in a small exact space (flat, float32) of their own, as a
  view hiding what a later delta removed.

A new generation that adds deltas costs a reader their files and a few sorted id arrays:
the base is not read again, and the previous generation's object is left as it was, so a
reader still searching that generation sees exactly it. Deltas folded into one
(`segments.py`) cost their files again, not the base. Only a new base (a merge, a
rebuild, another structure) is loaded whole.

A search asks each layer for its k best and keeps the k best of them all. The layers
hold the merged space's vectors (the base's survivors, then each delta's additions in
turn), scored by the same kernel, so a flat float32 space answers as the merged one: the
same scores, the same ids in the same order, except which of several equal vectors fill
the last places kept. FAISS's own choice there depends on the order it scans in (it
keeps the first it meets, and a better one met later evicts the lowest-placed of them);
here the earlier layer's are kept, and equal scores are listed from the latest layer
down, as FAISS lists them from the highest position down.

An HNSW base is walked as it was loaded, where the merged graph would also have the
additions linked in: the additions are scored exactly instead, and the two answer the
same wherever the merged graph's walk is exact. A quantized base re-scores its own
candidates and the additions are scored exactly, where the merged space would take them
only from among its codes' best candidates: its answer is the merged space's, or closer
to the exact one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from indexer.store.local.index_files import delta_file, space_file
from indexer.store.local.segments import Segments, read_delta
from indexer.store.local.vectors import VectorSpace, ranked_hits

_PAD_SCORE = np.finfo(np.float32).min  # what FAISS scores a -1 pad with


class LayeredSpace:
    """The `segments` of a space as one space: the loaded `base` (shared by every
    generation that names it), and the `layers` searched: the base's view, then each
    delta's additions."""

    def __init__(self, segments: Segments, base: VectorSpace, layers: tuple[VectorSpace, ...]):
        self.segments = segments
        self.base = base
        self.layers = layers

    @property
    def dim(self) -> int:
        return self.base.dim

    @property
    def structure(self) -> str:
        """The base's structure (`flat`, `hnsw-int8`...); the additions are flat."""
        return self.base.structure

    def __len__(self) -> int:
        return sum(len(layer) for layer in self.layers)

    def ids(self) -> np.ndarray:
        """Every id in the space: the base's, then each delta's."""
        return np.concatenate([layer.ids() for layer in self.layers])

    def live_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The ids and vectors of every live entry, in the merged space's order."""
        ids, vectors = zip(*(layer.live_vectors() for layer in self.layers), strict=True)
        return np.concatenate(ids), np.concatenate(vectors)

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vector of each id the space holds, by id (others left out)."""
        wanted = np.asarray(list(ids), dtype=np.int64)
        return {i: v for layer in self.layers for i, v in layer.vectors(layer.held(wanted)).items()}

    def similarities(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        """The cosine of `query` with the stored vector of each id the space holds."""
        wanted = np.asarray(ids, dtype=np.int64)
        return {
            i: s
            for layer in self.layers
            for i, s in layer.similarities(query, layer.held(wanted).tolist()).items()
        }

    def search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `k` nearest ids and their scores for each query row (-1 pads short lists),
        with `allowed`, only among those ids: `VectorSpace.search` over every layer."""
        if len(self.layers) == 1:
            return self.layers[0].search(queries, k, allowed)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if allowed is not None:
            allowed = np.ascontiguousarray(allowed, dtype=np.int64)
        k = max(1, min(k, len(self) if allowed is None else len(allowed)))
        shape = (len(queries), k * len(self.layers))
        scores, ids = np.full(shape, -np.inf, np.float32), np.full(shape, -1, np.int64)
        for number, layer in enumerate(self.layers):
            held = None if allowed is None else layer.held(allowed)
            if len(layer) == 0 or (held is not None and not len(held)):
                continue
            found_scores, found_ids = layer.search(queries, k, held)
            width = found_ids.shape[1]
            scores[:, number * k : number * k + width] = found_scores
            ids[:, number * k : number * k + width] = found_ids
        return _best(scores, ids, k)

    def ranked(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[list[tuple[int, float]]]:
        """`search` as (id, score) lists, best first, one per query row; empty lists when
        the space holds nothing or nothing is allowed."""
        return ranked_hits(self, queries, k, allowed)

    def laid_over(
        self, segments: Segments, deltas: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    ) -> LayeredSpace:
        """The space with more `deltas` (tombstones, ids, vectors) laid over it, as
        `segments` name them: new views, this object left as it is."""
        layers = list(self.layers)
        for tombstones, ids, vectors in deltas:
            if len(tombstones):  # removed first, then added: a delta never hides its own
                layers = [layer.without(tombstones) for layer in layers]
            if len(ids):
                layers.append(VectorSpace.built(self.dim, "flat", ids, vectors))
        return LayeredSpace(segments, self.base, tuple(layers))

    def has_base_of(self, segments: Segments) -> bool:
        """Whether `segments` name this space's base (whatever their deltas)."""
        return segments.base == self.segments.base and segments.structure == self.segments.structure

    def extended_by(self, segments: Segments) -> bool:
        """Whether `segments` name this space's base and deltas, and maybe more deltas."""
        deltas = self.segments.deltas
        return self.has_base_of(segments) and segments.deltas[: len(deltas)] == deltas


def read_space(
    directory: Path,
    space: str,
    dim: int,
    segments: Segments,
    previous: LayeredSpace | None = None,
) -> LayeredSpace:
    """The space `segments` hold, for readers: `previous` (the same space at an earlier
    generation) with only the newer deltas read, when the segments extend it; else its
    base read whole, with every delta."""
    if previous is None or not previous.extended_by(segments):
        if previous is not None and previous.has_base_of(segments):  # deltas were folded
            base = previous.base
        else:
            base = VectorSpace(dim, space_file(directory, space, segments.base))
        empty = Segments(base=segments.base, structure=segments.structure)
        previous = LayeredSpace(empty, base, (base,))
    newer = segments.deltas[len(previous.segments.deltas) :]
    deltas = [read_delta(delta_file(directory, space, generation), dim) for generation in newer]
    return previous.laid_over(segments, deltas)


def _best(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best of each row of the layers' answers side by side (`k` columns a
    layer): of equal scores, the earlier layer's kept, and listed from the latest layer
    down (within a layer, in the order FAISS listed them)."""
    columns = np.arange(scores.shape[1])
    layer = np.broadcast_to(columns // k, scores.shape)
    # Within one layer's answer, equal scores come from the highest position down.
    listed = np.broadcast_to(columns % k, scores.shape)
    score = np.where(ids >= 0, scores, -np.inf)
    # Keep the best scores, and of equal ones the earliest layer's, the latest listed in it
    # first (FAISS lists equal scores from the highest position down).
    kept = np.lexsort((-listed, layer, -score), axis=-1)[:, :k]
    kept_score = np.take_along_axis(score, kept, 1)
    kept_layer = np.take_along_axis(layer, kept, 1)
    kept_listed = np.take_along_axis(listed, kept, 1)
    # List them best first, and equal scores from the latest layer down.
    order = np.take_along_axis(kept, np.lexsort((kept_listed, -kept_layer, -kept_score)), 1)
    best_ids = np.take_along_axis(ids, order, 1)
    best_scores = np.where(best_ids >= 0, np.take_along_axis(scores, order, 1), _PAD_SCORE)
    return best_scores, best_ids

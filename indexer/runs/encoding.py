"""Where an indexing run's chunks are encoded: in this process, or on a Ray cluster.

The pipeline hands a backend its batches in order, each an opaque item with the texts of
its chunks, and gets back every item with one (len(texts), dim) float32 matrix per space
of the index, in the same order. Everything else (reading, chunking, the diff, writing,
the lock, the atomic publish) stays with the pipeline, whichever backend encodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

from indexer.spaces import CONTEXTUAL
from indexer.store.manifest import Manifest

if TYPE_CHECKING:
    from indexer.encoders.base import Encoder
    from indexer.encoders.for_index import IndexEncoders

Item = TypeVar("Item")
Vectors = dict[str, np.ndarray]


class EncodingBackend(Protocol):
    """Encodes a run's batches; `workers` says how many encoded (0 until one is needed)."""

    workers: int

    def encode(
        self, manifest: Manifest, batches: Iterable[tuple[Item, list[str]]]
    ) -> Iterator[tuple[Item, Vectors]]:
        """Every (item, texts) of `batches` as (item, vectors by space), in order."""
        ...

    def close(self) -> None:
        """Let go of whatever the backend started (a cluster connection, say)."""
        ...


class LocalEncoding:
    """Encodes in this process with the encoders of the pipeline's loaded model.

    `progress(n)`, if given, hears of every `n` chunks through the contextual encoder
    (the slow one) as they are done, so a batch of many chunks advances as it goes.
    `spaces`, if given, are the spaces it encodes (default: every space of the index).
    """

    def __init__(
        self,
        encoders_for: Callable[[Manifest], IndexEncoders],
        progress: Callable[[int], None] | None = None,
        spaces: Sequence[str] | None = None,
    ):
        self._encoders_for = encoders_for
        self._progress = progress
        self._spaces = spaces
        self.workers = 0

    def encode(
        self, manifest: Manifest, batches: Iterable[tuple[Item, list[str]]]
    ) -> Iterator[tuple[Item, Vectors]]:
        spaces = manifest.spaces if self._spaces is None else self._spaces
        for item, texts in batches:
            if not texts:  # every vector of the batch is reused
                yield (
                    item,
                    {name: np.zeros((0, manifest.dim_of(name)), np.float32) for name in spaces},
                )
                continue
            encoders = self._encoders_for(manifest)
            self.workers = 1
            yield item, {name: self._encode(encoders[name], texts) for name in spaces}

    def _encode(self, encoder: Encoder, texts: list[str]) -> np.ndarray:
        if encoder.name == CONTEXTUAL:
            return encoder.encode(texts, progress=self._progress)
        return encoder.encode(texts)

    def close(self) -> None:
        pass

"""Where an indexing run's chunks are encoded: in this process, or on a Ray cluster.

The pipeline hands a backend its batches in order, each an opaque item with the texts of
its chunks, and gets back every item with one (len(texts), dim) float32 matrix per space
of the index, in the same order. Everything else (reading, chunking, the diff, writing,
the lock, the atomic publish) stays with the pipeline, whichever backend encodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar

import numpy as np

from indexer.store.manifest import Manifest

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
    """Encodes in this process with the encoders of the pipeline's loaded model."""

    def __init__(self, encoders_for: Callable[[Manifest], dict]):
        self._encoders_for = encoders_for
        self.workers = 0

    def encode(
        self, manifest: Manifest, batches: Iterable[tuple[Item, list[str]]]
    ) -> Iterator[tuple[Item, Vectors]]:
        for item, texts in batches:
            encoders = self._encoders_for(manifest)
            self.workers = 1
            yield item, {name: encoders[name].encode(texts) for name in manifest.spaces}

    def close(self) -> None:
        pass

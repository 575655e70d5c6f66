"""The narrow interface every encoder offers: a name, a dimension, `encode`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

EncodeProgress = Callable[[int], None]


class Encoder(ABC):
    """Turns texts into L2-normalised float32 vectors, batch by batch.

    Subclasses implement `_encode_batch`; this base sorts texts by `lengths` so each batch
    pads little, and returns the vectors in the order of the input.
    """

    name: str
    dim: int
    batch_size: int = 32

    @abstractmethod
    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        """Encode one batch of texts into a (len(texts), dim) float32 array."""

    def encode(self, texts: Sequence[str], progress: EncodeProgress | None = None) -> np.ndarray:
        """Encode texts into a (len(texts), dim) array of unit-length float32 rows."""
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch, encoded in self._encoded_batches(texts):
            vectors[batch] = encoded
            if progress is not None:
                progress(len(batch))
        return normalise(vectors)

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """How long each text is to the encoder, for batching texts of like length: its
        characters, unless the encoder counts something closer to its cost."""
        return [len(text) for text in texts]

    def _encoded_batches(self, texts: Sequence[str]) -> Iterable[tuple[list[int], np.ndarray]]:
        """The positions of each batch of `texts` with its vectors, in the order of
        `length_sorted_batches` by `lengths`: one batch after the other here; an encoder
        may run them otherwise (several at once, say)."""
        for batch in length_sorted_batches(self.lengths(texts), self.batch_size):
            yield batch, self._encode_batch([texts[i] for i in batch])


def normalise(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows; an all-zero row (a text with no tokens) stays zero."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Positions of texts of these `lengths` in batches of similar length, longest first,
    so padding is small."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    for first in range(0, len(order), batch_size):
        yield order[first : first + batch_size]

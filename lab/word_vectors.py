"""Vectors of one word inside a sentence: contextual (each layer) and static.

The contextual vector of a word is the mean of the hidden states of its sub-word tokens.
Its static vectors (`static_word_vectors`) come from each static encoder's
`word_vector`: the token table, GloVe, Word2Vec, FastText or Model2Vec, the same in
every sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from indexer.encoders.base import Encoder, normalise
from indexer.encoders.loading import LoadedModel
from indexer.errors import InvalidQuery


@dataclass(frozen=True)
class WordOccurrence:
    """A word in a sentence, by the character span it covers."""

    sentence: str
    start: int
    end: int


def find_word(word: str, sentence: str) -> WordOccurrence:
    """The first whole-word, case-insensitive occurrence of `word` (or a form of it)."""
    match = re.search(rf"\b{re.escape(word)}\w*", sentence, flags=re.IGNORECASE)
    if match is None:
        raise InvalidQuery(f"{word!r} does not occur in: {sentence}")
    return WordOccurrence(sentence, match.start(), match.end())


def word_at(sentence: str, word_index: int) -> WordOccurrence:
    """The `word_index`-th space-separated word of a pre-tokenised sentence (WiC style)."""
    position = 0
    for index, word in enumerate(sentence.split(" ")):
        if index == word_index:
            return WordOccurrence(sentence, position, position + len(word))
        position += len(word) + 1
    raise InvalidQuery(f"word {word_index} is past the end of: {sentence}")


def contextual_word_vectors(
    loaded: LoadedModel, occurrences: list[WordOccurrence], batch_size: int = 64
) -> np.ndarray:
    """Unit vectors of each occurrence at every layer: shape (layers + 1, count, dim)."""
    layers = loaded.layer_count + 1
    vectors = np.zeros((layers, len(occurrences), loaded.dim), dtype=np.float32)
    for first in range(0, len(occurrences), batch_size):
        batch = occurrences[first : first + batch_size]
        tokens = loaded.tokenizer(
            [item.sentence for item in batch],
            padding=True,
            truncation=True,
            max_length=loaded.max_tokens,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        offsets = tokens.pop("offset_mapping")
        with torch.inference_mode():
            states = torch.stack(loaded.model(**tokens, output_hidden_states=True).hidden_states)
        for row, item in enumerate(batch):
            starts, ends = offsets[row, :, 0], offsets[row, :, 1]
            inside = (ends > starts) & (starts < item.end) & (ends > item.start)
            if not inside.any():
                raise InvalidQuery(f"no token covers the word in: {item.sentence}")
            vectors[:, first + row] = states[:, row, inside].mean(dim=1).numpy()
    return np.stack([normalise(layer) for layer in vectors])


def static_word_vectors(encoder: Encoder, words: list[str]) -> np.ndarray:
    """Unit vectors of words from a static encoder, context ignored (zero: no vector)."""
    rows = np.zeros((len(words), encoder.dim), dtype=np.float32)
    for row, word in enumerate(words):
        vector = encoder.word_vector(word)  # type: ignore[attr-defined]
        if vector is not None:
            rows[row] = vector
    return rows


def word_report(encoder: Encoder, word: str, count: int = 5) -> dict[str, Any]:
    """Has the encoder a vector of its own for `word`, and which known words are nearest?

    For FastText an unseen word still gets a vector, built from its character n-grams.
    """
    known = word.lower()
    report: dict[str, Any] = {"method": encoder.name}
    if hasattr(encoder, "in_vocabulary"):
        report["in_vocabulary"] = encoder.in_vocabulary(known)
    vector = encoder.word_vector(word)  # type: ignore[attr-defined]
    report["has_vector"] = vector is not None
    if vector is not None and not report.get("in_vocabulary", True) and hasattr(encoder, "ngrams"):
        report["built_from_ngrams"] = len(encoder.ngrams(known))
    if hasattr(encoder, "neighbours"):
        report["neighbours"] = encoder.neighbours(known, count)
    return report

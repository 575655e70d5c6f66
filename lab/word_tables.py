"""Each method's vectors for a list of words, as a `WordTable` for the intrinsic measures.

- `glove`, `word2vec`, `fasttext`: the word's own vector (FastText builds a word it never
  saw from its character n-grams; Word2Vec and GloVe have none for it).
- `static`: the model's input token table; a word split into several WordPiece tokens
  gets the mean of their rows (as the static encoder pools a text).
- `model2vec`: the distilled table, a word's tokens' rows averaged the same way.
- `contextual`, `layer-N`: the word alone through the transformer ([CLS] word [SEP]);
  the mean of its sub-word tokens' states at the last layer (`layer-N`: at layer N, 0
  being the embedding output), the special tokens left out.
- `contextual-corpus`: the same mean of sub-word states, taken in up to `per_word`
  sentences of a corpus that hold the word and averaged (`lab.corpus_vectors`);
  a word the corpus lacks has no vector.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from indexer.encoders.base import Encoder, normalise
from indexer.encoders.loading import LoadedModel
from lab.corpus_vectors import PER_WORD, corpus_word_vectors
from lab.encoders.trained import corpus_key
from lab.word_metrics import WordTable
from lab.word_vectors import WordOccurrence, contextual_word_vectors

WORD_VOCABULARY_METHODS = ("glove", "word2vec", "fasttext")
CORPUS_METHOD = "contextual-corpus"
CACHE_FORMAT = 1


def glove_words(count: int) -> list[str]:
    """GloVe 6B's `count` most frequent words (its rows are in frequency order)."""
    from indexer.encoders.glove import load_glove

    rows = load_glove()[0]
    return sorted((word for word, row in rows.items() if row < count), key=rows.__getitem__)


def static_table(method: str, encoder: Encoder, words: Sequence[str]) -> WordTable:
    """The table of a static method's encoder (see the module's list)."""
    if method in WORD_VOCABULARY_METHODS:
        vectors = np.zeros((len(words), encoder.dim), dtype=np.float32)
        for row, word in enumerate(words):
            found = encoder.lookup(word)  # type: ignore[attr-defined]
            if found is not None:
                vectors[row] = found
        return _table(words, vectors, vocabulary_ranks(method, encoder))
    return _table(words, encoder.encode(list(words)))


def vocabulary_ranks(method: str, encoder: Encoder) -> dict[str, int]:
    """A word-vector method's own words and their frequency ranks (0 = most frequent)."""
    if method == "glove":
        return encoder.rows  # type: ignore[attr-defined]
    return encoder.vectors.key_to_index  # type: ignore[attr-defined]


def vocabulary_table(method: str, encoder: Encoder) -> WordTable:
    """A word-vector method's whole vocabulary, most frequent first (unrestricted analogies)."""
    ranks = vocabulary_ranks(method, encoder)
    if method == "glove":
        words, matrix = sorted(ranks, key=ranks.__getitem__), encoder.table  # type: ignore[attr-defined]
    else:
        words, matrix = list(encoder.vectors.index_to_key), encoder.vectors.vectors  # type: ignore[attr-defined]
    return _table(words, np.asarray(matrix, dtype=np.float32), ranks)


def isolated_tables(
    loaded: LoadedModel, words: Sequence[str], layers: Sequence[int], batch_size: int = 128
) -> dict[int, WordTable]:
    """The tables of each word alone through the transformer, at each layer asked for."""
    ids = loaded.tokenizer(list(words), add_special_tokens=False, verbose=False)["input_ids"]
    kept = [row for row, tokens in enumerate(ids) if tokens]  # some symbols have no token
    occurrences = [WordOccurrence(words[row], 0, len(words[row])) for row in kept]
    found = contextual_word_vectors(loaded, occurrences, batch_size=batch_size)
    vectors = np.zeros((found.shape[0], len(words), loaded.dim), dtype=np.float32)
    vectors[:, kept] = found
    return {layer: _table(words, vectors[layer]) for layer in layers}


def corpus_table(
    loaded: LoadedModel,
    words: Sequence[str],
    texts: Sequence[str],
    cache_dir: Path,
    per_word: int = PER_WORD,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[WordTable, dict[str, Any]]:
    """The corpus-averaged table, cached under a key of corpus, words, model and settings;
    with what it cost and how many words the corpus holds."""
    key = hashlib.sha256(
        json.dumps(
            [CACHE_FORMAT, corpus_key(texts), corpus_key(words), loaded.fingerprint, per_word]
        ).encode()
    ).hexdigest()[:16]
    path = Path(cache_dir) / f"{CORPUS_METHOD}-{key}.npz"
    if path.exists():
        saved = np.load(path)
        vectors, counts, seconds = saved["vectors"], saved["counts"], float(saved["seconds"])
    else:
        import time

        started = time.perf_counter()
        vectors, counts = corpus_word_vectors(loaded, words, texts, per_word, progress=progress)
        seconds = time.perf_counter() - started
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(suffix=".npz", dir=path.parent)
        with os.fdopen(handle, "wb") as file:
            np.savez(file, vectors=vectors, counts=counts, seconds=seconds)
        os.replace(temporary, path)
    details = {
        "setup_seconds": round(seconds, 2),
        "per_word": per_word,
        "words_found": int((counts > 0).sum()),
        "mean_occurrences": round(float(counts[counts > 0].mean()), 2) if counts.any() else 0.0,
    }
    return _table(words, vectors), details


def multi_token_share(loaded: LoadedModel, words: Sequence[str]) -> float:
    """The share of the words the model's tokenizer splits into more than one token."""
    ids = loaded.tokenizer(list(words), add_special_tokens=False, verbose=False)["input_ids"]
    return round(sum(len(row) > 1 for row in ids) / max(1, len(ids)), 4)


def _table(
    words: Sequence[str], vectors: np.ndarray, ranks: dict[str, int] | None = None
) -> WordTable:
    unit = normalise(np.asarray(vectors, dtype=np.float32))
    return WordTable(list(words), unit, np.linalg.norm(unit, axis=1) > 0.5, ranks)

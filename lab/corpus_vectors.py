"""Static word vectors distilled from a contextual model: a word's vectors in a corpus, averaged.

Each word's contextual vector (the mean of its sub-word tokens' last-layer states, as in
`lab.word_vectors`) is taken in up to `per_word` of its occurrences, the first
ones in corpus order, and the unit vectors are averaged (Bommasani et al., 2020, call
this aggregation over contexts). Texts are cut into sentences first, and only the
sentences that hold an occurrence still needed are run through the model, each once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from indexer.encoders.base import length_sorted_batches, normalise
from indexer.encoders.loading import LoadedModel

PER_WORD = 10
# Words as `indexer.encoders.words` finds them (curly apostrophes too), with their spans.
_WORD = re.compile(r"[^\W_]+(?:[-'\u2019][^\W_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Occurrence:
    """Where a word of the list (by row) occurs: a sentence and a character span in it."""

    sentence: int
    start: int
    end: int
    row: int


def sentences_of(texts: Sequence[str]) -> list[str]:
    """The texts cut at sentence ends (., ! or ? and a space), empty pieces dropped."""
    return [piece for text in texts for piece in _SENTENCE_END.split(text) if piece.strip()]


def find_occurrences(
    sentences: Sequence[str], rows: dict[str, int], per_word: int = PER_WORD
) -> list[Occurrence]:
    """The first `per_word` occurrences of each word of `rows` (lower-cased words)."""
    counts = dict.fromkeys(rows.values(), 0)
    found: list[Occurrence] = []
    for number, sentence in enumerate(sentences):
        for match in _WORD.finditer(sentence):
            row = rows.get(match.group().lower().replace("\u2019", "'"))
            if row is not None and counts[row] < per_word:
                counts[row] += 1
                found.append(Occurrence(number, match.start(), match.end(), row))
    return found


def corpus_word_vectors(
    loaded: LoadedModel,
    words: Sequence[str],
    texts: Sequence[str],
    per_word: int = PER_WORD,
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors of `words` averaged over their occurrences in `texts`, and how many
    occurrences each got (0: no vector, a zero row). `progress(done, total)` counts
    sentences encoded."""
    rows: dict[str, int] = {}
    for row, word in enumerate(words):
        rows.setdefault(word, row)
    sentences = sentences_of(texts)
    by_sentence: dict[int, list[Occurrence]] = {}
    for occurrence in find_occurrences(sentences, rows, per_word):
        by_sentence.setdefault(occurrence.sentence, []).append(occurrence)
    chosen = list(by_sentence)
    sums = np.zeros((len(words), loaded.dim), dtype=np.float32)
    counts = np.zeros(len(words), dtype=np.int64)
    done = 0
    for batch in length_sorted_batches([sentences[n] for n in chosen], batch_size):
        numbers = [chosen[i] for i in batch]
        tokens = loaded.tokenizer(
            [sentences[n] for n in numbers],
            padding=True,
            truncation=True,
            max_length=loaded.max_tokens,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        offsets = tokens.pop("offset_mapping")
        with torch.inference_mode():
            states = loaded.model(**tokens).last_hidden_state
        for line, number in enumerate(numbers):
            starts, ends = offsets[line, :, 0], offsets[line, :, 1]
            for item in by_sentence[number]:
                inside = (ends > starts) & (starts < item.end) & (ends > item.start)
                if not inside.any():  # cut off by the model's window
                    continue
                vector = states[line, inside].mean(dim=0).numpy()
                sums[item.row] += vector / max(float(np.linalg.norm(vector)), 1e-12)
                counts[item.row] += 1
        done += len(batch)
        if progress is not None:
            progress(done, len(chosen))
    # A word repeated in the list shares its first row's vector.
    for row, word in enumerate(words):
        first = rows[word]
        if first != row:
            sums[row], counts[row] = sums[first], counts[first]
    return normalise(sums), counts

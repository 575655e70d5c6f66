"""Intrinsic measures of a word-vector space: 3CosAdd analogies and word-pair Spearman.

Both work on a `WordTable`, one unit vector per word of a word list (a zero row where the
method has no vector for the word), and reproduce gensim's `KeyedVectors`
`evaluate_word_analogies` and `evaluate_word_pairs`:

- an analogy a : b :: c : ? is answered by the candidate word nearest (cosine) to
  b - a + c, the three question words left out (3CosAdd); the candidates are the first
  `candidates` words of the list that have a vector, and a question counts only when its
  four words are all candidates (the others are not answerable: coverage);
- a pair's similarity is the cosine of its two words; pairs with a word that has no
  vector are left out (coverage), and so are words past a method's `max_rank` most
  frequent (gensim's `restrict_vocab` default of 300,000: of the methods here only GloVe
  has more words).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from lab.word_sets import Analogy, WordPair, is_syntactic

SIMILARITY_RANK_LIMIT = 300_000
# Scores computed at once: a block of questions times every candidate, about 128 MB.
_BLOCK_CELLS = 1 << 25


@dataclass
class WordTable:
    """Unit vectors of a list of words (first occurrence wins); zero rows have no vector.

    `ranks` holds the method's own frequency rank of the words its vocabulary has, for
    methods that have a vocabulary of words (GloVe, Word2Vec, FastText).
    """

    words: list[str]
    vectors: np.ndarray
    known: np.ndarray
    ranks: dict[str, int] | None = None
    rows: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.rows = {}
        for row, word in enumerate(self.words):
            self.rows.setdefault(word, row)


def analogy_accuracy(
    table: WordTable, questions: Sequence[Analogy], candidates: int | None = None
) -> dict[str, Any]:
    """3CosAdd accuracy overall, per kind (semantic, syntactic) and per section.

    `candidates`: how many words from the top of the table may be answers (and must hold
    the question's words); None: the whole table.
    """
    limit = len(table.words) if candidates is None else min(candidates, len(table.words))
    rows = [row for row in range(limit) if table.known[row] and table.rows[table.words[row]] == row]
    position = {table.words[row]: index for index, row in enumerate(rows)}
    matrix = table.vectors[rows]
    answerable = [q for q in questions if all(word in position for word in q.words)]
    correct = np.zeros(len(answerable), dtype=bool)
    block = max(1, _BLOCK_CELLS // max(1, len(rows)))
    for first in range(0, len(answerable), block):
        batch = answerable[first : first + block]
        index = np.array([[position[w] for w in q.words] for q in batch], dtype=np.int64)
        query = matrix[index[:, 1]] - matrix[index[:, 0]] + matrix[index[:, 2]]
        scores = query @ matrix.T
        lines = np.arange(len(batch))[:, None]
        scores[lines, index[:, :3]] = -np.inf  # the question's own words are never answers
        correct[first : first + len(batch)] = scores.argmax(axis=1) == index[:, 3]
    return _analogy_summary(questions, answerable, correct, len(rows))


def _analogy_summary(
    questions: Sequence[Analogy], answerable: list[Analogy], correct: np.ndarray, size: int
) -> dict[str, Any]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # questions, answered, correct
    for question in questions:
        totals[question.section][0] += 1
    for question, right in zip(answerable, correct, strict=True):
        totals[question.section][1] += 1
        totals[question.section][2] += int(right)

    def figures(counts: Sequence[int]) -> dict[str, Any]:
        asked, answered, right = counts
        return {
            "accuracy": round(right / answered, 4) if answered else None,
            "answered": answered,
            "questions": asked,
            "coverage": round(answered / asked, 4) if asked else 0.0,
        }

    kinds = {"semantic": [0, 0, 0], "syntactic": [0, 0, 0]}
    for section, counts in totals.items():
        kind = kinds["syntactic" if is_syntactic(section) else "semantic"]
        for slot in range(3):
            kind[slot] += counts[slot]
    overall = [sum(kind[slot] for kind in kinds.values()) for slot in range(3)]
    return {
        **figures(overall),
        "candidates": size,
        "semantic": figures(kinds["semantic"]),
        "syntactic": figures(kinds["syntactic"]),
        "sections": {section: figures(counts) for section, counts in totals.items()},
    }


def pair_correlation(
    table: WordTable, pairs: Sequence[WordPair], max_rank: int = SIMILARITY_RANK_LIMIT
) -> dict[str, Any]:
    """Spearman correlation of the pairs' cosines with the human scores, and coverage."""

    def usable(word: str) -> bool:
        row = table.rows.get(word)
        if row is None or not table.known[row]:
            return False
        rank = table.ranks.get(word) if table.ranks is not None else None
        return rank is None or rank < max_rank

    kept = [pair for pair in pairs if usable(pair.first) and usable(pair.second)]
    first = table.vectors[[table.rows[p.first] for p in kept]]
    second = table.vectors[[table.rows[p.second] for p in kept]]
    cosines = (first * second).sum(axis=1)
    spearman = (
        round(float(spearmanr(cosines, [p.score for p in kept]).statistic), 4)
        if len(kept) > 1
        else None
    )
    return {
        "spearman": spearman,
        "pairs": len(kept),
        "total": len(pairs),
        "coverage": round(len(kept) / len(pairs), 4) if pairs else 0.0,
    }

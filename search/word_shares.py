"""Which words of a passage carried its similarity to the query, exactly.

A passage's vector p is the sum of its tokens' parts t_i (`indexer.encoders.token_parts`:
for mean pooling t_i is a token's state over the token count), L2-normalised. For a unit
query vector q the cosine is q . p / |p| = sum_i (q . t_i) / |p|, so each token's share
is (q . t_i) / |p| and the shares add up to the cosine, no approximation. Word pieces
(`un`, `##believ`, `##able`) are merged into the words they spell, and a word's shares
are added over its occurrences; a share can be negative (the word pulled away from the
query). The special tokens ([CLS], [SEP]) take part in the mean like any token: their
share is given on its own, and so is that of punctuation and function words ("the",
"of"), which mean pooling weighs like any other token but which say little about why a
passage matches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from indexer.encoders.token_parts import TokenParts

SHOWN_WORDS = 5  # the words an explanation lists per space, largest share first
# English words that hold a sentence together rather than say what it is about: their
# shares are added up apart from the listed words'. Articles, pronouns, prepositions,
# conjunctions and auxiliaries only (the lexical side's stop list also holds words such
# as "interest" and "computer", which a passage can well be about).
# fmt: off
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "he", "she", "they",
    "them", "their", "his", "her", "we", "our", "you", "your", "i", "me", "my", "of", "in",
    "on", "at", "by", "for", "from", "to", "with", "into", "onto", "over", "under", "about",
    "as", "than", "and", "or", "but", "nor", "so", "if", "then", "because", "while", "when",
    "where", "which", "who", "whom", "whose", "what", "how", "not", "no", "is", "are", "was",
    "were", "be", "been", "being", "am", "do", "does", "did", "have", "has", "had", "will",
    "would", "shall", "should", "can", "could", "may", "might", "must", "there", "here", "also",
    "just", "very",
})
# fmt: on


@dataclass(frozen=True)
class WordShare:
    """A word (lower-cased) and its summed share of the cosine, over `count` occurrences."""

    word: str
    share: float
    count: int


@dataclass(frozen=True)
class WordShares:
    """A passage's cosine to the query in one space, taken apart by word: `words` largest
    share first, `function` the share of punctuation and function words, `special` the
    special tokens'; together they sum to `cosine`."""

    cosine: float
    words: list[WordShare]
    function: float
    special: float
    tokens: int

    def shown(self, count: int = SHOWN_WORDS) -> dict:
        """The first `count` words, and what the rest adds (`other_words`), as JSON; the
        shown shares, `other_words`, `function_words` and `special_tokens` sum to
        `cosine`."""
        top = self.words[:count]
        rest = sum(word.share for word in self.words[count:])
        return {
            "cosine": round(self.cosine, 6),
            "tokens": self.tokens,
            "words": [
                {"word": word.word, "share": round(word.share, 6), "count": word.count}
                for word in top
            ],
            "other_words": round(rest, 6),
            "function_words": round(self.function, 6),
            "special_tokens": round(self.special, 6),
        }


def word_shares(
    parts: TokenParts,
    text: str,
    query: np.ndarray,
    function_words: frozenset[str] = FUNCTION_WORDS,
) -> WordShares:
    """Each word's share of the cosine of `query` (a unit vector) and the vector that
    `parts` (of `text`) sum to, normalised as the index normalises it; the words of
    `function_words` (lower case) and punctuation are counted together, apart."""
    pooled = parts.vectors.sum(axis=0) if len(parts.vectors) else np.zeros(len(query))
    norm = float(np.linalg.norm(pooled))
    if norm == 0.0:  # a text without tokens: a zero vector, cosine 0
        return WordShares(0.0, [], 0.0, 0.0, len(parts.spans))
    shares = parts.vectors @ np.asarray(query, dtype=np.float64) / norm
    special = function = 0.0
    words: dict[str, list[float]] = {}
    for (start, end), share in _words(parts.spans, shares, text):
        if start is None:
            special += share
            continue
        word = text[start:end].lower()
        if word in function_words or not any(char.isalnum() for char in word):
            function += share
            continue
        held = words.setdefault(word, [0.0, 0])
        held[0] += share
        held[1] += 1
    ranked = sorted(words.items(), key=lambda item: (-item[1][0], item[0]))
    return WordShares(
        cosine=float(shares.sum()),
        words=[WordShare(word, share, int(count)) for word, (share, count) in ranked],
        function=function,
        special=special,
        tokens=len(parts.spans),
    )


def _words(spans, shares: np.ndarray, text: str):
    """(span, share) of each word: a token that continues the one before it (no space
    between, letters or digits on both sides, as word pieces do) joins its word; special
    tokens come as (None, None) spans."""
    merged: list[list] = []
    for span, share in zip(spans, shares, strict=True):
        if span is None:
            merged.append([(None, None), float(share)])
            continue
        start, end = span
        if merged and _continues(merged[-1][0], start, text):
            (first, _), total = merged[-1]
            merged[-1] = [(first, end), total + float(share)]
        else:
            merged.append([(start, end), float(share)])
    return [(tuple(span), share) for span, share in merged]


def _continues(previous: tuple, start: int, text: str) -> bool:
    """Whether a token starting at `start` continues the word that ends at `previous`."""
    first, end = previous
    if first is None or end != start or start == 0 or start >= len(text):
        return False
    return text[start - 1].isalnum() and text[start].isalnum()

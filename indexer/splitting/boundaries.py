"""How good a place between two tokens is to end a window of text.

A paragraph break is the best place, then a sentence end, a line break, a space between
words, punctuation, and last the middle of a word: `indexer.splitting.windows` and
`indexer.splitting.passages` cut windows inside a document's sections in this order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

TokenSpans = Callable[[str], Sequence[tuple[int, int]]]

SENTENCE_END = frozenset(".!?;:\u3002\uff01\uff1f")  # with CJK full stops
PARAGRAPH, SENTENCE, LINE, WORD, PUNCTUATION, INSIDE_WORD = 5, 4, 3, 2, 1, 0


def break_score(text: str, spans: Sequence[tuple[int, int]], index: int) -> int:
    """How good a boundary lies between token `index - 1` and token `index`."""
    previous_start, previous_end = spans[index - 1]
    gap = text[previous_end : spans[index][0]]
    if not gap:
        next_char = text[spans[index][0] : spans[index][0] + 1]
        if text[previous_end - 1 : previous_end].isalnum() and next_char.isalnum():
            return INSIDE_WORD
        return PUNCTUATION
    if gap.count("\n") >= 2:
        return PARAGRAPH
    if text[previous_start:previous_end] in SENTENCE_END and not gap.strip():
        return SENTENCE
    if "\n" in gap:
        return LINE
    return WORD


# Every character `str.isspace` is true for (none lies above U+3000).
SPACE_CODES = np.array([code for code in range(0x3001) if chr(code).isspace()], dtype=np.uint32)
_SENTENCE_END_CODES = np.array([ord(character) for character in SENTENCE_END], dtype=np.uint32)


def break_scores(text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """`break_score` of every place between two tokens at once (index 0, before the first
    token, is -1): the same scores, without a Python step per token."""
    scores = np.full(len(spans), -1, dtype=np.int64)
    if len(spans) < 2:
        return scores
    base = max(spans[0][0] - 1, 0)  # from the character before the first token on
    piece = text[base : max(end for _start, end in spans)]
    codes = np.frombuffer(piece.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    newlines = np.concatenate([[0], np.cumsum(codes == 10)])
    spaces = np.concatenate([[0], np.cumsum(np.isin(codes, SPACE_CODES))])
    bounds = np.array(spans, dtype=np.int64) - base
    previous_start, previous_end = bounds[:-1, 0], bounds[:-1, 1]
    start = bounds[1:, 0]
    gap = np.maximum(start - previous_end, 0)
    gap_end = previous_end + gap
    lines = newlines[gap_end] - newlines[previous_end]
    blank = spaces[gap_end] - spaces[previous_end] == gap
    one_character = previous_end - previous_start == 1
    sentence_end = one_character & np.isin(
        codes[np.minimum(previous_start, len(codes) - 1)], _SENTENCE_END_CODES
    )
    found = np.full(len(start), WORD, dtype=np.int64)
    found[lines >= 1] = LINE
    found[sentence_end & blank & (lines < 2)] = SENTENCE
    found[lines >= 2] = PARAGRAPH
    for index in np.flatnonzero(gap == 0):
        before, after = (
            piece[previous_end[index] - 1 : previous_end[index]],
            piece[start[index] : start[index] + 1],
        )
        found[index] = INSIDE_WORD if before.isalnum() and after.isalnum() else PUNCTUATION
    scores[1:] = found
    return scores

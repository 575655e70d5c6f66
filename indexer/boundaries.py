"""How good a place between two tokens is to end a window of text.

A paragraph break is the best place, then a sentence end, a line break, a space between
words, punctuation, and last the middle of a word. Both window makers use this order:
`indexer.chunking` (windows from the file's start) and `indexer.passages` (windows inside
a document's sections).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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

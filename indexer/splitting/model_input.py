"""What the model reads for a passage: its section trail in front of its text.

A passage of a few lines ("Command Line Interface ¶ ...") says little about what it is
about; the page's title and the headings above it say the rest. So each passage is
encoded as its trail (`section`: "json — JSON encoder and decoder > Command Line
Interface"), a blank line, then its text. Only the vectors see the trail: the stored
text, its offsets and the lexical space are the passage's own.

The model's window stays the hard limit: the trail gets what the passage leaves of
`max_tokens` and is cut (at a token, from its end) to fit, never the passage. Whether and
how much of it is kept depends only on the passage, so an edit changes the input of no
passage it does not change. What is encoded is what the content key hashes
(`indexer.store.content_keys`), so vectors are reused exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from indexer.splitting.boundaries import TokenSpans

# Between the trail and the passage's text (whitespace: no token of its own).
TRAIL_SEPARATOR = "\n\n"


def model_input(
    text: str,
    section: str | None,
    token_spans: TokenSpans,
    max_tokens: int,
    trail_spans: Sequence[Sequence[int]] | None = None,
    token_count: Callable[[str], int] | None = None,
) -> str:
    """`text` with as much of its `section` trail in front as fits in `max_tokens` tokens
    together with it (as `token_spans` counts them); `text` itself when none fits.
    `trail_spans`, when given, are `token_spans(section)` (the passages of a section share
    its trail: tokenised once); `token_count`, when given, counts a text's tokens as
    `token_spans` would (a split cache's memo of them)."""
    if not section or not section.strip():
        return text
    count = token_count or (lambda piece: len(token_spans(piece)))
    budget = max_tokens - count(text)
    if trail_spans is None:
        trail_spans = token_spans(section)
    kept = min(len(trail_spans), budget)
    while kept > 0:
        candidate = section[: trail_spans[kept - 1][1]] + TRAIL_SEPARATOR + text
        if count(candidate) <= max_tokens:
            return candidate
        kept -= 1
    return text

"""Split a document's text into token-bounded windows that overlap a little.

Windows end at the best boundary available (paragraph, then sentence, then line, then
word) and keep their character offsets into the original text. Every character that is
not whitespace lies inside at least one chunk: nothing is dropped, nothing is cut off.

The chunker never loads a model: it takes a function that returns the character span
of every token of a text, which the encoder's tokenizer provides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from indexer.splitting.boundaries import TokenSpans, break_score


@dataclass(frozen=True)
class Chunk:
    """A window of a document: its position, character offsets and text, and where it
    sits in the file (see `indexer.reading.layout`; None where unknown or not applicable)."""

    ordinal: int
    start: int
    end: int
    text: str
    line: int | None = None
    end_line: int | None = None
    heading: str | None = None
    page: int | None = None
    line_map: str | None = None  # JSON, for HTML and PDF (see `indexer.reading.line_map`)


def chunk_text(text: str, token_spans: TokenSpans, max_tokens: int, overlap: int) -> list[Chunk]:
    """Cut `text` into chunks of at most `max_tokens` tokens, `overlap` tokens shared."""
    if max_tokens < 2:
        raise ValueError("max_tokens must be at least 2")
    if not 0 <= overlap < max_tokens // 2:
        raise ValueError("overlap must be between 0 and half of max_tokens")
    spans = list(token_spans(text))
    if not spans:
        return _untokenised_chunk(text)
    windows = _token_windows(text, spans, max_tokens, overlap)
    chunks = []
    for ordinal, (first, stop) in enumerate(windows):
        start = _leading_edge(text) if first == 0 else spans[first][0]
        end = _trailing_edge(text) if stop == len(spans) else _end_before(text, spans, stop)
        chunks.append(Chunk(ordinal=ordinal, start=start, end=end, text=text[start:end]))
    return chunks


def _token_windows(
    text: str, spans: Sequence[tuple[int, int]], max_tokens: int, overlap: int
) -> list[tuple[int, int]]:
    windows = []
    first = 0
    while True:
        limit = first + max_tokens
        if limit >= len(spans):
            windows.append((first, len(spans)))
            return windows
        stop = _best_break(text, spans, lo=first + max_tokens // 2, hi=limit, latest=True)
        windows.append((first, stop))
        if overlap == 0:
            first = stop
        else:
            first = _best_break(
                text, spans, lo=max(stop - overlap, first + 1), hi=stop - 1, latest=False
            )


def _best_break(text: str, spans: Sequence[tuple[int, int]], lo: int, hi: int, latest: bool) -> int:
    """The token index in [lo, hi] before which the text breaks best."""
    best_index, best_score = hi, -1
    for index in range(lo, hi + 1):
        score = break_score(text, spans, index)
        if score > best_score or (latest and score == best_score):
            best_index, best_score = index, score
    return best_index


def _end_before(text: str, spans: Sequence[tuple[int, int]], stop: int) -> int:
    """End a chunk where token `stop` starts, less the whitespace in between."""
    end = spans[stop][0]
    while end > spans[stop - 1][1] and text[end - 1].isspace():
        end -= 1
    return end


def _leading_edge(text: str) -> int:
    return len(text) - len(text.lstrip())


def _trailing_edge(text: str) -> int:
    return len(text.rstrip())


def _untokenised_chunk(text: str) -> list[Chunk]:
    """Text the tokenizer gives no tokens for is kept whole unless it is only whitespace."""
    start, end = _leading_edge(text), _trailing_edge(text)
    if start >= end:
        return []
    return [Chunk(ordinal=0, start=start, end=end, text=text[start:end])]

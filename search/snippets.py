"""Short excerpts of chunk text, centred on the query's words, with those words marked."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from indexer.cjk import merged, unit_spans

_WHITESPACE = re.compile(r"\s+")
# Letters and digits: underscores split words (`sort_keys`), as the lexical space's
# tokenizer and `match_line` split them (the text's words: `indexer.cjk.unit_spans`).
_WORD = re.compile(r"[^\W_]+")
_LEAD = 40  # characters of context kept before the first matched word


@dataclass(frozen=True)
class Snippet:
    """An excerpt and the [start, end) character spans of the query words inside it."""

    text: str
    highlights: list[tuple[int, int]] = field(default_factory=list)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter stem of a lower-cased word (the same stemmer as the lexical space)."""
    return _porter().stemWord(word.lower())


_STEMMERS = threading.local()


def _porter():  # -> snowballstemmer.stemmer, imported lazily
    """This thread's stemmer: a snowball stemmer holds the word it works on, so threads
    sharing one get wrong stems or IndexError (seen under the HTTP server's thread pool)."""
    if not hasattr(_STEMMERS, "porter"):
        import snowballstemmer

        _STEMMERS.porter = snowballstemmer.stemmer("porter")
    return _STEMMERS.porter


def make_snippet(text: str, terms: Iterable[str] = (), limit: int = 240) -> Snippet:
    """About `limit` characters of `text` on one line, where the query terms are densest."""
    flat = _WHITESPACE.sub(" ", text).strip()
    wanted = {stem(word) for term in terms for word in _WORD.findall(term)}
    # a query's CJK pairs overlap in the text (`東京`, `京都`): one highlight, `東京都`
    spans = unit_spans(flat) if wanted else []
    matches = merged([(a, b) for a, b in spans if stem(flat[a:b]) in wanted])
    start, end = _window(flat, matches, limit)
    excerpt = flat[start:end]
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(flat) else ""
    shift = len(prefix) - start
    highlights = [(a + shift, b + shift) for a, b in matches if a >= start and b <= end]
    return Snippet(prefix + excerpt + suffix, highlights)


def _window(flat: str, matches: list[tuple[int, int]], limit: int) -> tuple[int, int]:
    if len(flat) <= limit:
        return 0, len(flat)
    start = 0
    if matches:
        best = _densest(matches, limit)
        start = max(0, best - _LEAD)
        if start > 0:
            space = flat.find(" ", start)
            start = space + 1 if 0 <= space < best else start
    end = min(len(flat), start + limit)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start + limit // 2 else end
    return start, end


def _densest(matches: list[tuple[int, int]], limit: int) -> int:
    """The start of the first match whose window (from `_LEAD` before it, `limit` long)
    holds the most whole matches. Matches are in text order, so the matches inside a
    window are a run whose two ends only move forward: linear in the number of matches."""
    best, most = matches[0][0], -1
    first = last = 0  # the run: matches[first:last]
    for start, _ in matches:
        low, high = start - _LEAD, start - _LEAD + limit
        while first < len(matches) and matches[first][0] < low:
            first += 1
        while last < len(matches) and matches[last][1] <= high:
            last += 1
        inside = max(0, last - first)
        if inside > most:
            best, most = start, inside
    return best

"""Chinese, Japanese and Korean text as searchable units: characters and character pairs.

These scripts write no space between words, so the lexical space's tokenizer (FTS5's
unicode61, emulated on PostgreSQL) would take a whole clause for one token, and a query
would match only a clause typed whole. Instead each run of CJK characters (Han,
Hiragana, Katakana, Hangul) is rewritten, for the lexical space alone, as separate units:

- stored text: every character and every overlapping pair (`東京都` is `東 東京 京 京都 都`),
  so a query of one character finds it as surely as a query of two;
- query text: the overlapping pairs (`東京タワー` asks for `東京 京タ タワ ワー`), a run of
  one character the character itself.

The same functions serve both stores, which index the rewritten text (`indexed_form`,
kept beside the chunk's own text) and read queries through `query_form`, so they count
the same terms and rank alike. Snippets and match lines find the units in the chunk's
own text with `unit_spans`, so their highlights point at the characters matched.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# The manifest's word for it (the lexical settings of both stores).
CJK_UNITS = "runs indexed as characters and overlapping pairs, queried as pairs"
# Han (with its extension planes and compatibility ideographs, and the iteration and
# closing marks 々〆〇), Hiragana, Katakana (and its half-width forms), Hangul (syllables and
# jamo). The lookahead keeps only the characters unicode61 makes tokens of (letters and
# numbers): the punctuation inside these blocks (・, ゛) still separates.
_BLOCKS = (
    r"[\u1100-\u11ff\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff"
    r"\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff]"
)
_CJK_CHAR = rf"(?=[^\W_]){_BLOCKS}"
_CJK_RUN = re.compile(f"(?:{_CJK_CHAR})+")
# Text with no character of these blocks (most text) skips the slower patterns.
_ANY_BLOCK = re.compile(_BLOCKS)
_WORD = re.compile(r"[^\W_]+")
# A CJK run, or a word of other letters and digits (underscores split words, as in
# unicode61).
_UNIT_OR_WORD = re.compile(f"(?P<cjk>(?:{_CJK_CHAR})+)|(?P<word>(?:(?!{_CJK_CHAR})[^\\W_])+)")


def _stored_units(run: str) -> list[str]:
    """Each character of the run and each overlapping pair, in text order."""
    units = [run[0]]
    for index in range(1, len(run)):
        units += [run[index - 1 : index + 1], run[index]]
    return units


def _query_units(run: str) -> list[str]:
    """The run's overlapping pairs; a run of one character, the character."""
    if len(run) == 1:
        return [run]
    return [run[index : index + 2] for index in range(len(run) - 1)]


def _rewrite(text: str, units: Callable[[str], list[str]]) -> str:
    return _CJK_RUN.sub(lambda run: " " + " ".join(units(run.group())) + " ", text)


def has_cjk(text: str) -> bool:
    """Whether the text holds a CJK character that the lexical space makes units of."""
    return _ANY_BLOCK.search(text) is not None and _CJK_RUN.search(text) is not None


def indexed_form(text: str) -> str | None:
    """What the lexical space indexes for a chunk of `text`: its CJK runs rewritten as
    characters and pairs; None when it has none (the text is indexed as it is)."""
    if not has_cjk(text):
        return None
    return _rewrite(text, _stored_units)


def phrase_form(phrase: str) -> str:
    """A quoted phrase as the lexical space stores text (its CJK runs as characters and
    pairs), so that its units are adjacent and in order exactly where a chunk holds it."""
    return indexed_form(phrase) or phrase


def query_form(query: str) -> str:
    """The query as the lexical space reads it: its CJK runs rewritten as pairs."""
    return _rewrite(query, _query_units)


def unit_spans(text: str) -> list[tuple[int, int]]:
    """The [start, end) spans of the units the lexical space sees in `text`: each word of
    other letters and digits, and each character and pair of its CJK runs (overlapping)."""
    if not has_cjk(text):
        return [found.span() for found in _WORD.finditer(text)]
    spans = []
    for found in _UNIT_OR_WORD.finditer(text):
        start, end = found.span()
        if found.group("word") is not None:
            spans.append((start, end))
            continue
        for index in range(start, end):
            spans.append((index, index + 1))
            if index + 1 < end:
                spans.append((index, index + 2))
    return spans


def merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans in text order with overlapping or touching ones joined (matched CJK pairs
    overlap: `東京` and `京都` are one highlight, `東京都`)."""
    joined: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
        else:
            joined.append((start, end))
    return joined

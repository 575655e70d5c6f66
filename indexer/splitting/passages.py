"""Passages: token windows inside a document's sections, with each one's section trail.

A document is split at its own structure first (`indexer.splitting.structure`), then each section
into windows of at most the model's `max_tokens` tokens (`indexer.splitting.windows`), so that how
a section is cut depends only on that section's text, and inside a long section only on
the text near each cut. An edit therefore changes only the passages around it.

Sections too small to stand alone are joined with their neighbours into one *unit* of
cutting: a section with no text of its own under its heading is glued to the next one
(at the very end, to the one before), and two adjacent blocks of glued sections
join when either is small and the second is a sibling or a descendant of the first.
Whether two join depends only on the two.

Guarantees: every passage has at most `max_tokens` tokens (as `token_spans` counts them);
its text is `text[start:end]`; the passages without their overlaps tile the text, so
every character lies in some passage (a text of only whitespace has none). A passage's
trail is that of the innermost section holding all of its text, not counting the heading
lines of sections it only begins with, nor a page's title before its first heading unless
that title is most of the passage; `heading` is the last title in it.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from indexer.reading.text_layout import Layout
from indexer.splitting.boundaries import INSIDE_WORD, TokenSpans, break_score
from indexer.splitting.cut_text import whitespace_map
from indexer.splitting.split_cache import SplitCache
from indexer.splitting.structure import SECTION_SEPARATOR, Section, document_sections
from indexer.splitting.windows import content_cuts, cut_priorities, section_start_score

# A section of fewer tokens than this share of the window is small (it joins others).
SMALL_SECTION_SHARE = 0.25
# The first cutting window, as a share of a stretch's most tokens: cuts are more than
# this many tokens apart, and an edit moves no cut further than this from it.
WINDOW_SHARE = 0.5


@dataclass(frozen=True)
class Passage:
    """A window of a document: its position, character offsets [start, end), text
    (`document_text[start:end]`) and the trail of the section that holds it."""

    ordinal: int
    start: int
    end: int
    text: str
    trail: tuple[str, ...]

    @property
    def heading(self) -> str | None:
        """The title of the innermost section holding the passage (None if none)."""
        return self.trail[-1] if self.trail else None

    @property
    def section(self) -> str | None:
        """The trail written out, its titles joined by `SECTION_SEPARATOR` (None if empty)."""
        return SECTION_SEPARATOR.join(self.trail) if self.trail else None


@dataclass(frozen=True)
class _Tokenised:
    section: Section
    piece: str  # the section's text
    relative: np.ndarray  # (n, 2): its token spans, offsets into `piece`
    body_tokens: int  # how many of them lie in the section's body

    @property
    def count(self) -> int:
        """How many tokens the section has."""
        return len(self.relative)

    def spans(self) -> list[tuple[int, int]]:
        """The section's token spans, offsets into the document text."""
        return [(start, end) for start, end in (self.relative + self.section.start).tolist()]


def document_passages(
    text: str,
    kind: str,
    layout: Layout | None,
    token_spans: TokenSpans,
    max_tokens: int,
    overlap: int,
    cache: SplitCache | None = None,
) -> list[Passage]:
    """The passages of a document's text of `section_kind` `kind` (see `split_passages`);
    a PDF's pages are never joined, so that each passage lies on one page. Where the
    `layout` names another text to cut (`Layout.cut`), the passages are cut there and
    given as the same stretches of `text`."""
    if layout is not None and layout.cut is not None:
        cut = layout.cut
        passages = document_passages(
            cut.text, kind, Layout(outline=cut.outline), token_spans, max_tokens, overlap, cache
        )
        return _shown(passages, cut.text, text)
    sections = document_sections(text, kind, layout)
    return split_passages(
        text, sections, token_spans, max_tokens, overlap, kind != "pdf", cache=cache
    )


def _shown(passages: list[Passage], cut: str, shown: str) -> list[Passage]:
    """`passages` of the text `cut`, as the same stretches of the text `shown`."""
    if not passages:
        return []
    to_shown = whitespace_map(cut, shown)
    bounds = to_shown(np.array([(passage.start, passage.end) for passage in passages]))
    return [
        dataclasses.replace(passage, start=start, end=end, text=shown[start:end])
        for passage, (start, end) in zip(passages, bounds.tolist(), strict=True)
    ]


def split_passages(
    text: str,
    sections: list[Section],
    token_spans: TokenSpans,
    max_tokens: int,
    overlap: int,
    join_small: bool = True,
    cache: SplitCache | None = None,
) -> list[Passage]:
    """Cut `text`, tiled by `sections`, into passages of at most `max_tokens` tokens; a
    passage that starts inside a section (not at its start) repeats up to `overlap`
    tokens of the one before it. Small sections join their neighbours unless
    `join_small` is False (sections of only a heading still join the next).

    With a `cache` (`indexer.splitting.split_cache`), sections and units of cutting seen
    before with the same text are not tokenised or cut again: the passages are the same."""
    if max_tokens < 2:
        raise ValueError("max_tokens must be at least 2")
    if not 0 <= overlap < max_tokens // 2:
        raise ValueError("overlap must be between 0 and half of max_tokens")
    if not text.strip():
        return []
    cache = (cache or SplitCache()).for_tokenizer(token_spans)
    tokenised = [_tokenise(text, section, token_spans, cache) for section in sections]
    small = max(1, int(max_tokens * SMALL_SECTION_SHARE))
    passages: list[Passage] = []
    for unit in _units(tokenised, small if join_small else 0):
        passages += _cached_unit_passages(text, unit, max_tokens, overlap, cache, token_spans)
    return [_numbered(passage, ordinal) for ordinal, passage in enumerate(passages)]


def _tokenise(
    text: str, section: Section, token_spans: TokenSpans, cache: SplitCache | None = None
) -> _Tokenised:
    piece = text[section.start : section.end]
    relative = (cache or SplitCache()).spans(piece, token_spans)
    body = int(np.count_nonzero(relative[:, 0] >= section.body - section.start))
    return _Tokenised(section, piece, relative, body)


def _units(tokenised: list[_Tokenised], small: int) -> list[list[_Tokenised]]:
    """The sections grouped into runs that are cut as one (see the module's docstring)."""
    units: list[list[_Tokenised]] = []
    previous: list[_Tokenised] = []
    for block in _blocks(tokenised):
        if previous and _small_siblings(previous, block, small):
            units[-1] += block
        else:
            units.append(list(block))
        previous = block
    return units


def _blocks(tokenised: list[_Tokenised]) -> list[list[_Tokenised]]:
    """Each section with body text, with the sections of headings only right before it
    (those at the very end go with the last block)."""
    blocks: list[list[_Tokenised]] = []
    pending: list[_Tokenised] = []
    for part in tokenised:
        pending.append(part)
        if part.body_tokens:
            blocks.append(pending)
            pending = []
    if pending:
        if blocks:
            blocks[-1] += pending
        else:
            blocks.append(pending)
    return blocks


def _small_siblings(before: list[_Tokenised], after: list[_Tokenised], small: int) -> bool:
    """Whether two adjacent blocks join: one of them is small and the second is a sibling
    or a descendant of the first. (Joining only two small ones left a page's title or a
    one-line section before a long one as a passage of a few words, which a question's
    vector matches better than any real answer: Python guides' contextual nDCG@10 0.784
    against 0.851 with windows from the start, docs/reports/2026-12-01-quality-26.md.)"""
    sizes = (sum(part.count for part in block) for block in (before, after))
    level_before, level_after = before[0].section.level, after[0].section.level
    return any(size < small for size in sizes) and level_after >= level_before


def _cached_unit_passages(
    text: str,
    unit: list[_Tokenised],
    max_tokens: int,
    overlap: int,
    cache: SplitCache,
    token_spans: TokenSpans,
) -> list[Passage]:
    """`_unit_passages`, taken from `cache` when a unit of the same sections was cut
    before: how a unit is cut depends only on its sections' texts, bodies and places
    in the outline (and the limits), never on where it lies in the document."""
    start = unit[0].section.start
    key = _unit_key(unit, max_tokens, overlap)
    known = cache.unit(key)
    if known is None:
        count = lambda piece: cache.count(piece, token_spans)  # noqa: E731
        passages = _unit_passages(text, unit, max_tokens, overlap, count)
        known = [(p.start - start, p.end - start, p.trail) for p in passages]
        cache.remember_unit(key, known, unit[-1].section.end - start)
        return passages
    return [
        Passage(0, start + first, start + last, text[start + first : start + last], trail)
        for first, last, trail in known
    ]


def _unit_key(unit: list[_Tokenised], max_tokens: int, overlap: int) -> Hashable:
    parts = tuple(
        (
            part.piece,
            part.section.body - part.section.start,
            part.section.level,
            part.section.trail,
        )
        for part in unit
    )
    return (max_tokens, overlap, parts)


def _unit_passages(
    text: str,
    unit: list[_Tokenised],
    max_tokens: int,
    overlap: int,
    token_count: Callable[[str], int],
) -> list[Passage]:
    start, end = unit[0].section.start, unit[-1].section.end
    spans = [span for part in unit for span in part.spans()]
    if not spans:  # nothing the tokenizer reads: kept whole
        return [Passage(0, start, end, text[start:end], _trail(unit, 0, 0))]
    first_tokens, index = [], 0  # the index of each section's first token in `spans`
    for part in unit:
        first_tokens.append(index)
        index += part.count
    if len(spans) <= max_tokens:
        cuts: list[int] = []
    else:
        # A section start is the best place to cut, unless the section before it is only
        # a heading: that heading belongs with what follows it.
        scores = {
            first: section_start_score(part.section.level) if before.body_tokens else INSIDE_WORD
            for first, before, part in zip(first_tokens[1:], unit, unit[1:], strict=False)
            if 0 < first < len(spans)
        }
        priority = cut_priorities(text, spans, scores)
        limit = max_tokens - overlap
        cuts = content_cuts(priority, 0, len(spans), limit, max(1, int(limit * WINDOW_SHARE)))
    section_firsts = set(first_tokens)
    passages = []
    edges = [0, *cuts, len(spans)]
    for previous, first, stop in zip([0, *edges], edges, edges[1:], strict=False):
        begin = first
        if first > 0 and first not in section_firsts and overlap:
            floor = max(first - overlap, previous + 1, _section_first(first_tokens, first))
            begin = _overlap_start(text, spans, floor, first)
        char_end = end if stop == len(spans) else spans[stop][0]
        # An overlap that starts inside a word can read as more tokens on its own than in
        # the document ("##oa" becomes "o", "##a"): such a passage does without it.
        if (
            begin < first
            and _inside_a_word(text, spans[begin][0])
            and token_count(text[spans[begin][0] : char_end]) > max_tokens
        ):
            begin = first
        char_start = start if begin == 0 else spans[begin][0]
        trail = _trail(unit, begin, stop)
        passages.append(Passage(0, char_start, char_end, text[char_start:char_end], trail))
    return passages


def _inside_a_word(text: str, offset: int) -> bool:
    """Whether `offset` falls between two letters or digits (a word piece starts there)."""
    return 0 < offset < len(text) and text[offset - 1].isalnum() and text[offset].isalnum()


def _section_first(first_tokens: list[int], token: int) -> int:
    """The first token of the section that holds token `token`."""
    return first_tokens[bisect_right(first_tokens, token) - 1]


def _overlap_start(text: str, spans: list[tuple[int, int]], floor: int, first: int) -> int:
    """Where a passage that continues at token `first` starts: at the best boundary in
    [floor, first), the earliest of equal ones (`first` if the range is empty)."""
    if floor >= first:
        return first
    scores = np.array([break_score(text, spans, index) for index in range(floor, first)])
    return floor + int(np.argmax(scores))


def _trail(unit: list[_Tokenised], begin: int, stop: int) -> tuple[str, ...]:
    """The trail common to the sections whose body text lies in tokens [begin, stop) (to
    all the sections those tokens touch when they hold only heading lines). Text before
    a document's first heading (a page's title) counts only when it is most of the
    passage: a title joined to the first section leaves that section's trail."""
    touched, holding = [], []
    untitled = titled = 0  # body tokens in [begin, stop) outside and inside any section
    first = 0
    for part in unit:
        last = first + part.count
        if (first < stop and last > begin) or first == last == begin:
            touched.append(part.section.trail)
            body = min(last, stop) - max(last - part.body_tokens, begin)
            if body > 0:
                holding.append(part.section.trail)
                if part.section.trail:
                    titled += body
                else:
                    untitled += body
        first = last
    if titled > untitled:
        holding = [trail for trail in holding if trail]
    return _common_prefix(holding or touched)


def _common_prefix(trails: list[tuple[str, ...]]) -> tuple[str, ...]:
    if not trails:
        return ()
    shortest = min(len(trail) for trail in trails)
    length = 0
    while length < shortest and all(trail[length] == trails[0][length] for trail in trails):
        length += 1
    return trails[0][:length]


def _numbered(passage: Passage, ordinal: int) -> Passage:
    return Passage(ordinal, passage.start, passage.end, passage.text, passage.trail)

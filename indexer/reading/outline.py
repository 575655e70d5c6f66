"""The headings of a document, with their levels and the lines they take, by text kind.

Markdown (ATX and setext titles, in block quotes too, outside code fences and front
matter), reStructuredText
(underlined and overlined titles, levels in the order their adornment styles first
appear, as docutils assigns them), and the headings a reader recorded for text that is
not the file's own (HTML: `Layout.outline`). Office and e-book text has its headings
written as Markdown heading lines (`indexer.reading.headings`), so it is read as Markdown.
Definitions in source code are in `indexer.splitting.code_outline`.

It lies on the reading floor: readers record headings with it, and splitting, one floor
up, cuts sections at them (`indexer.splitting.structure`).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Heading(NamedTuple):
    """A heading: where its lines start and end in the text, its level (1 outermost)
    and its title. The section it opens starts at `start`; its body at `end`."""

    start: int
    end: int
    level: int
    title: str


class Line(NamedTuple):
    start: int  # offset of the line's first character
    end: int  # offset after its line break
    text: str  # without the line break


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A line that starts a block other than a paragraph: a setext underline below it makes
# no heading (a list item, a quote, a table row, indented code).
_NOT_PARAGRAPH = re.compile(r"^(?: {4}|\t| {0,3}(?:[-*+>|]|\d{1,9}[.)])(?:[ \t]|$))")
# The `>` marks a line of a block quote opens with (`> > ` for a quote in a quote)
_QUOTE_MARKS = re.compile(r"^(?: {0,3}>[ \t]?)+")
_FRONT_MATTER_FENCE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}[ \t]*$")


def lines_of(text: str) -> list[Line]:
    """Every line of `text` with its offsets (line breaks as `str.splitlines` sees them)."""
    found, position = [], 0
    for line in text.splitlines(keepends=True):
        found.append(Line(position, position + len(line), line.rstrip("\r\n")))
        position += len(line)
    return found


def markdown_outline(text: str) -> list[Heading]:
    """ATX (`## Title`) and setext (`Title` over `===` or `---`) headings, skipping fenced
    code and a YAML front matter block at the very start. A heading in a block quote
    counts (it renders as one); a setext title only over an underline of its own quote."""
    lines = lines_of(text)
    found: list[Heading] = []
    fence: str | None = None
    paragraph: Line | None = None  # the previous line, when it may be a setext title
    paragraph_depth = 0  # how many quotes hold it
    for index in range(_front_matter_end(lines), len(lines)):
        quoted = lines[index]
        marks = _QUOTE_MARKS.match(quoted.text)
        depth = marks.group().count(">") if marks else 0
        # the line without its quote marks; `start` stays the line's own
        line = quoted._replace(text=quoted.text[marks.end() :] if marks else quoted.text)
        if paragraph is not None and paragraph_depth != depth:
            paragraph = None  # an underline closes no title of another quote
        opening = _FENCE.match(line.text)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            paragraph = None
            continue
        if opening:
            fence, paragraph = opening.group(1), None
            continue
        if atx := _ATX.match(line.text):
            title = _ATX_CLOSING.sub("", atx.group(2) or "").strip()
            if title:
                found.append(Heading(line.start, line.end, len(atx.group(1)), title))
            paragraph = None
            continue
        setext = _SETEXT.match(line.text)
        if setext and paragraph is not None:
            level = 1 if setext.group(1)[0] == "=" else 2
            found.append(Heading(paragraph.start, line.end, level, paragraph.text.strip()))
            paragraph = None
            continue
        plain = line.text.strip() and not setext and not _NOT_PARAGRAPH.match(line.text)
        paragraph, paragraph_depth = (line if plain else None), depth
    return found


def _front_matter_end(lines: list[Line]) -> int:
    """The index of the first line after a `---` front matter block (0 if there is none)."""
    if not lines or lines[0].text.rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if _FRONT_MATTER_FENCE.match(lines[index].text):
            return index + 1
    return 0


def rst_outline(text: str) -> list[Heading]:
    """reStructuredText section titles: a line underlined, and maybe overlined, with a run
    of one punctuation character at least as long as the title, after a blank line (or
    the start, or another title). Levels follow the order in which each adornment style
    (its character, with or without an overline) first appears."""
    lines = lines_of(text)
    styles: dict[tuple[str, bool], int] = {}
    found: list[Heading] = []
    taken = -1  # the index of the last line used by a title (an underline is no overline)
    for index in range(len(lines) - 1):
        line, underline = lines[index], lines[index + 1]
        title = line.text.strip()
        if not title or line.text[:1].isspace() or _RST_ADORNMENT.match(line.text):
            continue
        under = _RST_ADORNMENT.match(underline.text)
        if not under or len(underline.text.rstrip()) < len(title):
            continue
        start, overlined = line.start, False
        before = lines[index - 1] if index else None
        if before is not None and index - 1 > taken:
            over = _RST_ADORNMENT.match(before.text)
            if over and over.group(1) == under.group(1) and len(before.text.rstrip()) >= len(title):
                start, overlined = before.start, True
            elif before.text.strip() and not over:
                continue  # the last line of a paragraph, not a title
        style = (under.group(1), overlined)
        level = styles.setdefault(style, len(styles) + 1)
        found.append(Heading(start, underline.end, level, title))
        taken = index + 1
    return found

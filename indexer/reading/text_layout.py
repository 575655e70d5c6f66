"""Where the text extracted from a file came from: source lines, headings and pages.

A reader that changes the text on its way out (HTML loses its tags, a PDF is joined page
by page) records a `Layout` of anchors into its output; for the formats read as they are
(plain text, Markdown, reStructuredText, source code) the text is the file, so lines are
counted in it and headings are parsed from it. `locate` turns the character offsets of a
chunk into the line, end line, heading and page a person can open.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from indexer.reading.outline import Heading, markdown_outline, rst_outline

# Anchors: (offset in the extracted text, value), sorted by offset; a value holds from
# its offset up to the next anchor.
Anchors = list[tuple[int, int]]


@dataclass(frozen=True)
class CutText:
    """The text the splitter cuts in place of the text shown, the same but for whitespace,
    with the outline at its places in it (see `Layout.cut`)."""

    text: str
    outline: list[Heading]


@dataclass(frozen=True)
class Layout:
    """Anchors a reader recorded while extracting text.

    `lines` maps text offsets to 1-based source lines (None: the text is the file, count
    its newlines); `pages` maps them to 1-based PDF pages; `headings` are the offsets and
    titles of the headings in the text; `outline` has the same headings with their levels
    and extents where the reader knows them (HTML), for `indexer.splitting.structure`.

    `cut`, when set, is where the splitter chooses its cuts: HTML's text with each of the
    page's strings on a line of its own, where the text shown keeps inline elements in
    their line. Passages cut there are given back as the same stretches of the text shown
    (`indexer.splitting.cut_text`): cutting the joined text itself lost answers
    (docs/reports/2026-12-06-html-inline.md).
    """

    lines: Anchors | None = None
    pages: Anchors | None = None
    headings: list[tuple[int, str]] = field(default_factory=list)
    outline: list[Heading] = field(default_factory=list)
    cut: CutText | None = None


@dataclass(frozen=True)
class Location:
    """Where a chunk sits in its file: lines (1-based, inclusive), heading and page."""

    line: int | None = None
    end_line: int | None = None
    heading: str | None = None
    page: int | None = None


def text_layout(text: str, kind: str) -> Layout:
    """The layout of text read as it is: lines counted, headings parsed by its kind
    (`indexer.reading.formats.TEXT_KINDS`)."""
    if kind in ("markdown", "office"):
        return Layout(headings=markdown_headings(text))
    if kind == "rst":
        return Layout(headings=rst_headings(text))
    return Layout()


def markdown_headings(text: str) -> list[tuple[int, str]]:
    """ATX (`# Title`) and setext (`Title` over `===`) headings outside code fences."""
    return [(heading.start, heading.title) for heading in markdown_outline(text)]


def rst_headings(text: str) -> list[tuple[int, str]]:
    """reStructuredText section titles: a line underlined (and maybe overlined) with a
    run of one punctuation character at least as long as the title."""
    return [(heading.start, heading.title) for heading in rst_outline(text)]


def _value_at(anchors: Anchors | None, offset: int) -> int | None:
    if not anchors:
        return None
    index = bisect_right(anchors, (offset, float("inf"))) - 1
    return anchors[index][1] if index >= 0 else anchors[0][1]


class Locator:
    """Locates chunks of one document's text (newlines indexed once)."""

    def __init__(self, text: str, kind: str, layout: Layout | None = None):
        self.kind = kind
        self.layout = layout if layout is not None else text_layout(text, kind)
        self._newlines = (
            [match.start() for match in re.finditer("\n", text)]
            if self.layout.lines is None and kind not in ("pdf", "office")
            else None
        )
        self._heading_offsets = [offset for offset, _ in self.layout.headings]
        # every newline of the text itself, for the line maps of HTML and PDF chunks
        self._text_newlines = (
            self._newlines
            if self._newlines is not None
            else [match.start() for match in re.finditer("\n", text)]
        )

    def line_at(self, offset: int) -> int | None:
        """The 1-based source line of a text offset (None for a PDF)."""
        if self._newlines is not None:
            return bisect_right(self._newlines, offset - 1) + 1
        return _value_at(self.layout.lines, offset)

    def heading_at(self, offset: int) -> str | None:
        """The title of the nearest heading at or before `offset`."""
        index = bisect_right(self._heading_offsets, offset) - 1
        return self.layout.headings[index][1] if index >= 0 else None

    def locate_text(self, start: int, text: str) -> Location:
        """The location of `text`, found at offset `start`, without the whitespace at
        either end (a chunk's lines are those of its words)."""
        first = start + len(text) - len(text.lstrip())
        return self.locate(first, max(first, start + len(text.rstrip())))

    def locate(self, start: int, end: int) -> Location:
        """The location of the chunk spanning [start, end)."""
        return Location(
            line=self.line_at(start),
            end_line=self.line_at(max(start, end - 1)),
            heading=self.heading_at(start),
            page=_value_at(self.layout.pages, start),
        )

    def line_map(self, start: int, end: int) -> list | None:
        """Where each line of the text in [start, end) sits (`indexer.reading.line_map`):
        a PDF's [page, line within the page], an HTML page's source line; None for the
        formats whose lines are counted in the chunk's own text."""
        first = bisect_right(self._text_newlines, start - 1)
        last = bisect_right(self._text_newlines, end - 1)
        starts = [start] + [offset + 1 for offset in self._text_newlines[first:last]]
        if self.layout.pages:
            return [self._page_line(offset) for offset in starts]
        if self.layout.lines:
            return [_value_at(self.layout.lines, offset) for offset in starts]
        return None

    def _page_line(self, offset: int) -> list[int]:
        pages = self.layout.pages or []
        index = max(0, bisect_right(pages, (offset, float("inf"))) - 1)
        page_start, page = pages[index]
        newlines = self._text_newlines
        line = bisect_right(newlines, offset - 1) - bisect_right(newlines, page_start - 1) + 1
        return [page, line]

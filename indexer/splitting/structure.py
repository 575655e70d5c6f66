"""A document's own structure: the sections its headings (or pages) open.

The sections tile the text: the first starts at offset 0, each ends where the next one
starts and the last ends at the end of the text, so every character lies in exactly one.
Each knows its trail, the titles of the headings that hold it from the outermost in.
Text before the first heading is a section of level 0 with an empty trail; so is all of
a text that has no headings (plain text, and code in a language without an outline).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from indexer.reading.formats import file_format
from indexer.reading.outline import Heading, markdown_outline, rst_outline
from indexer.reading.text_layout import Layout
from indexer.splitting.code_outline import OUTLINED_LANGUAGES, code_outline

SECTION_SEPARATOR = " \u203a "  # a single right-pointing angle quote between titles


@dataclass(frozen=True)
class Section:
    """The text from one heading up to the next: offsets [start, end), where the text
    after the heading's own lines begins (`body`), its level (0 before any heading, 1
    outermost) and its trail of titles."""

    start: int
    body: int
    end: int
    level: int
    trail: tuple[str, ...]

    @property
    def title(self) -> str | None:
        """The section's own heading (None before the first heading)."""
        return self.trail[-1] if self.trail else None


def section_kind(path: str) -> str:
    """The kind of structure a file's text has, from its format
    (`indexer.reading.formats`): its language where it has one (`python`, say), else
    its kind of text (`markdown`, `rst`, `html`, `pdf`, `office`, `text`)."""
    found = file_format(path)
    if found is None:
        return "text"
    return found.language or found.text_kind


def document_sections(text: str, kind: str, layout: Layout | None = None) -> list[Section]:
    """The sections of `text`, of `section_kind` `kind`, read with its `layout` (the
    reader's, for HTML headings and PDF pages)."""
    if kind == "pdf":
        return page_sections(text, layout.pages if layout is not None else None)
    return sections_of(text, outline_of(text, kind, layout))


def outline_of(text: str, kind: str, layout: Layout | None = None) -> list[Heading]:
    """The headings of `text` of `section_kind` `kind`."""
    if kind in ("markdown", "office"):
        return markdown_outline(text)
    if kind == "rst":
        return rst_outline(text)
    if kind == "html":
        return recorded_outline(layout) if layout is not None else []
    if kind in OUTLINED_LANGUAGES:
        return code_outline(text, kind)
    return []


def sections_of(text: str, headings: list[Heading]) -> list[Section]:
    """The sections the headings open, tiling `text`, each with its trail: the titles of
    the nearest enclosing headings of lower level, outermost first."""
    ordered = _usable(headings, len(text))
    sections = []
    if not ordered or ordered[0].start > 0:
        end = ordered[0].start if ordered else len(text)
        sections.append(Section(0, 0, end, 0, ()))
    stack: list[Heading] = []
    for index, heading in enumerate(ordered):
        end = ordered[index + 1].start if index + 1 < len(ordered) else len(text)
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        body = min(max(heading.end, heading.start), end)
        trail = tuple(title for _start, _end, _level, title in stack)
        sections.append(Section(heading.start, body, end, heading.level, trail))
    return sections


def _usable(headings: list[Heading], length: int) -> list[Heading]:
    """The headings in order of their start, one per start, inside the text."""
    found: dict[int, Heading] = {}
    for heading in sorted(headings, key=lambda heading: heading.start):
        if 0 <= heading.start < length and heading.start not in found:
            found[heading.start] = heading
    return list(found.values())


def page_sections(text: str, pages: list[tuple[int, int]] | None) -> list[Section]:
    """One section per PDF page (from the reader's page starts), level 1, no trail."""
    starts = sorted({offset for offset, _page in pages or [] if 0 < offset < len(text)})
    bounds = [0, *starts, len(text)]
    return [Section(start, start, end, 1, ()) for start, end in itertools.pairwise(bounds)]


def recorded_outline(layout: Layout) -> list[Heading]:
    """The headings a reader recorded (`Layout.outline`; from `Layout.headings` as level-1
    headings one line long where only those are known)."""
    if layout.outline:
        return list(layout.outline)
    return [Heading(offset, offset, 1, title) for offset, title in layout.headings]

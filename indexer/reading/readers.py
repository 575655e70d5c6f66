"""Turn the bytes of one file into plain text, by file type.

Each reader takes the raw bytes and returns text, or raises `UnreadableFile` with a
reason a person can act on. Which reader reads which extension: `indexer.reading.formats`.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from indexer.errors import UnreadableFile
from indexer.reading.limits import READING_LIMITS, ReadingBudget, ReadingLimits
from indexer.reading.outline import Heading
from indexer.reading.page_chrome import is_chrome, is_main_content
from indexer.reading.pdf_text import clean_pdf_text, split_run_together
from indexer.reading.text_layout import CutText, Layout

if TYPE_CHECKING:
    from pypdf import PageObject

# A NUL byte in the first block is the usual sign of a binary file (the same test git uses).
_BINARY_SNIFF_BYTES = 8192
_COMMON_LEGACY_ENCODINGS = ("cp1252", "latin_1")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def decode_text(data: bytes) -> str:
    """Decode bytes as UTF-8 (with or without BOM) or, failing that, the detected encoding."""
    if b"\x00" in data[:_BINARY_SNIFF_BYTES] and not _looks_like_utf16(data):
        raise UnreadableFile("binary content (NUL bytes) in a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        raise UnreadableFile("could not detect the text encoding")
    # On short texts several code pages tie; Windows-1252 is by far the most common of them.
    for match in matches:
        tied = match.chaos == best.chaos and match.coherence == best.coherence
        if tied and match.encoding in _COMMON_LEGACY_ENCODINGS:
            return str(match)
    return str(best)


def _looks_like_utf16(data: bytes) -> bool:
    return data[:2] in (b"\xff\xfe", b"\xfe\xff")


def read_plain_text(data: bytes) -> str:
    """Plain text, Markdown, reStructuredText and source code: decoded as they are."""
    return decode_text(data)


def read_html(data: bytes) -> str:
    """The visible text of an HTML page: no tags, scripts, styles or comments."""
    return read_html_layout(data)[0]


def read_html_layout(data: bytes) -> tuple[str, Layout]:
    """`read_html`'s text, with the source line of each part of it and the headings."""
    from lxml import etree

    source = decode_text(data)
    # None for a page of nothing but whitespace or comments
    root = etree.fromstring(source.encode("utf-8", "surrogatepass"), parser=_html_parser())
    if root is None:
        return "", Layout(lines=[], headings=[], outline=[])
    page = _page_strings(root, _chrome_of(root))
    if not "".join(page.pieces).strip():  # a page that is nothing but navigation: its links
        page = _page_strings(root)
    text, to_text = _collapse_blank_runs("".join(page.pieces))
    offsets = to_text(np.fromiter((offset for offset, _ in page.lines), np.int64, len(page.lines)))
    outline = _outline(page.headings, to_text, shown=True)
    cut_text, to_cut = _collapse_blank_runs("\n".join(page.pieces[at] for at in page.strings))
    layout = Layout(
        lines=_last_per_offset(offsets, [line for _, line in page.lines]),
        headings=[(heading.start, heading.title) for heading in outline],
        outline=outline,
        cut=CutText(cut_text, _outline(page.headings, to_cut, shown=False))
        if cut_text != text
        else None,
    )
    return text, layout


_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements that flow inside a line of text: their strings join their neighbours'. Any
# other element (a paragraph, an item, a cell, `<br>`, an unknown one) starts a line.
_INLINE = frozenset({
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn",
    "em", "font", "i", "img", "ins", "kbd", "label", "mark", "q", "s", "samp", "small",
    "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
})  # fmt: skip
# Elements whose content is not the page's text (a page's <head> gives its <title> only).
_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg"})


def _html_parser():  # -> lxml.etree.HTMLParser
    from lxml import etree

    # the text is decoded already (`decode_text`): a <meta charset> must not change it
    return etree.HTMLParser(encoding="utf-8", remove_comments=False, huge_tree=True)


class _HeadingEnd:
    """Taken off the walk's stack once a heading's strings are all read."""

    __slots__ = ("element", "first", "slot")

    def __init__(self, element: Any, first: int, slot: int):
        self.element, self.first, self.slot = element, first, slot


# Taken off the walk's stack after a block element's strings: what follows starts a line.
_BLOCK_END = object()


class _PageHeading(NamedTuple):
    """A heading's extent in the text shown and in the text cut (`Layout.cut`), before
    blank runs are collapsed, its level and its title."""

    start: int
    end: int
    cut_start: int
    cut_end: int
    level: int
    title: str


class _PageStrings(NamedTuple):
    """What `_page_strings` reads: the pieces of the text shown (the strings and the line
    breaks blocks make), the index in `pieces` of each string, the source lines (offset in
    the text shown, line) and the headings."""

    pieces: list[str]
    strings: list[int]
    lines: list[tuple[int, int]]
    headings: list[_PageHeading]


def _outline(
    headings: list[_PageHeading], collapsed: Callable[[np.ndarray], np.ndarray], shown: bool
) -> list[Heading]:
    """The headings' extents in the text shown (`shown`) or cut, through `collapsed`."""
    raw = [(h.start, h.end) if shown else (h.cut_start, h.cut_end) for h in headings]
    extents = collapsed(np.array(raw, np.int64).reshape(-1, 2))
    return [
        Heading(int(start), int(end), heading.level, heading.title)
        for (start, end), heading in zip(extents, headings, strict=True)
    ]


def _chrome_of(root: Any) -> set[Any]:
    """The outermost navigation chrome elements of the page (`page_chrome`), found
    outside its main content (inside which nothing is chrome)."""
    found, todo = set(), [root]
    while todo:
        node = todo.pop()
        if not isinstance(node.tag, str) or is_main_content(node):
            continue
        if is_chrome(node):
            found.add(node)  # the element objects stay alive here, so lookups match
            continue
        todo.extend(node)
    return found


def _page_strings(root: Any, chrome: set[Any] | frozenset[Any] = frozenset()) -> _PageStrings:
    """The visible strings of the page under `root` (without its tail) in document order,
    to be joined as they are: a string after the start or end of a block element begins
    with a newline, one inside a line (`_INLINE`) joins its neighbours; the source line
    at each string's start and after each newline in it, as (offset in the joined text,
    line): that of the last tag opened before it, plus the newlines read since; and each
    heading, there and in the strings joined by "\n" (the text cut).

    Not shown: hidden elements, comments' text (a comment's tail is the page's), of a
    <head> all but the string of its <title> and a blank line, and the `chrome` elements
    (walked all the same, so that the source lines after them stay exact)."""
    pieces: list[str] = []  # the strings, and the line breaks between blocks
    strings: list[int] = []  # the index in `pieces` of each string
    offsets: list[int] = []  # where each string starts in the joined text
    cut_offsets: list[int] = []  # and in the strings joined by "\n"
    lines: list[tuple[int, int]] = []
    headings: list[_PageHeading | None] = []
    line, position, cut_position, new_line = 1, 0, -1, False
    todo: list[Any] = [root]
    while todo:
        node = todo.pop()
        if node is _BLOCK_END:
            new_line = True
            continue
        if isinstance(node, str):
            if pieces and new_line:
                pieces.append("\n")  # the break a block makes, on no source line of its own
                position += 1
            new_line = False
            lines.append((position, line))
            index = node.find("\n")
            while index >= 0:
                line += 1
                lines.append((position + index + 1, line))
                index = node.find("\n", index + 1)
            strings.append(len(pieces))
            offsets.append(position)
            cut_offsets.append(cut_position + 1)
            pieces.append(node)
            position += len(node)
            cut_position += 1 + len(node)
            continue
        if isinstance(node, _HeadingEnd):
            read = pieces[strings[node.first] :] if node.first < len(strings) else []
            # without the permalink mark Sphinx and MkDocs put after each title
            title = " ".join("".join(read).split()).rstrip(" ¶")
            if title:
                headings[node.slot] = _PageHeading(
                    offsets[node.first],
                    position,
                    cut_offsets[node.first],
                    cut_position,
                    int(node.element.tag[1]),
                    title,
                )
            continue
        tag = node.tag
        if not isinstance(tag, str) or tag in _HIDDEN:  # comments too
            continue
        if tag not in _INLINE:
            new_line = True
        if tag == "head":
            title = node.find(".//title")
            if title is not None:
                line = title.sourceline or line  # the title's string starts on its own line
            todo.append(_strings_of(title) + "\n\n" if title is not None else "")
            continue
        line = node.sourceline or line
        if node in chrome:
            line = _line_after(node, line)
            continue
        if tag in _HEADINGS:
            headings.append(None)
            todo.append(_HeadingEnd(node, len(strings), len(headings) - 1))
        for child in reversed(node):
            if child.tail:
                todo.append(child.tail)
            if isinstance(child.tag, str) and child.tag not in _INLINE:
                todo.append(_BLOCK_END)
            todo.append(child)
        if node.text:
            todo.append(node.text)
    return _PageStrings(
        pieces, strings, lines, [heading for heading in headings if heading is not None]
    )


def _line_after(element: Any, line: int) -> int:
    """The source line after `element`'s strings (without its tail), walked as
    `_page_strings` walks them, none of them kept."""
    todo: list[Any] = [element]
    while todo:
        node = todo.pop()
        if isinstance(node, str):
            line += node.count("\n")
            continue
        if not isinstance(node.tag, str) or node.tag in _HIDDEN:
            continue
        line = node.sourceline or line
        for child in reversed(node):
            if child.tail:
                todo.append(child.tail)
            todo.append(child)
        if node.text:
            todo.append(node.text)
    return line


def _strings_of(element: Any) -> str:
    return "".join(_page_strings(element).pieces)


def _collapse_blank_runs(raw: str) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """`raw` with runs of blank lines made one blank line and the ends stripped, and the
    function taking offsets in `raw` (an array) to the offsets of the same places in the
    result (an array of the same shape)."""
    starts, shifts = [0], [0]  # where each kept stretch of `raw` starts; removed before it
    runs: list[int] = []  # where each collapsed run starts
    pieces, removed, position = [], 0, 0
    for match in _BLANK_RUNS.finditer(raw):
        pieces += [raw[position : match.start()], "\n\n"]
        runs.append(match.start())
        removed += len(match.group()) - 2
        starts.append(match.end())
        shifts.append(removed)
        position = match.end()
    pieces.append(raw[position:])
    collapsed = "".join(pieces)
    lead = len(collapsed) - len(collapsed.lstrip())
    text = collapsed.strip()
    stretch_starts, stretch_shifts = np.array(starts), np.array(shifts)
    # the run after each stretch (none after the last one)
    run_starts = np.array([*runs, len(raw) + 1])

    def to_text(offsets: np.ndarray) -> np.ndarray:
        index = np.searchsorted(stretch_starts, offsets, side="right") - 1
        shift = stretch_shifts[index]
        moved = np.where(
            offsets >= run_starts[index],  # inside a collapsed run: at its one blank line
            run_starts[index] - shift + 1,
            offsets - shift,
        )
        return np.clip(moved - lead, 0, len(text))

    return text, to_text


def _last_per_offset(offsets: np.ndarray, values: list[int]) -> list[tuple[int, int]]:
    """(offset, value) anchors with one entry per offset, the last given for it; `offsets`
    never decrease."""
    if not len(offsets):
        return []
    last = np.flatnonzero(np.append(offsets[1:] != offsets[:-1], True))
    return [(int(offsets[i]), values[i]) for i in last]


def read_pdf(data: bytes, *, limits: ReadingLimits = READING_LIMITS) -> str:
    """The text layer of a PDF, one paragraph break between pages, cleaned (`pdf_text`)."""
    return read_pdf_layout(data, limits=limits)[0]


def read_pdf_layout(data: bytes, *, limits: ReadingLimits = READING_LIMITS) -> tuple[str, Layout]:
    """`read_pdf`'s text, with where each page's text starts in it; its pages and text
    counted against `limits` (`indexer.reading.limits`)."""
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    budget = ReadingBudget("PDF", limits)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile("the PDF is encrypted")
        pages = [budget.text(_page_text(page)) for page in budget.counted(reader.pages)]
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as error:
        raise UnreadableFile(f"corrupt PDF ({error})") from error
    kept = [(number, page.strip()) for number, page in enumerate(pages, start=1) if page.strip()]
    if not kept:
        raise UnreadableFile("the PDF has no text layer (scanned images are not OCRed)")
    starts, position = [], 0
    for number, page in kept:
        starts.append((position, number))
        position += len(page) + 2
    return "\n\n".join(page for _, page in kept), Layout(pages=starts)


def _page_text(page: PageObject) -> str:
    """A page's text, cleaned (`pdf_text`: each page on its own, so that page offsets
    hold), with the words its layout mode sees as separate split apart."""
    text = page.extract_text() or ""
    if not text.strip():
        return text
    try:
        layout = page.extract_text(extraction_mode="layout") or ""
    except Exception:  # layout mode is a refinement: a page it cannot lay out keeps its text
        return clean_pdf_text(text)
    return clean_pdf_text(split_run_together(text, layout))

"""Turn the bytes of one file into plain text, by file type.

Each reader takes the raw bytes and returns text, or raises `UnreadableFile` with a
reason a person can act on. Which reader handles which extension lives in `READERS`.
"""

from __future__ import annotations

import io
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from indexer.errors import UnreadableFile
from indexer.reading.layout import Layout
from indexer.reading.limits import READING_LIMITS, ReadingBudget, ReadingLimits
from indexer.reading.office import read_docx, read_epub, read_odt, read_pptx
from indexer.reading.page_chrome import is_chrome, is_main_content
from indexer.reading.pdf_text import clean_pdf_text, split_run_together
from indexer.splitting.outline import Heading

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
    from lxml import html as lxml_html

    source = decode_text(data)
    try:
        root = lxml_html.document_fromstring(
            source.encode("utf-8", "surrogatepass"), parser=_html_parser()
        )
    except etree.ParserError:  # nothing but whitespace, or nothing a page holds
        return "", Layout(lines=[], headings=[], outline=[])
    text, layout = _html_text(root, drop_chrome=True)
    if not text:  # a page that is nothing but navigation: its links are its text
        text, layout = _html_text(root, drop_chrome=False)
    return text, layout


def _html_text(root: Any, *, drop_chrome: bool) -> tuple[str, Layout]:
    pieces: list[str] = []
    raw_lines: list[tuple[int, int]] = []
    raw_headings: list[tuple[int, int, int, str]] = []  # (start, end, level, title)
    # The strings joined by "\n", walked in order so that each one's source line is
    # known: that of the last tag opened before it, plus the newlines read since.
    line, position = 1, 0
    for node, chrome in _walk(root, drop_chrome=drop_chrome):
        if not isinstance(node, str):
            line = node.sourceline or line
            if node.tag in _HEADINGS and not chrome:
                strings = [s for s in _page_nodes(node) if isinstance(s, str)]
                # without the permalink mark Sphinx and MkDocs put after each title
                title = " ".join(" ".join(strings).split()).rstrip(" ¶")
                if title:
                    start = position + (1 if pieces else 0)
                    end = start + sum(len(s) for s in strings) + len(strings) - 1
                    raw_headings.append((start, end, int(node.tag[1]), title))
            continue
        if chrome:
            line += node.count("\n")
            continue
        if pieces:
            position += 1  # the separator
        raw_lines.append((position, line))
        index = node.find("\n")
        while index >= 0:
            line += 1
            raw_lines.append((position + index + 1, line))
            index = node.find("\n", index + 1)
        pieces.append(node)
        position += len(node)
    raw = "\n".join(pieces)
    text, to_text = _collapse_blank_runs(raw)
    layout = Layout(
        lines=_monotone([(to_text(offset), value) for offset, value in raw_lines]),
        headings=[(to_text(start), title) for start, _end, _level, title in raw_headings],
        outline=[
            Heading(to_text(start), to_text(end), level, title)
            for start, end, level, title in raw_headings
        ],
    )
    return text, layout


_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements whose content is not the page's text (a page's <head> gives its <title> only).
_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg"})


def _html_parser():  # -> lxml.html.HTMLParser
    from lxml import html as lxml_html

    # the text is decoded already (`decode_text`): a <meta charset> must not change it
    return lxml_html.HTMLParser(encoding="utf-8", remove_comments=False, huge_tree=True)


def _page_nodes(top: Any) -> Iterator[Any]:
    """The visible elements and strings of `top` (without its tail), in document order:
    no hidden element, no comment's text (its tail is the page's), and a <head> as the
    string of its <title> and a blank line."""
    return (node for node, _chrome in _walk(top, drop_chrome=False))


def _walk(top: Any, *, drop_chrome: bool) -> Iterator[tuple[Any, bool]]:
    """`_page_nodes` of `top`, each with whether it lies in navigation chrome
    (`page_chrome`; always False unless `drop_chrome`). Chrome is walked, not skipped, so
    that the newlines in it still count towards the source lines of what follows."""
    todo: list[tuple[Any, bool, bool]] = [(top, False, False)]  # (node, in main, in chrome)
    while todo:
        node, in_main, chrome = todo.pop()
        if isinstance(node, str):
            yield node, chrome
            continue
        if not isinstance(node.tag, str) or node.tag in _HIDDEN:  # comments too
            continue
        if node.tag == "head":
            title = node.find(".//title")
            yield (_strings_of(title) + "\n\n" if title is not None else ""), chrome
            continue
        if drop_chrome and not chrome:
            in_main = in_main or is_main_content(node)
            chrome = not in_main and is_chrome(node)
        yield node, chrome
        if node.text:
            yield node.text, chrome
        for child in reversed(node):
            if child.tail:
                todo.append((child.tail, in_main, chrome))
            todo.append((child, in_main, chrome))


def _strings_of(element: Any) -> str:
    return "".join(node for node in _page_nodes(element) if isinstance(node, str))


def _collapse_blank_runs(raw: str) -> tuple[str, Callable[[int], int]]:
    """`raw` with runs of blank lines made one blank line and the ends stripped, and the
    function taking an offset in `raw` to the offset of the same place in the result."""
    stretches = [(0, 0)]  # (raw offset where a kept stretch starts, characters removed before)
    runs: list[int] = []  # raw offset where each collapsed run starts
    pieces, removed, position = [], 0, 0
    for match in _BLANK_RUNS.finditer(raw):
        pieces += [raw[position : match.start()], "\n\n"]
        runs.append(match.start())
        removed += len(match.group()) - 2
        stretches.append((match.end(), removed))
        position = match.end()
    pieces.append(raw[position:])
    collapsed = "".join(pieces)
    lead = len(collapsed) - len(collapsed.lstrip())
    text = collapsed.strip()

    def to_text(offset: int) -> int:
        index = bisect_right(stretches, (offset, float("inf"))) - 1
        _start, shift = stretches[index]
        moved = offset - shift
        if index < len(runs) and offset >= runs[index]:  # inside a collapsed run
            moved = runs[index] - shift + 1
        return min(max(0, moved - lead), len(text))

    return text, to_text


def _monotone(anchors: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Anchors with one entry per offset (the last), in order."""
    found: dict[int, int] = {}
    for offset, value in anchors:
        found[offset] = value
    return sorted(found.items())


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


# fmt: off
_CODE_EXTENSIONS = (
    ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".java", ".kt", ".kts",
    ".scala", ".groovy", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".go", ".rs",
    ".rb", ".php", ".swift", ".m", ".mm", ".r", ".jl", ".lua", ".pl", ".pm", ".sh", ".bash",
    ".zsh", ".fish", ".ps1", ".sql", ".css", ".scss", ".sass", ".less", ".vue", ".svelte",
    ".dart", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".elm", ".toml", ".yaml", ".yml",
    ".ini", ".cfg", ".conf", ".json", ".xml", ".tex", ".bib", ".proto", ".graphql", ".mk",
)
_TEXT_EXTENSIONS = (
    ".txt", ".text", ".md", ".markdown", ".mdx", ".rst", ".org", ".adoc", ".asciidoc", ".csv",
    ".tsv", ".log",
)
# fmt: on

Reader = Callable[[bytes], str]

READERS: dict[str, Reader] = {
    **dict.fromkeys(_TEXT_EXTENSIONS + _CODE_EXTENSIONS, read_plain_text),
    ".html": read_html,
    ".htm": read_html,
    ".xhtml": read_html,
    ".pdf": read_pdf,
    ".docx": read_docx,
    ".pptx": read_pptx,
    ".odt": read_odt,
    ".epub": read_epub,
}

# The readers whose text is not the file's: they also say where each part came from.
LAYOUT_READERS: dict[str, Callable[[bytes], tuple[str, Layout]]] = {
    ".html": read_html_layout,
    ".htm": read_html_layout,
    ".xhtml": read_html_layout,
    ".pdf": read_pdf_layout,
}

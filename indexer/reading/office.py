"""Readers for Word (.docx), PowerPoint (.pptx), OpenDocument text (.odt) and EPUB files.

Each returns the document's text in reading order, one blank line between blocks, with
its headings written as Markdown heading lines (`indexer.reading.headings`). All four formats are
zip archives: the archive is checked first, so a file that is not one, or that would
unpack to an absurd size, fails in one line before any library parses it. While reading,
each counts its parts and text against `indexer.reading.limits`.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from indexer.errors import UnreadableFile
from indexer.reading.headings import markdown_heading
from indexer.reading.limits import READING_LIMITS, ReadingBudget, ReadingLimits

# Office files are mostly compressed XML; a real one rarely unpacks to more than a few
# times its size. This bounds the memory a crafted archive (a zip bomb) can take.
_MAX_UNPACKED_BYTES = 256 * 1024 * 1024
_BLANK_RUNS = re.compile(r"\n{3,}")
_SPACES = re.compile(r"[ \t\r\f\v]+")


def _checked_archive(data: bytes, kind: str) -> io.BytesIO:
    """The bytes as a file object, once they are known to be a zip of sane unpacked size."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as error:
        raise UnreadableFile(f"corrupt {kind} (not a readable zip archive: {error})") from error
    if unpacked > _MAX_UNPACKED_BYTES:
        limit = _MAX_UNPACKED_BYTES // (1024 * 1024)
        raise UnreadableFile(f"the {kind} would unpack to over {limit} MB")
    return io.BytesIO(data)


Extract = Callable[[io.BytesIO, ReadingBudget], str]


def _read(kind: str, extract: Extract, data: bytes, limits: ReadingLimits) -> str:
    """`extract(file, budget)` on the checked archive, any failure a one-line reason.

    The libraries parse parts lazily (a slide's XML when the slide is reached), so a
    broken part can surface anywhere in the extraction, not only when the file is opened.
    """
    archive = _checked_archive(data, kind)
    budget = ReadingBudget(kind, limits)
    try:
        return extract(archive, budget)
    except UnreadableFile:
        raise
    except Exception as error:  # every library has its own exceptions for a broken file
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        reason = type(error).__name__ + (f": {detail}" if detail else "")
        raise UnreadableFile(f"corrupt {kind} ({reason})") from error


def _join_blocks(blocks: Iterable[str]) -> str:
    text = "\n\n".join(block.strip() for block in blocks if block and block.strip())
    return _BLANK_RUNS.sub("\n\n", text)


def _table_rows(rows: Iterable[Iterable[str]]) -> str:
    """A table as one line per row, its cells separated by " | "."""
    lines = []
    for row in rows:
        cells = [" ".join(cell.split()) for cell in row]
        if any(cells):
            lines.append(" | ".join(cells))
    return "\n".join(lines)


# --- Word ---------------------------------------------------------------------------------

_WORD_HEADING_STYLE = re.compile(r"heading\s*(\d+)$", re.IGNORECASE)


def _word_heading_level(paragraph: Any) -> int | None:
    """The heading level of a paragraph's style, or of the built-in style it derives from."""
    style = paragraph.style
    while style is not None:
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 1
        if match := _WORD_HEADING_STYLE.match(name):
            return int(match.group(1))
        style = style.base_style
    return None


_WORD_NAMESPACE = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_WORD_RUNS = (f"{_WORD_NAMESPACE}r", f"{_WORD_NAMESPACE}hyperlink")


def _word_paragraph_text(paragraph: Any) -> str:
    """python-docx's `Paragraph.text` of a `w:p` element, without its XPath query: lxml
    compiles that anew on each call, which made even an empty paragraph cost 90 µs."""
    return "".join(child.text for child in paragraph if child.tag in _WORD_RUNS)


def _word_table(table: Any, budget: ReadingBudget) -> str:
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in budget.counted(row.cells):
            if cell._tc is not previous:  # a merged cell is listed once per grid column
                cells.append("\n".join(_word_paragraph_text(p) for p in cell._tc.p_lst))
            previous = cell._tc
        rows.append(cells)
    return _table_rows(rows)


def read_docx(data: bytes, *, limits: ReadingLimits = READING_LIMITS) -> str:
    """A Word document's body in order: paragraphs, tables row by row, headings as `#`."""
    return _read("DOCX", _docx_text, data, limits)


def _docx_text(archive: io.BytesIO, budget: ReadingBudget) -> str:
    import docx
    from docx.table import Table

    # Each style's heading level is worked out once: python-docx finds a paragraph's style
    # by scanning all the document's styles, 2 ms for each paragraph.
    levels: dict[str | None, int | None] = {}
    blocks = []
    for block in budget.counted(docx.Document(archive).iter_inner_content()):
        if isinstance(block, Table):
            blocks.append(budget.text(_word_table(block, budget)))
            continue
        style_id = block._p.style
        if style_id not in levels:
            levels[style_id] = _word_heading_level(block)
        level, text = levels[style_id], _word_paragraph_text(block._p)
        blocks.append(budget.text(markdown_heading(level, text) if level else text))
    return _join_blocks(blocks)


# --- PowerPoint -----------------------------------------------------------------------------


def _shapes_in_reading_order(shapes: Iterable[Any], budget: ReadingBudget) -> Iterator[Any]:
    """Shapes top to bottom, then left to right; a group's members in place of the group."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    def position(shape: Any) -> tuple[int, int]:
        return (shape.top or 0, shape.left or 0)

    for shape in sorted(budget.counted(shapes), key=position):
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes_in_reading_order(shape.shapes, budget)
        else:
            yield shape


def _shape_text(shape: Any, budget: ReadingBudget) -> str:
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = shape.table.rows
        return _table_rows([cell.text for cell in budget.counted(row.cells)] for row in rows)
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        paragraphs = budget.timed(shape.text_frame.paragraphs)
        return "\n".join(paragraph.text for paragraph in paragraphs)
    return ""


def read_pptx(data: bytes, *, limits: ReadingLimits = READING_LIMITS) -> str:
    """Each slide: its title as a `#` heading, its shapes in reading order, then its notes."""
    return _read("PPTX", _pptx_text, data, limits)


def _pptx_text(archive: io.BytesIO, budget: ReadingBudget) -> str:
    from pptx import Presentation

    blocks = []
    for number, slide in enumerate(budget.counted(Presentation(archive).slides), start=1):
        title_shape = slide.shapes.title
        title = title_shape.text_frame.text if title_shape is not None else ""
        heading = markdown_heading(1, title) or markdown_heading(1, f"Slide {number}")
        blocks.append(budget.text(heading))
        for shape in _shapes_in_reading_order(slide.shapes, budget):
            if title_shape is None or shape.shape_id != title_shape.shape_id:
                blocks.append(budget.text(_shape_text(shape, budget)))
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text
            if notes.strip():
                blocks.append(budget.text(f"Notes: {notes}"))
    return _join_blocks(blocks)


# --- OpenDocument text ------------------------------------------------------------------------

# Elements whose text is not part of the document as read: deleted text kept for change
# tracking, the sequence and variable declarations, annotations' metadata.
_ODF_SKIPPED = frozenset({"tracked-changes", "sequence-decls", "variable-decls", "forms"})


def _odf_blocks(node: Any, budget: ReadingBudget) -> Iterator[str]:
    from odf.teletype import extractText

    elements = (child for child in node.childNodes if child.nodeType == child.ELEMENT_NODE)
    for child in budget.counted(elements):
        name = child.qname[1]
        if name in _ODF_SKIPPED:
            continue
        if name == "h":
            level = str(child.getAttribute("outlinelevel") or "1")
            yield markdown_heading(int(level) if level.isdigit() else 1, extractText(child))
        elif name == "p":
            yield extractText(child)
        elif name == "table":
            yield _table_rows(
                [
                    extractText(cell)
                    for cell in budget.counted(row.childNodes)
                    if cell.qname[1] == "table-cell"
                ]
                for row in _odf_descendants(child, "table-row")
            )
        else:  # sections, lists and list items, frames and text boxes: their blocks in order
            yield from _odf_blocks(child, budget)


def _odf_descendants(node: Any, name: str) -> Iterator[Any]:
    for child in node.childNodes:
        if child.nodeType != child.ELEMENT_NODE:
            continue
        if child.qname[1] == name:
            yield child
        elif child.qname[1] != "table":  # a nested table's rows are its own
            yield from _odf_descendants(child, name)


def read_odt(data: bytes, *, limits: ReadingLimits = READING_LIMITS) -> str:
    """An OpenDocument text's body in order: headings as `#` by outline level, tables by row."""
    return _read("ODT", _odt_text, data, limits)


def _odt_text(archive: io.BytesIO, budget: ReadingBudget) -> str:
    from odf.opendocument import load

    document = load(archive)
    if document.text is None:  # a spreadsheet or drawing renamed, or a damaged content.xml
        raise UnreadableFile("corrupt ODT (no text body in content.xml)")
    return _join_blocks(budget.text(block) for block in _odf_blocks(document.text, budget))


# --- EPUB -----------------------------------------------------------------------------------

_XHTML_BLOCKS = (
    "p", "div", "li", "tr", "blockquote", "pre", "section", "article", "dd", "dt",
    "figcaption", "table", "ul", "ol", "aside", "header", "footer",
)  # fmt: skip


def _xhtml_text(content: bytes, budget: ReadingBudget) -> str:
    """The visible text of one XHTML chapter, blocks on their own lines, headings as `#`."""
    from bs4 import BeautifulSoup, NavigableString
    from bs4.element import PreformattedString

    soup = BeautifulSoup(content, "html.parser")
    for hidden in soup(["script", "style", "head", "noscript", "template", "svg"]):
        hidden.decompose()
    # Comments, the XML declaration and the doctype: markup, not text.
    for markup in soup.find_all(string=lambda node: isinstance(node, PreformattedString)):
        markup.extract()
    for string in budget.timed(soup.find_all(string=True)):
        if string.find_parent("pre") is None:
            string.replace_with(NavigableString(_SPACES.sub(" ", string.replace("\n", " "))))
    for heading in budget.counted(soup(["h1", "h2", "h3", "h4", "h5", "h6"])):
        line = markdown_heading(int(heading.name[1]), heading.get_text(" "))
        heading.replace_with(NavigableString(f"\n\n{line}\n\n"))
    for line_break in budget.timed(soup("br")):
        line_break.replace_with(NavigableString("\n"))
    for block in budget.counted(soup(list(_XHTML_BLOCKS))):
        block.insert_before(NavigableString("\n\n"))
        block.insert_after(NavigableString("\n\n"))
    lines = (line.strip() for line in soup.get_text().split("\n"))
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()


def read_epub(data: bytes, *, limits: ReadingLimits = READING_LIMITS) -> str:
    """An e-book's chapters in spine (reading) order, headings as `#`; its own table of
    contents page is left out, since it repeats the headings, and a chapter the spine
    lists more than once is read once."""
    return _read("EPUB", _epub_text, data, limits)


def _epub_text(archive: io.BytesIO, budget: ReadingBudget) -> str:
    from ebooklib import epub

    book = epub.read_epub(archive, {"ignore_ncx": True})
    items: dict[str, Any] = {}  # by id, found once (the book's own look-up is linear)
    for item in book.get_items():
        items.setdefault(item.id, item)
    blocks, read = [], set()
    for entry in budget.counted(book.spine):
        item_id = entry[0] if isinstance(entry, tuple) else entry
        item = items.get(item_id)
        if item is None or isinstance(item, epub.EpubNav) or item_id in read:
            continue
        read.add(item_id)
        blocks.append(budget.text(_xhtml_text(item.get_content(), budget)))
    return _join_blocks(blocks)

"""Turn the bytes of one file into plain text, by file type.

Each reader takes the raw bytes and returns text, or raises `UnreadableFile` with a
reason a person can act on. Which reader handles which extension lives in `READERS`.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from indexer.errors import UnreadableFile
from indexer.office_readers import read_docx, read_epub, read_odt, read_pptx
from indexer.pdf_text import clean_pdf_text, split_run_together

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
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(decode_text(data), "html.parser")
    for hidden in soup(["script", "style", "noscript", "template", "svg", "head"]):
        if hidden.name == "head":
            title = hidden.find("title")
            hidden.replace_with(title.get_text() + "\n\n" if title else "")
        else:
            hidden.decompose()
    for comment in soup.find_all(string=lambda node: isinstance(node, Comment)):
        comment.extract()
    text = soup.get_text("\n")
    return _BLANK_RUNS.sub("\n\n", text).strip()


def read_pdf(data: bytes) -> str:
    """The text layer of a PDF, one paragraph break between pages, cleaned (`pdf_text`)."""
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile("the PDF is encrypted")
        pages = [_page_text(page) for page in reader.pages]
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as error:
        raise UnreadableFile(f"corrupt PDF ({error})") from error
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise UnreadableFile("the PDF has no text layer (scanned images are not OCRed)")
    return clean_pdf_text(text)


def _page_text(page: PageObject) -> str:
    """A page's text, with the words its layout mode sees as separate split apart."""
    text = page.extract_text() or ""
    if not text.strip():
        return text
    try:
        layout = page.extract_text(extraction_mode="layout") or ""
    except Exception:  # layout mode is a refinement: a page it cannot lay out keeps its text
        return text
    return split_run_together(text, layout)


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

"""File type names for filters (`--type md`), and the extensions each one covers (cheap to
import: the command line's help lists them)."""

from __future__ import annotations

from indexer.reading.readers import READERS
from indexer.reading.text_layout import RST_SUFFIXES

_CODE = tuple(
    suffix
    for suffix in READERS
    if suffix
    not in {".txt", ".text", ".md", ".markdown", ".mdx", ".rst", ".html", ".htm", ".xhtml", ".pdf"}
    and suffix not in {".docx", ".pptx", ".odt", ".epub"}
    and suffix not in {".org", ".adoc", ".asciidoc", ".csv", ".tsv", ".log"}
)
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "md": (".md", ".markdown", ".mdx"),
    "rst": RST_SUFFIXES,  # with Sphinx's NAME.rst.txt source copies, read as reST
    "txt": (".txt", ".text"),
    "html": (".html", ".htm", ".xhtml"),
    "pdf": (".pdf",),
    "office": (".docx", ".pptx", ".odt"),
    "epub": (".epub",),
    "code": _CODE,
}


def longer_suffixes(suffix: str, chosen: set[str]) -> tuple[str, ...]:
    """The named types' extensions that end in `suffix` without being it or `chosen`: a
    file `x.rst.txt` is reStructuredText, so `txt` must leave it out unless `rst` is asked."""
    known = {other for suffixes in FILE_TYPES.values() for other in suffixes}
    return tuple(
        sorted(
            other
            for other in known
            if other != suffix and other.endswith(suffix) and other not in chosen
        )
    )

"""File type names for filters (`--type md`), and the extensions each one covers (cheap to
import: the command line's help lists them)."""

from __future__ import annotations

from indexer.reading.readers import READERS

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
    "rst": (".rst",),
    "txt": (".txt", ".text"),
    "html": (".html", ".htm", ".xhtml"),
    "pdf": (".pdf",),
    "office": (".docx", ".pptx", ".odt"),
    "epub": (".epub",),
    "code": _CODE,
}

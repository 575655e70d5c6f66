"""What the `read` tool returns: a stored passage, or a document's text by lines.

A document's text is the one the index extracted (rebuilt from its passages, see
`search.documents.stitch`). For plain text, Markdown, reStructuredText, code and
records that is the file's own text: its lines are cut exactly. For HTML and Office
files the lines of hits are the source file's, which the extracted text does not keep:
a line range gives the passages that cover it, with their first and last source lines.
A PDF's passages have pages, not lines: it is read whole (up to `max_chars`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from indexer.errors import DocumentNotFound, InvalidQuery
from indexer.reading.layout import text_kind
from search.documents import DocumentText, load_document
from search.locations import fill_locations

if TYPE_CHECKING:
    from search.engine import Searcher

MAX_READ_CHARS = 100_000
# The kinds whose extracted text is the file's own, line for line.
_OWN_LINES = ("text", "markdown", "rst")
DEFAULT_READ_CHARS = 20_000


def read_passage(searcher: Searcher, chunk_id: int) -> dict[str, Any]:
    """The passage with this id: its document's path, its line range and its text."""
    with searcher.store.snapshot([]) as snapshot:
        stored = snapshot.chunks([chunk_id]).get(chunk_id)
        if stored is None:
            raise DocumentNotFound(f"no passage with chunk_id {chunk_id} in the index")
        chunk = fill_locations(snapshot, [stored])[chunk_id]
    return {
        "path": chunk.path,
        "chunk_id": chunk.id,
        "document_id": chunk.document_id,
        "ordinal": chunk.ordinal,
        "line": chunk.line,
        "end_line": chunk.end_line,
        "heading": chunk.heading,
        "page": chunk.page,
        "text": chunk.text,
    }


def read_document(
    searcher: Searcher,
    path: str,
    start_line: int = 1,
    end_line: int | None = None,
    max_chars: int = DEFAULT_READ_CHARS,
) -> dict[str, Any]:
    """Lines `start_line` to `end_line` (1-based, inclusive; default: to the end) of the
    document stored at `path`, cut at `max_chars` characters (`truncated` says so, and
    `end_line` is then the last line given whole)."""
    if end_line is not None and end_line < start_line:
        raise InvalidQuery(f"end_line {end_line} is before start_line {start_line}")
    with searcher.store.snapshot([]) as snapshot:
        documents = snapshot.documents_at(path)
        if not documents:
            raise DocumentNotFound(
                f"{path}: no such document in the index (give a path as search results "
                "show it, or record:ID)"
            )
        host = searcher.store.host
        document = next((d for d in documents if d.host == host), documents[0])
        text = load_document(snapshot, document.id)
        if text_kind(path) not in _OWN_LINES:
            found = snapshot.document(document.id)
            chunks = list(fill_locations(snapshot, found[1] if found else []).values())
            return _by_passages(text, chunks, start_line, end_line, max_chars)
    lines = text.text.split("\n")
    if start_line > len(lines):
        raise InvalidQuery(f"{path}: start_line {start_line} is past its last line ({len(lines)})")
    last = min(end_line or len(lines), len(lines))
    shown: list[str] = []
    size = 0
    for number in range(start_line, last + 1):
        line = lines[number - 1]
        if size + len(line) + 1 > max_chars and shown:
            break
        shown.append(line[:max_chars])
        size += len(line) + 1
    given_last = start_line + len(shown) - 1
    return {
        "path": text.path,
        "document_id": text.id,
        "line": start_line,
        "end_line": given_last,
        "total_lines": len(lines),
        "truncated": given_last < last or len(lines[given_last - 1]) > max_chars,
        "text": "\n".join(shown),
        "record_id": text.record_id,
        "metadata": text.metadata,
    }


def _by_passages(
    text: DocumentText,
    chunks: list,  # list[StoredChunk], located
    start_line: int,
    end_line: int | None,
    max_chars: int,
) -> dict[str, Any]:
    """The extracted text of the passages whose source lines meet the range asked for."""
    lined = [c for c in chunks if c.line is not None and c.end_line is not None]
    last_line = max((c.end_line for c in lined), default=None)
    if lined:
        wanted = [
            c for c in lined if c.end_line >= start_line and c.line <= (end_line or last_line)
        ]
        if not wanted:
            raise InvalidQuery(
                f"{text.path}: start_line {start_line} is past its last line ({last_line})"
            )
    elif start_line > 1 or end_line is not None:
        raise InvalidQuery(
            f"{text.path}: its passages have pages, not lines: read it whole, or a passage "
            "by chunk_id"
        )
    else:
        wanted = chunks
    begin = min(c.start for c in wanted)
    finish = max(c.end for c in wanted)
    shown = text.text[begin:finish]
    return {
        "path": text.path,
        "document_id": text.id,
        "line": min((c.line for c in wanted if c.line is not None), default=None),
        "end_line": max((c.end_line for c in wanted if c.end_line is not None), default=None),
        "total_lines": last_line,
        "truncated": len(shown) > max_chars,
        "text": shown[:max_chars],
        "record_id": text.record_id,
        "metadata": text.metadata,
    }

"""What the `read` tool returns: a stored passage, or a document's text by lines.

A document's text is the one the index extracted (rebuilt from its passages, see
`search.documents.stitch`): for plain text, Markdown, reStructuredText and code that
is the file's own text, so its line numbers are the file's and a hit's `line` and
`end_line` point into it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from indexer.errors import DocumentNotFound, InvalidQuery
from search.documents import load_document
from search.locations import fill_locations

if TYPE_CHECKING:
    from search.engine import Searcher

MAX_READ_CHARS = 100_000
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

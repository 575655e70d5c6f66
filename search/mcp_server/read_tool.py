"""What the `read` tool returns: a stored passage, or a document's text a page at a time.

A document's text is the one the index extracted (rebuilt from its passages, see
`search.documents.stitch`). A page is a stretch of it, cut at its last line break that
fits in `max_chars` (mid-line only when no line break fits); the next page starts where
it stopped (`next_start`, a character offset), so the pages put together are the text,
whatever its lines. For plain text, Markdown, reStructuredText, code and records the text
is the file's own: its lines are the file's, and a line range is cut exactly. For HTML
and Office files the lines of hits are the source file's, which the extracted text does
not keep: a line range gives the passages that cover it, and a page's `line` and
`end_line` are the source lines of the passages it comes from. A PDF's passages have
pages, not lines: it is read from its start, from a character offset, or by page (its
passages record where each page begins, `search.pdf_pages`).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from indexer.errors import DocumentNotFound, InvalidQuery
from indexer.reading.formats import text_kind
from indexer.store.base import StoredChunk
from search.documents import load_document
from search.locations import fill_locations
from search.markup import plain_heading
from search.pdf_pages import PageStarts, page_starts

if TYPE_CHECKING:
    from search.engine import Searcher

MAX_READ_CHARS = 100_000
# The kinds whose extracted text is the file's own, line for line.
_OWN_LINES = ("text", "markdown", "rst")
DEFAULT_READ_CHARS = 20_000


def read_passage(searcher: Searcher, chunk_id: int) -> dict[str, Any]:
    """The passage with this id: its document's path, its line range, its text as the
    file has it, and its heading as its hit shows it (`search.markup`)."""
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
        "heading": plain_heading(chunk.heading, chunk.path),  # as its hit shows it
        "page": chunk.page,
        "text": chunk.text,
    }


def read_document(
    searcher: Searcher,
    path: str,
    start_line: int | None = None,
    end_line: int | None = None,
    max_chars: int = DEFAULT_READ_CHARS,
    start: int | None = None,
    page: int | None = None,
) -> dict[str, Any]:
    """A page of the document stored at `path`: its text from line `start_line` (1-based,
    default 1) or from character `start`, to the end of line `end_line` (default: the
    end), at most `max_chars` characters; or a PDF's page `page` (from `start`, when
    given, inside it). When the page stops short of that, `truncated` is true and
    `next_start` is where the rest begins: given back as `start` (with the same
    `end_line`, or `page`), it reads on. A PDF's answer says how many pages it has
    (`pages`), and read by page, which page comes next (`next_page`)."""
    if start_line is not None and start is not None:
        raise InvalidQuery("give start_line or start, not both")
    if page is not None and (start_line is not None or end_line is not None):
        raise InvalidQuery("give page or start_line/end_line, not both")
    if end_line is not None and start_line is not None and end_line < start_line:
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
        pages = None
        if text_kind(path) in _OWN_LINES:
            lines: _FileLines | _PassageLines = _FileLines(text.text)
        else:
            found = snapshot.document(document.id)
            chunks = list(fill_locations(snapshot, found[1] if found else []).values())
            lines = _PassageLines(chunks)
            if text_kind(path) == "pdf":
                pages = page_starts(chunks)
    size = len(text.text)
    if start is not None and start > size:
        raise InvalidQuery(
            f"{text.path}: start {start} is past the end of its text ({size:,} characters)"
        )
    if page is not None:
        begin, finish = _page_range(pages, page, start, size, text.path)
    else:
        begin = start if start is not None else lines.start_of(start_line or 1, text.path)
        finish = size if end_line is None else lines.end_of(end_line, text.path)
    if finish < begin:
        raise InvalidQuery(f"{text.path}: start {begin} is after the end of line {end_line}")
    stop = _page_end(text.text, begin, finish, max_chars)
    line, last_line = lines.lines_of(begin, stop, whole=stop == finish)
    return {
        "path": text.path,
        "document_id": text.id,
        "line": line,
        "end_line": last_line,
        "total_lines": lines.total,
        "truncated": stop < finish,
        "text": text.text[begin:stop],
        "start": begin,
        "end": stop,
        "next_start": stop if stop < finish else None,
        "record_id": text.record_id,
        "metadata": text.metadata,
        **_pages_read(pages, page, begin, stop < finish),
    }


def _page_range(
    pages: PageStarts | None, page: int, start: int | None, size: int, path: str
) -> tuple[int, int]:
    """[begin, finish) of a PDF's `page`, from `start` when it is inside the page."""
    if pages is None or pages.last is None:
        raise InvalidQuery(f"{path}: only a PDF is read by page; read it by start_line or start")
    if page > pages.last:
        raise InvalidQuery(f"{path}: page {page} is past its last page with text ({pages.last})")
    span = pages.span(page, size)
    if span is None:  # a page without text: nothing on it
        following = pages.after(page)
        at = pages.span(following, size)[0] if following is not None else size  # type: ignore[index]
        return at, at
    begin, finish = span
    if start is not None:
        if not begin <= start <= finish:
            raise InvalidQuery(
                f"{path}: start {start} is not on page {page} (characters {begin} to {finish})"
            )
        begin = start
    return begin, finish


def _pages_read(
    pages: PageStarts | None, page: int | None, begin: int, truncated: bool
) -> dict[str, Any]:
    """A PDF's number of pages, and read by page, the page read and the next one to
    read once this one is whole (None at the last)."""
    if pages is None:
        return {}
    shown: dict[str, Any] = {"pages": pages.last}
    if page is not None:
        shown["page"] = page
        shown["next_page"] = None if truncated else pages.after(page)
    else:
        shown["page"] = pages.page_at(begin)
    return shown


def _page_end(text: str, begin: int, finish: int, max_chars: int) -> int:
    """Where a page of `text[begin:finish]` stops: at `finish` if it fits, else after
    the last line break that fits, else (a line longer than a page) at `max_chars`."""
    if finish - begin <= max_chars:
        return finish
    limit = begin + max_chars
    newline = text.rfind("\n", begin, limit)
    return newline + 1 if newline >= 0 else limit


class _FileLines:
    """The lines of a text that is the file's own: line N is the file's line N."""

    def __init__(self, text: str):
        # where each line starts: after each line break
        lengths = (len(line) + 1 for line in text.split("\n"))
        self._starts = list(accumulate(lengths, initial=0))[:-1]
        self._size = len(text)
        self.total = len(self._starts)

    def start_of(self, line: int, path: str) -> int:
        if line > self.total:
            raise InvalidQuery(f"{path}: start_line {line} is past its last line ({self.total})")
        return self._starts[line - 1]

    def end_of(self, line: int, path: str) -> int:
        """Where line `line` ends (before its line break); the text's end past the last."""
        return self._starts[line] - 1 if line < self.total else self._size

    def lines_of(self, begin: int, stop: int, whole: bool) -> tuple[int, int]:
        """The lines of the page [begin, stop): the last one holds its last character,
        or its end when the page reaches the end of what was asked (a last empty line)."""
        last = stop if whole or stop == begin else stop - 1
        return self._line_at(begin), self._line_at(last)

    def _line_at(self, offset: int) -> int:
        return bisect_right(self._starts, offset)


class _PassageLines:
    """The source lines of a text extracted from markup (HTML, Office): known only for
    its passages, each with its first and last source line (a PDF's have none)."""

    def __init__(self, chunks: list[StoredChunk]):
        self._lined = [c for c in chunks if c.line is not None and c.end_line is not None]
        self.total = max((c.end_line for c in self._lined), default=None)

    def start_of(self, line: int, path: str) -> int:
        """Where the first passage that reaches `line` starts."""
        if line == 1:
            return 0
        self._need_lines(path)
        starts = [c.start for c in self._lined if c.end_line >= line]
        if not starts:
            raise InvalidQuery(f"{path}: start_line {line} is past its last line ({self.total})")
        return min(starts)

    def end_of(self, line: int, path: str) -> int:
        """Where the last passage that starts by `line` ends."""
        self._need_lines(path)
        ends = [c.end for c in self._lined if c.line <= line]
        if not ends:
            raise InvalidQuery(f"{path}: end_line {line} is before its first passage's line")
        return max(ends)

    def lines_of(self, begin: int, stop: int, whole: bool) -> tuple[int | None, int | None]:
        """The first and last source lines of the passages the page [begin, stop) is from."""
        touched = [c for c in self._lined if c.start < max(stop, begin + 1) and c.end > begin]
        if not touched:
            return None, None
        return min(c.line for c in touched), max(c.end_line for c in touched)

    def _need_lines(self, path: str) -> None:
        if not self._lined:
            raise InvalidQuery(
                f"{path}: its passages have pages, not lines: read it from its start (or "
                "from start, a character offset), or a passage by chunk_id"
            )

"""Where each page of a PDF's extracted text begins, from its stored passages.

A PDF passage records the page and line of each of its lines (`chunks.line_map`, see
`indexer.reading.line_map`), so the first line of each page, and with it the character
offset where the page begins in the document's text, is known without reading the file
again. A page is the text from its beginning to the next page's (or the end); a page
without text (a blank or scanned page) has none and is not listed.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from indexer.reading.line_map import decode_line_map
from indexer.store.base import StoredChunk


@dataclass(frozen=True)
class PageStarts:
    """The pages with text, in order, and the offset where each begins."""

    pages: list[int]
    starts: list[int]

    @property
    def last(self) -> int | None:
        """The last page with text (None: the document has no pages)."""
        return self.pages[-1] if self.pages else None

    def span(self, page: int, size: int) -> tuple[int, int] | None:
        """[start, end) of `page` in a text of `size` characters (None: no text on it)."""
        if page not in self.pages:
            return None
        position = self.pages.index(page)
        end = self.starts[position + 1] if position + 1 < len(self.starts) else size
        return self.starts[position], end

    def page_at(self, offset: int) -> int | None:
        """The page holding the character at `offset`."""
        position = bisect_right(self.starts, offset) - 1
        return self.pages[position] if position >= 0 else None

    def after(self, page: int) -> int | None:
        """The next page with text after `page`, if any."""
        return next((later for later in self.pages if later > page), None)


def page_starts(chunks: list[StoredChunk]) -> PageStarts:
    """The page starts of a document from all its passages (a passage without a line
    map counts from its own start, on its page)."""
    first: dict[int, int] = {}
    for chunk in chunks:
        entries = decode_line_map(chunk.line_map)
        if not entries:
            if chunk.page is not None:
                first[chunk.page] = min(first.get(chunk.page, chunk.start), chunk.start)
            continue
        offset = chunk.start
        for line, entry in zip(chunk.text.split("\n"), entries, strict=False):
            if isinstance(entry, list) and entry and isinstance(entry[0], int):
                page = entry[0]
                first[page] = min(first.get(page, offset), offset)
            offset += len(line) + 1
    pages = sorted(first)
    return PageStarts(pages, [first[page] for page in pages])

"""Lines and headings for chunks stored before the index kept them (migration 0004).

Such rows have NULL locations. For the formats whose extracted text is the file itself
(plain text, Markdown, reStructuredText, source code), the document's text is rebuilt
from its chunks (`search.documents.stitch`) and located as a new run would; HTML and PDF
rows stay without a line and page until the file is indexed again.
"""

from __future__ import annotations

from dataclasses import replace

from indexer.reading.formats import text_kind
from indexer.reading.text_layout import Locator
from indexer.store.base import Snapshot, StoredChunk
from search.documents import stitch

_REBUILDABLE = ("text", "markdown", "rst")


def fill_locations(snapshot: Snapshot, chunks: list[StoredChunk]) -> dict[int, StoredChunk]:
    """Each chunk by id, its location filled in where it was stored without one."""
    filled = {chunk.id: chunk for chunk in chunks}
    missing: dict[int, list[StoredChunk]] = {}
    for chunk in chunks:
        if chunk.line is None and text_kind(chunk.path) in _REBUILDABLE:
            missing.setdefault(chunk.document_id, []).append(chunk)
    for document_id, wanted in missing.items():
        found = snapshot.document(document_id)
        if found is None:
            continue
        _document, siblings = found
        locator = Locator(stitch(siblings), text_kind(wanted[0].path))
        for chunk in wanted:
            where = locator.locate_text(chunk.start, chunk.text)
            filled[chunk.id] = replace(
                chunk, line=where.line, end_line=where.end_line, heading=where.heading
            )
    return filled

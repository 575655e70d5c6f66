"""A document as the index holds it: its stored facts and its text, rebuilt from its chunks."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from indexer.errors import DocumentNotFound
from indexer.records.record import record_id_of
from indexer.store.base import Snapshot, StoredChunk


@dataclass(frozen=True)
class ChunkSpan:
    """Where one chunk of the document lies in its text."""

    chunk_id: int
    ordinal: int
    start: int
    end: int


@dataclass(frozen=True)
class DocumentText:
    """A document's path, size, hash and extracted text, with the spans of its chunks."""

    id: int
    path: str
    size: int
    mtime_ns: int
    sha256: str
    text: str
    chunks: list[ChunkSpan] = field(default_factory=list)
    # A record's id and metadata (None for a file); `id` above is the document's number.
    record_id: str | None = None
    metadata: dict | None = None

    def to_dict(self) -> dict:
        """The document as plain JSON-ready values."""
        return asdict(self)


def load_document(snapshot: Snapshot, document_id: int) -> DocumentText:
    """The document with this id, or `DocumentNotFound`."""
    found = snapshot.document(document_id)
    if found is None:
        raise DocumentNotFound(f"no document with id {document_id} in the index")
    document, chunks = found
    return DocumentText(
        id=document.id,
        path=document.path,
        size=document.size,
        mtime_ns=document.mtime_ns,
        sha256=document.sha256,
        text=stitch(chunks),
        chunks=[ChunkSpan(c.id, c.ordinal, c.start, c.end) for c in chunks],
        record_id=None if document.metadata_json is None else record_id_of(document.path),
        metadata=None if document.metadata_json is None else json.loads(document.metadata_json),
    )


def stitch(chunks: list[StoredChunk]) -> str:
    """The extracted text the chunks were cut from, so that each chunk's offsets hold.

    Chunks overlap and cover every character that is not whitespace; whitespace they
    leave out (before the first chunk, between two that do not meet) becomes spaces.
    """
    pieces: list[str] = []
    position = 0
    for chunk in sorted(chunks, key=lambda c: c.start):
        if chunk.start > position:
            pieces.append(" " * (chunk.start - position))
            position = chunk.start
        if chunk.end > position:
            pieces.append(chunk.text[position - chunk.start :])
            position = chunk.end
    return "".join(pieces)

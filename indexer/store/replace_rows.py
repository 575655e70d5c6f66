"""An edited document's rows, changed in place: only the passages whose text changed are
deleted and inserted.

A document split again after an edit keeps most of its passages (`indexer.splitting`):
their rows stay, with their ids, so their vectors and their lexical entries stay too,
and only where they sit (ordinal, offsets, lines, heading, section) is updated when it
moved. So writing an edit of a 2,600-passage file deletes and inserts a few rows, and a
space's delta holds a few vectors, not the whole file twice.

A row is kept for a passage with the same text as well as the same content key. The key
alone is not enough: it hashes what the model reads, the trail and the text together,
and a heading may move from one to the other (`Alpha` as the first line of a passage's
text, then as its section's title) with the same model input. Such a passage gets a new
row, holding its own text (its vectors are still copied, not encoded: `indexer.runs.reuse`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from indexer.reading.sources import Document
from indexer.splitting.chunking import Chunk
from indexer.store.content_keys import content_key
from indexer.store.schema import ChunkRow, DocumentRow
from indexer.store.sql_reads import batches
from indexer.store.writer_rows import text_sha256

# What says where a passage sits: updated in a kept row when it changed.
_PLACE = ("ordinal", "start", "end", "line", "end_line", "heading", "page", "line_map", "section")


@dataclass(frozen=True)
class Replaced:
    """What replacing a document's rows did: every new chunk's id, in order; the ids of
    the rows deleted; and which chunks (their positions) got new rows."""

    ids: list[int]
    deleted: list[int]
    inserted: list[int]


def replace_document_rows(
    session: Session, document_id: int, document: Document, chunks: list[Chunk], encoding: str
) -> Replaced:
    """Make the stored file document `document_id` hold `document` split into `chunks`:
    a chunk whose text and content key (model input and `encoding` settings) an old
    chunk has takes over that row (the first such, in order), the old rows left over are
    deleted, and the chunks left over get new rows."""
    columns = [getattr(ChunkRow, name) for name in ("id", "content_key", "text", *_PLACE)]
    old = session.execute(
        select(*columns).where(ChunkRow.document_id == document_id).order_by(ChunkRow.ordinal)
    ).all()
    free: dict[tuple[str, str], list] = defaultdict(list)
    for row in reversed(old):  # popped from the end: the first in order first
        if row.content_key is not None:
            free[row.content_key, row.text].append(row)
    ids: list[int | None] = []
    moved: list[dict] = []
    kept: set[int] = set()
    new_rows: list[tuple[int, ChunkRow]] = []
    for position, chunk in enumerate(chunks):
        key = content_key(chunk.encoded_text, encoding)
        place = {name: getattr(chunk, name) for name in _PLACE}
        if free.get((key, chunk.text)):
            row = free[key, chunk.text].pop()
            kept.add(row.id)
            ids.append(row.id)
            if any(getattr(row, name) != value for name, value in place.items()):
                moved.append({"id": row.id, **place})
        else:
            ids.append(None)
            new_rows.append(
                (
                    position,
                    ChunkRow(document_id=document_id, text=chunk.text, content_key=key, **place),
                )
            )
    deleted = [row.id for row in old if row.id not in kept]
    for batch in batches(deleted):
        session.execute(delete(ChunkRow).where(ChunkRow.id.in_(batch)))
    if moved:
        session.execute(update(ChunkRow), moved)
    session.add_all(row for _, row in new_rows)
    session.execute(
        update(DocumentRow)
        .where(DocumentRow.id == document_id)
        .values(
            size=document.size,
            mtime_ns=document.mtime_ns,
            ctime_ns=document.ctime_ns,
            inode=document.inode,
            sha256=document.sha256,
            indexed_at=time.time(),
            text_sha256=text_sha256(document.text),
        )
    )
    session.flush()
    for position, row in new_rows:
        ids[position] = row.id
    return Replaced([int(i) for i in ids if i is not None], deleted, [p for p, _ in new_rows])

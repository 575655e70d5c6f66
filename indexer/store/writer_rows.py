"""Documents, chunks, roots and the manifest as SQL rows: what writers of both backends share.

Every function takes the session of the caller's transaction, so a backend decides what
is one transaction (a change, a rebuild) and these functions only say what to read or
write in it, through the same SQLAlchemy models on every dialect. (What snapshots read
is SQL text, in `sql_reads.py`.)
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlalchemy import Connection, delete, func, select, text, update
from sqlalchemy.orm import Session

from indexer.cjk import indexed_form
from indexer.reading.sources import Document, path_text
from indexer.records.record import metadata_json, value_text
from indexer.splitting.chunking import Chunk
from indexer.store.base import ModelText, StoredDocument, StoredRecord
from indexer.store.content_keys import content_key
from indexer.store.manifest import Manifest
from indexer.store.schema import ChunkRow, DocumentRow, ManifestEntry, RecordMetadataRow, RootRow
from indexer.store.sql_reads import Rows, batches


def write_manifest(session: Session, manifest: Manifest) -> None:
    """Store every setting of the manifest, replacing the old values."""
    for key, value in manifest.to_rows().items():
        session.merge(ManifestEntry(key=key, value=value))


def folder_prefix(root: Path | str) -> str:
    """`root` as the prefix every path below it starts with (one trailing slash)."""
    return path_text(root).rstrip("/") + "/"


def _under(column, prefix: str):  # -> SQL boolean expression
    # A case-sensitive, wildcard-free prefix test on every dialect: SQLite's LIKE ignores
    # the case of ASCII letters, so `Notes/` would match `notes/`.
    return func.substr(column, 1, len(prefix)) == prefix


def roots_under(session: Session, host: str, root: Path | str) -> list[str]:
    """The roots recorded strictly under `root`."""
    query = select(RootRow.path).where(
        RootRow.host == host, _under(RootRow.path, folder_prefix(root))
    )
    return sorted(session.scalars(query))


def documents_at(session: Session, host: str, path: Path | str) -> list[int]:
    """The ids of the host's documents at `path` (a file) or under it (a folder)."""
    text = path_text(path).rstrip("/") or "/"
    query = select(DocumentRow.id).where(
        DocumentRow.host == host,
        (DocumentRow.path == text) | _under(DocumentRow.path, folder_prefix(text)),
    )
    return list(session.scalars(query))


def forget_roots(session: Session, host: str, path: Path | str) -> int:
    """Delete the host's roots at or under `path`; return how many."""
    text = path_text(path).rstrip("/") or "/"
    result = session.execute(
        delete(RootRow).where(
            RootRow.host == host,
            (RootRow.path == text) | _under(RootRow.path, folder_prefix(text)),
        )
    )
    return int(result.rowcount or 0)


def forget_root(session: Session, host: str, root: Path | str) -> bool:
    """Delete the host's root at `root` (its documents stay); say if there was one."""
    path = path_text(root).rstrip("/") or "/"
    result = session.execute(delete(RootRow).where(RootRow.host == host, RootRow.path == path))
    return bool(result.rowcount)


def documents_under(session: Session, host: str, root: Path | str) -> dict[str, StoredDocument]:
    """The host's documents at `root` (a root that is one file) or under it, by path, but
    those under roots nested in it."""
    nested = [folder_prefix(path) for path in roots_under(session, host, root)]
    text = path_text(root).rstrip("/") or "/"
    query = select(DocumentRow).where(
        DocumentRow.host == host,
        (DocumentRow.path == text) | _under(DocumentRow.path, folder_prefix(root)),
    )
    found = {}
    for row in session.scalars(query):
        if any(row.path.startswith(prefix) for prefix in nested):
            continue  # it belongs to the nested root, which was indexed on its own
        found[row.path] = _stored_document(row)
    return found


def record_root(session: Session, host: str, root: Path | str, rules: str | None = None) -> bool:
    """Remember `root` as indexed on its own, with its runs' rules (JSON) when given; say
    if anything was new (its time is kept fresh)."""
    path = path_text(root).rstrip("/") or "/"
    row = session.scalar(select(RootRow).where(RootRow.host == host, RootRow.path == path))
    if row is not None:
        row.indexed_at = time.time()
        if rules is not None and rules != row.rules:
            row.rules = rules
            return True
        return False
    session.add(RootRow(host=host, path=path, indexed_at=time.time(), rules=rules))
    return True


def root_rules(session: Session, host: str, root: Path | str) -> str | None:
    """The rules (JSON) remembered for a root, or None."""
    path = path_text(root).rstrip("/") or "/"
    return session.scalar(select(RootRow.rules).where(RootRow.host == host, RootRow.path == path))


def add_documents(
    session: Session,
    host: str,
    documents: Sequence[tuple[Document, list[Chunk], dict | None]],
    encoding: str,
) -> list[list[int]]:
    """Insert documents with their chunks in one flush; return each one's chunk ids.

    A document with metadata is a record: it belongs to no host (every machine sharing
    a database upserts the same record), and its metadata goes in with it. Each chunk
    gets the content key of its text with the `encoding` settings (`content_keys`)."""
    now = time.time()
    rows = []
    records = []
    for document, chunks, metadata in documents:
        row = DocumentRow(
            host=host if metadata is None else "",
            path=path_text(document.path),
            size=document.size,
            mtime_ns=document.mtime_ns,
            sha256=document.sha256,
            ctime_ns=document.ctime_ns,
            inode=document.inode,
            indexed_at=now,
            metadata_json=None if metadata is None else metadata_json(metadata),
            text_sha256=text_sha256(document.text),
        )
        if metadata is not None:
            records.append((row, metadata))
        row.chunks = [
            ChunkRow(
                ordinal=c.ordinal, start=c.start, end=c.end, text=c.text,
                line=c.line, end_line=c.end_line, heading=c.heading, page=c.page,
                line_map=c.line_map,
                content_key=content_key(c.encoded_text, encoding),
                section=c.section, indexed_text=indexed_form(c.text),
            )
            for c in chunks
        ]  # fmt: skip
        rows.append(row)
    session.add_all(rows)
    session.flush()
    for row, metadata in records:
        _add_metadata_rows(session, row.id, metadata)
    return [[chunk.id for chunk in row.chunks] for row in rows]


def text_sha256(text: str) -> str:
    """The SHA-256 of a document's extracted text (UTF-8; a name's lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _add_metadata_rows(session: Session, document_id: int, metadata: dict) -> None:
    session.add_all(
        RecordMetadataRow(document_id=document_id, key=key, value=value_text(value))
        for key, value in metadata.items()
    )
    session.flush()


def find_records(session: Session, record_paths: Iterable[str]) -> dict[str, StoredRecord]:
    """The stored records at these paths (`record:ID`), by path."""
    found: dict[str, StoredRecord] = {}
    for batch in batches(list(record_paths)):
        query = select(
            DocumentRow.path, DocumentRow.id, DocumentRow.sha256, DocumentRow.metadata_json
        ).where(DocumentRow.host == "", DocumentRow.path.in_(batch))
        for path, document_id, sha256, metadata in session.execute(query):
            if metadata is not None:
                found[path] = StoredRecord(document_id, sha256, metadata)
    return found


def set_record_metadata(session: Session, document_id: int, metadata: dict) -> None:
    """Replace a record's metadata (JSON and key/value rows)."""
    session.get_one(DocumentRow, document_id).metadata_json = metadata_json(metadata)
    session.execute(delete(RecordMetadataRow).where(RecordMetadataRow.document_id == document_id))
    _add_metadata_rows(session, document_id, metadata)


def keyed_chunks(session: Session, document_ids: Iterable[int]) -> list[tuple[int, str]]:
    """The (id, content key) of these documents' chunks that have a key."""
    found: list[tuple[int, str]] = []
    for batch in batches(list(document_ids)):
        query = select(ChunkRow.id, ChunkRow.content_key).where(
            ChunkRow.document_id.in_(batch), ChunkRow.content_key.is_not(None)
        )
        found += [(int(chunk_id), key) for chunk_id, key in session.execute(query)]
    return found


def delete_documents(session: Session, document_ids: Iterable[int]) -> list[int]:
    """Delete documents and their chunks; return the ids of the deleted chunks."""
    chunk_ids: list[int] = []
    for batch in batches(list(document_ids)):
        chunk_ids += session.scalars(select(ChunkRow.id).where(ChunkRow.document_id.in_(batch)))
        session.execute(delete(ChunkRow).where(ChunkRow.document_id.in_(batch)))
        session.execute(delete(RecordMetadataRow).where(RecordMetadataRow.document_id.in_(batch)))
        session.execute(delete(DocumentRow).where(DocumentRow.id.in_(batch)))
    return chunk_ids


def chunks_with_keys(session: Session, keys: Iterable[str]) -> dict[str, int]:
    """One chunk id (the lowest) for each of these content keys some chunk has."""
    found: dict[str, int] = {}
    for batch in batches(list(keys)):
        query = (
            select(ChunkRow.content_key, func.min(ChunkRow.id))
            .where(ChunkRow.content_key.in_(batch))
            .group_by(ChunkRow.content_key)
        )
        found.update((key, int(chunk_id)) for key, chunk_id in session.execute(query))
    return found


def touch_document(session: Session, document_id: int, document: Document) -> None:
    """Record the new mtime, ctime and inode of a file whose content did not change."""
    _record_status(session.get_one(DocumentRow, document_id), document)


def move_document(session: Session, document_id: int, document: Document) -> None:
    """Give a document a new path (a file moved or renamed, its content unchanged)."""
    row = session.get_one(DocumentRow, document_id)
    row.path = path_text(document.path)
    _record_status(row, document)


def _record_status(row: DocumentRow, document: Document) -> None:
    row.mtime_ns = document.mtime_ns
    row.ctime_ns = document.ctime_ns
    row.inode = document.inode


def set_content_keys(
    session: Session, chunk_ids: Sequence[int], texts: Sequence[str], encoding: str
) -> None:
    """Give these chunks the content keys of their texts with the `encoding` settings (a
    rebuild encodes every chunk with the manifest's: rows from before 0007 get theirs)."""
    session.execute(
        update(ChunkRow),
        [
            {"id": int(chunk_id), "content_key": content_key(value, encoding)}
            for chunk_id, value in zip(chunk_ids, texts, strict=True)
        ],
    )


def chunk_texts(
    session: Session, after: int, limit: int, model_text: ModelText | None = None
) -> list[tuple[int, str]]:
    """Up to `limit` (id, text encoded) pairs of chunks with ids above `after`, in id
    order: the text as `model_text` makes it from the text and section (else the text)."""
    query = (
        select(ChunkRow.id, ChunkRow.text, ChunkRow.section)
        .where(ChunkRow.id > after)
        .order_by(ChunkRow.id)
    )
    rows = session.execute(query.limit(limit))
    if model_text is None:
        return [(int(i), t) for i, t, _section in rows]
    return [(int(i), model_text(t, section)) for i, t, section in rows]


def _stored_document(row: DocumentRow) -> StoredDocument:
    return StoredDocument(
        row.id,
        row.path,
        row.size,
        row.mtime_ns,
        row.sha256,
        row.host,
        row.metadata_json,
        row.ctime_ns,
        row.inode,
    )


def session_rows(session: Session | Connection) -> Rows:
    """The `Rows` of a session or connection (see `sql_reads`): SQL text with `:name`
    parameters, run in its transaction."""
    return lambda sql, values: session.execute(text(sql), values).all()

"""The SQL side of an index: manifest, documents and chunks, through SQLAlchemy."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, delete, event, func, select
from sqlalchemy.exc import DatabaseError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from indexer.chunking import Chunk
from indexer.errors import IndexCorrupt
from indexer.sources import Document
from indexer.store.manifest import Manifest
from indexer.store.migrations import migrate
from indexer.store.schema import ChunkRow, DocumentRow, ManifestEntry


@dataclass(frozen=True)
class StoredDocument:
    """What the store remembers of a file, to tell whether it changed."""

    id: int
    path: str
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class StoredChunk:
    """A chunk with the path of its document, as search results need it."""

    id: int
    document_id: int
    path: str
    ordinal: int
    start: int
    end: int
    text: str


class MetadataStore:
    """Manifest, documents and chunks in one SQLite file, migrated on open."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.engine = _sqlite_engine(self.path)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        try:
            with self.engine.begin() as connection:
                migrate(connection)
        except DatabaseError as error:
            raise IndexCorrupt(
                f"{self.path}: not a readable SQLite database ({error.orig})"
            ) from error

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose changes all commit together, or none do."""
        with self.sessions.begin() as session:
            yield session

    def close(self) -> None:
        """Release the database connections."""
        self.engine.dispose()

    # -- manifest ---------------------------------------------------------------------

    def read_manifest(self) -> Manifest | None:
        """The stored manifest, or None in a database that has none yet."""
        with self.sessions() as session:
            rows = {entry.key: entry.value for entry in session.scalars(select(ManifestEntry))}
        return Manifest.from_rows(rows) if rows else None

    def current_generation(self) -> int:
        """The generation the manifest names (the last published state)."""
        with self.sessions() as session:
            return _generation(session)

    def write_manifest(self, session: Session, manifest: Manifest) -> None:
        """Store every setting of the manifest, replacing the old values."""
        for key, value in manifest.to_rows().items():
            session.merge(ManifestEntry(key=key, value=value))

    # -- documents and chunks -----------------------------------------------------------

    def documents_under(self, root: Path) -> dict[str, StoredDocument]:
        """The stored documents whose path lies under `root`, by path."""
        prefix = str(root).rstrip("/") + "/"
        query = select(DocumentRow).where(DocumentRow.path.startswith(prefix, autoescape=True))
        with self.sessions() as session:
            return {
                row.path: StoredDocument(row.id, row.path, row.size, row.mtime_ns, row.sha256)
                for row in session.scalars(query)
            }

    def add_document(self, session: Session, document: Document, chunks: list[Chunk]) -> list[int]:
        """Insert a document and its chunks; return the new chunk ids in chunk order."""
        return self.add_documents(session, [(document, chunks)])[0]

    def add_documents(
        self, session: Session, documents: list[tuple[Document, list[Chunk]]]
    ) -> list[list[int]]:
        """Insert documents with their chunks in one flush; return each one's chunk ids."""
        now = time.time()
        rows = []
        for document, chunks in documents:
            row = DocumentRow(
                path=str(document.path),
                size=document.size,
                mtime_ns=document.mtime_ns,
                sha256=document.sha256,
                indexed_at=now,
            )
            row.chunks = [
                ChunkRow(ordinal=c.ordinal, start=c.start, end=c.end, text=c.text) for c in chunks
            ]
            rows.append(row)
        session.add_all(rows)
        session.flush()
        return [[chunk.id for chunk in row.chunks] for row in rows]

    def delete_documents(self, session: Session, document_ids: Iterable[int]) -> list[int]:
        """Delete documents and their chunks; return the ids of the deleted chunks."""
        document_ids = list(document_ids)
        chunk_ids: list[int] = []
        for batch in _batches(document_ids):
            chunk_ids += session.scalars(
                select(ChunkRow.id).where(ChunkRow.document_id.in_(batch))
            ).all()
            session.execute(delete(ChunkRow).where(ChunkRow.document_id.in_(batch)))
            session.execute(delete(DocumentRow).where(DocumentRow.id.in_(batch)))
        return chunk_ids

    def touch_document(self, session: Session, document_id: int, mtime_ns: int) -> None:
        """Record a new modification time for a file whose content did not change."""
        session.get_one(DocumentRow, document_id).mtime_ns = mtime_ns

    def chunk_ids(self) -> set[int]:
        """The id of every chunk."""
        with self.sessions() as session:
            return set(session.scalars(select(ChunkRow.id)))

    def documents_of_chunks(self, chunk_ids: Iterable[int]) -> set[int]:
        """The ids of the documents that own the given chunks."""
        found: set[int] = set()
        with self.sessions() as session:
            for batch in _batches(list(chunk_ids)):
                found.update(
                    session.scalars(select(ChunkRow.document_id).where(ChunkRow.id.in_(batch)))
                )
        return found

    def chunks(
        self, chunk_ids: Iterable[int], generation: int | None = None
    ) -> dict[int, StoredChunk]:
        """The chunks with these ids, with their document paths; missing ids are left out.

        With `generation`, read in one snapshot and raise `StaleGeneration` if the store
        has moved on from it (the caller reloads and asks again).
        """
        found: dict[int, StoredChunk] = {}
        with self.sessions() as session, session.begin():
            if generation is not None and _generation(session) != generation:
                raise StaleGeneration(generation)
            for batch in _batches(list(chunk_ids)):
                query = (
                    select(ChunkRow, DocumentRow.path)
                    .join(DocumentRow, ChunkRow.document_id == DocumentRow.id)
                    .where(ChunkRow.id.in_(batch))
                )
                for chunk, path in session.execute(query):
                    found[chunk.id] = StoredChunk(
                        chunk.id,
                        chunk.document_id,
                        path,
                        chunk.ordinal,
                        chunk.start,
                        chunk.end,
                        chunk.text,
                    )
        return found

    def document(self, document_id: int) -> tuple[StoredDocument, list[StoredChunk]] | None:
        """A document and its chunks in order, read in one snapshot; None if there is none."""
        with self.sessions() as session, session.begin():
            row = session.get(DocumentRow, document_id)
            if row is None:
                return None
            document = StoredDocument(row.id, row.path, row.size, row.mtime_ns, row.sha256)
            rows = session.scalars(
                select(ChunkRow)
                .where(ChunkRow.document_id == document_id)
                .order_by(ChunkRow.ordinal)
            )
            chunks = [
                StoredChunk(c.id, c.document_id, row.path, c.ordinal, c.start, c.end, c.text)
                for c in rows
            ]
        return document, chunks

    def counts(self) -> dict[str, int]:
        """How many documents and chunks the store holds."""
        with self.sessions() as session:
            return {
                "documents": session.scalar(select(func.count()).select_from(DocumentRow)) or 0,
                "chunks": session.scalar(select(func.count()).select_from(ChunkRow)) or 0,
            }


class StaleGeneration(Exception):
    """A writer published a new generation since the reader loaded its spaces."""


def _generation(session: Session) -> int:
    value = session.scalar(select(ManifestEntry.value).where(ManifestEntry.key == "generation"))
    return int(json.loads(value)) if value is not None else 0


def _sqlite_engine(path: Path) -> Engine:
    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def _configure(connection, _record) -> None:  # type: ignore[no-untyped-def]
        cursor = connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute(f"PRAGMA busy_timeout = {_busy_timeout_ms()}")
            cursor.execute("PRAGMA journal_mode = WAL")
        except Exception as error:  # the file is not a database: reported by the caller
            raise OperationalError("PRAGMA", {}, error) from error
        finally:
            cursor.close()

    return engine


def _busy_timeout_ms() -> int:
    """How long to wait for a database another program holds locked (CTXSEARCH_BUSY_TIMEOUT_MS)."""
    return int(os.environ.get("CTXSEARCH_BUSY_TIMEOUT_MS", "10000"))


def _batches(values: list[int], size: int = 500) -> Iterator[list[int]]:
    for first in range(0, len(values), size):
        yield values[first : first + size]

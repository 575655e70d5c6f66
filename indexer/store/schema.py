"""The SQL tables of an index, as SQLAlchemy 2.0 ORM models, shared by every SQL backend.

The tables are created and changed only by the named migrations in `migrations.py`;
a test checks, on each backend, that the migrated database matches these models. Each
backend adds its own lexical and vector structures beside them (FTS5 and FAISS files for
the embedded store; a tsvector column and pgvector tables for PostgreSQL).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# 64-bit ids on PostgreSQL; SQLite's INTEGER PRIMARY KEY is already 64-bit (and must be
# spelt INTEGER to be the rowid, which FTS5 and AUTOINCREMENT rely on).
Id = BigInteger().with_variant(Integer, "sqlite")


class Base(DeclarativeBase):
    """The declarative base of every table."""


class ManifestEntry(Base):
    """One setting of the index (model, pooling, dimension ...), its value JSON-encoded."""

    __tablename__ = "manifest"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class DocumentRow(Base):
    """A source file as it was when indexed, keyed by the host that read it and its path."""

    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("host", "path", name="uq_documents_host_path"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    host: Mapped[str] = mapped_column(String, default="")
    path: Mapped[str] = mapped_column(String)
    size: Mapped[int] = mapped_column(BigInteger)
    mtime_ns: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    indexed_at: Mapped[float]
    # A record's metadata as JSON (an object); NULL for a file (see `indexer.records`).
    metadata_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The SHA-256 of its extracted text (NULL in rows from before migration 0008).
    text_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The file's ctime and inode when it was read, compared with size and mtime to tell
    # an unchanged file (NULL for records, and in rows from before migration 0012).
    ctime_ns: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    inode: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    chunks: Mapped[list[ChunkRow]] = relationship(
        back_populates="document", cascade="all, delete-orphan", passive_deletes=True
    )


class ChunkRow(Base):
    """A passage of a document. Its id is the id of its vector in every vector space.
    `heading` is the title of the section holding it, `section` that section's trail
    (`indexer.splitting.passages.Passage.section`; NULL in rows from before migration 0006)."""

    __tablename__ = "chunks"
    # AUTOINCREMENT: an id is never reused, so a stale vector can never name a new chunk.
    __table_args__ = (
        Index("ix_chunks_document_id", "document_id"),
        Index("ix_chunks_content_key", "content_key"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    document_id: Mapped[int] = mapped_column(Id, ForeignKey("documents.id", ondelete="CASCADE"))
    ordinal: Mapped[int]
    start: Mapped[int]
    end: Mapped[int]
    text: Mapped[str] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    heading: Mapped[str | None] = mapped_column(Text, nullable=True)
    page: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Where each line of its text sits, for HTML and PDF (JSON, `indexer.reading.line_map`).
    line_map: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The hash of its text and encoding settings (`indexer.store.content_keys`); NULL in
    # rows from before migration 0007.
    content_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    section: Mapped[str | None] = mapped_column(Text, nullable=True)
    document: Mapped[DocumentRow] = relationship(back_populates="chunks")


class RootRow(Base):
    """A folder indexed as a root of its own: its documents belong to it, not to a parent."""

    __tablename__ = "roots"
    __table_args__ = (UniqueConstraint("host", "path", name="uq_roots_host_path"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    host: Mapped[str] = mapped_column(String, default="")
    path: Mapped[str] = mapped_column(String)
    indexed_at: Mapped[float]
    # The --exclude/--include patterns of its runs, as JSON (see `indexer.reading.rules`).
    rules: Mapped[str | None] = mapped_column(Text, nullable=True)


class RecordMetadataRow(Base):
    """One key of a record's metadata, its value as the text `where` filters compare."""

    __tablename__ = "record_metadata"
    __table_args__ = (Index("ix_record_metadata_key_value", "key", "value"),)

    document_id: Mapped[int] = mapped_column(
        Id, ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(String)


class MigrationRow(Base):
    """A migration that has been applied to this database."""

    __tablename__ = "migrations"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    applied_at: Mapped[float]

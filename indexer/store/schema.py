"""The SQL tables of an index, as SQLAlchemy 2.0 ORM models.

The tables are created and changed only by the named migrations in `migrations.py`;
a test checks that the migrated database matches these models.
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    """The declarative base of every table."""


class ManifestEntry(Base):
    """One setting of the index (model, pooling, dimension ...), its value JSON-encoded."""

    __tablename__ = "manifest"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class DocumentRow(Base):
    """A source file as it was when indexed."""

    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    path: Mapped[str] = mapped_column(String, unique=True)
    size: Mapped[int] = mapped_column(Integer)
    mtime_ns: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    indexed_at: Mapped[float]
    chunks: Mapped[list[ChunkRow]] = relationship(
        back_populates="document", cascade="all, delete-orphan", passive_deletes=True
    )


class ChunkRow(Base):
    """A window of a document. Its id is the id of its vector in every FAISS space."""

    __tablename__ = "chunks"
    # AUTOINCREMENT: an id is never reused, so a stale vector can never name a new chunk.
    __table_args__ = (
        Index("ix_chunks_document_id", "document_id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    ordinal: Mapped[int]
    start: Mapped[int]
    end: Mapped[int]
    text: Mapped[str] = mapped_column(Text)
    document: Mapped[DocumentRow] = relationship(back_populates="chunks")


class MigrationRow(Base):
    """A migration that has been applied to this database."""

    __tablename__ = "migrations"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    applied_at: Mapped[float]

"""The files of an index directory.

ctxsearch.sqlite     manifest, documents, chunks (SQLite, WAL mode)
contextual.faiss     the contextual space (IndexIDMap2 over inner product)
static.faiss         the static space
"""

from __future__ import annotations

from pathlib import Path

DATABASE_FILE = "ctxsearch.sqlite"


def is_index(directory: Path) -> bool:
    """Whether a directory holds a ctxsearch index."""
    return (Path(directory) / DATABASE_FILE).is_file()


def space_file(directory: Path, space: str) -> Path:
    """The FAISS file of one vector space."""
    return Path(directory) / f"{space}.faiss"

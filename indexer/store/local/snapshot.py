"""One consistent state of an index folder: a SQLite read transaction and the FAISS
spaces of the generation it sees.

Kept free of SQLAlchemy and FAISS imports: a query process imports FAISS only when it
loads a space, and never SQLAlchemy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING

from indexer.store.base import Ranked
from indexer.store.local.bm25 import bm25_scores, bm25_search, term_counts
from indexer.store.local.connections import sqlite_rows
from indexer.store.manifest import Manifest
from indexer.store.sql_reads import SqlReads

if TYPE_CHECKING:
    import numpy as np

    from indexer.store.filters import SearchFilter
    from indexer.store.local.vectors import VectorSpace


class LocalSnapshot(SqlReads):
    """A read transaction on `connection`, and the `spaces` it loaded (those it was asked
    for) of the generation its manifest names."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        where: str,
        spaces: dict[str, VectorSpace],
        manifest: Manifest,
    ):
        super().__init__(sqlite_rows(connection, where), "sqlite", manifest)
        self.connection = connection
        self.spaces = spaces

    def vector_search(
        self, space: str, queries: np.ndarray, k: int, where: SearchFilter | None = None
    ) -> list[Ranked]:
        """The `k` nearest chunks of each query row (among those `where` allows, through
        an id selector inside FAISS)."""
        allowed = self.allowed_chunks(where) if where else None
        return self.spaces[space].ranked(queries, k, allowed)

    def similarities(self, space: str, query: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """The cosine of one query vector with each of these chunks' vectors in a space."""
        return self.spaces[space].similarities(query, chunk_ids)

    def vectors(self, space: str, chunk_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks (reconstructed from the loaded FAISS space)."""
        return self.spaces[space].vectors(chunk_ids)

    def space_size(self, space: str) -> int:
        """How many vectors a space holds."""
        return len(self.spaces[space])

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """BM25 over FTS5 (among the chunks of the documents `where` allows)."""
        return bm25_search(self.rows, query, k, where.sql(self.dialect) if where else None)

    def lexical_scores(self, query: str, chunk_ids: list[int]) -> dict[int, float]:
        """The BM25 of each of these chunks that holds a query term."""
        return bm25_scores(self.rows, query, chunk_ids)

    def term_counts(self, terms: list[str]) -> dict[str, int]:
        """How many chunks hold each of these query terms (for their IDF)."""
        return term_counts(self.rows, terms)

    def term_evidence(
        self, terms: list[str], chunk_ids: list[int]
    ) -> tuple[dict[str, int], dict[str, set[int]]]:
        """`term_counts`, and which of these chunks hold each term (FTS5, a term at a
        time: in-process statements cost no round trip)."""
        holders = {term: set(bm25_scores(self.rows, term, chunk_ids)) for term in terms}
        return self.term_counts(terms), holders

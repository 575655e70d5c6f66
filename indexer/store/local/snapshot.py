"""One consistent state of an index folder: a SQLite read transaction and the FAISS
spaces of the generation it sees.

Kept free of SQLAlchemy and FAISS imports: a query process imports FAISS only when it
loads a space, and never SQLAlchemy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.store.base import Candidates, CandidateSearch, Ranked
from indexer.store.local import bm25
from indexer.store.local.connections import sqlite_rows
from indexer.store.manifest import Manifest
from indexer.store.sql_reads import SqlReads, TermReads

if TYPE_CHECKING:
    from indexer.store.filters import SearchFilter
    from indexer.store.local.layered import LayeredSpace
    from indexer.store.word_filter import WordFilter


class LocalSnapshot(SqlReads):
    """A read transaction on `connection`, and the `spaces` it loaded (those it was asked
    for) of the generation its manifest names."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        where: str,
        spaces: dict[str, LayeredSpace],
        manifest: Manifest,
    ):
        super().__init__(sqlite_rows(connection, where), "sqlite", manifest)
        self.connection = connection
        self.spaces = spaces

    def search(self, ask: CandidateSearch) -> Candidates:
        """Each vector space searched inside FAISS (a filter through an id selector), BM25
        over FTS5, then the exact scores and rows of the candidates: all in process."""
        where = ask.where or None
        allowed = self.allowed_chunks(where) if where else None
        found = Candidates(
            vector={
                space: self.spaces[space].ranked(_row(vector), ask.depth, allowed)[0]
                for space, vector in ask.vectors.items()
            },
            lexical=None if ask.text is None else self.lexical_search(ask.text, ask.depth, where),
            sizes={
                space: len(self.spaces[space]) if allowed is None else len(allowed)
                for space in ask.vectors
            },
            cosines={},
            bm25={},
            chunks={},
            content_keys={},
            passages={},
            searched=self.chunk_count(where),
        )
        cosines, bm25_ids = ask.missing_scores(found)
        if ask.cosine is not None and cosines:
            space, vector = ask.cosine
            found.cosines = self.spaces[space].similarities(vector, cosines)
        if ask.text is not None and bm25_ids:
            found.bm25 = bm25.bm25_scores(self.rows, ask.text, bm25_ids)
        listed = [chunk_id for ranked in found.vector.values() for chunk_id, _ in ranked]
        listed += [chunk_id for chunk_id, _ in found.lexical or []]
        rows = self.candidate_rows(dict.fromkeys(listed))
        found.chunks, found.content_keys, found.passages = (
            rows.chunks,
            rows.content_keys,
            rows.passages,
        )
        return found

    def vector_search(
        self, space: str, queries: np.ndarray, k: int, where: SearchFilter | None = None
    ) -> list[Ranked]:
        """The `k` nearest chunks of each query row (among those `where` allows, through
        an id selector inside FAISS)."""
        allowed = self.allowed_chunks(where) if where else None
        return self.spaces[space].ranked(queries, k, allowed)

    def vectors(self, space: str, chunk_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks (reconstructed from the loaded FAISS space)."""
        return self.spaces[space].vectors(chunk_ids)

    def space_size(self, space: str) -> int:
        """How many vectors a space holds."""
        return len(self.spaces[space])

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """BM25 over FTS5 (among the chunks `where` allows)."""
        documents = where.sql(self.dialect) if where and where.limits_documents else None
        return bm25.bm25_search(self.rows, query, k, documents, where.words if where else None)

    def words_sql(self, words: WordFilter) -> tuple[str, dict[str, Any]]:
        """The FTS5 queries of the phrases and exclusions (`bm25.words_condition`)."""
        return bm25.words_condition(words)

    def term_reads(self, terms: list[str], chunk_ids: list[int]) -> TermReads:
        """FTS5's counts and matches, a term at a time (in process: no round trip)."""
        return bm25.term_reads(terms, chunk_ids)


def _row(vector: np.ndarray) -> np.ndarray:
    """A query vector as the one-row matrix FAISS searches with."""
    return np.asarray(vector, dtype=np.float32).reshape(1, -1)

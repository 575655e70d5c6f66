"""One consistent state of a PostgreSQL index: a read-only REPEATABLE READ transaction."""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np
from sqlalchemy import Connection

from indexer.store.base import Ranked, StoredChunk
from indexer.store.filters import SearchFilter
from indexer.store.index_types import quantization_for, structure_for
from indexer.store.manifest import Manifest
from indexer.store.postgres import fulltext, nearest, vectors
from indexer.store.records import session_rows
from indexer.store.sql_reads import SqlReads


class SpaceSizes:
    """How many vectors each space holds in a published state, counted once per state."""

    def __init__(self) -> None:
        self._sizes: dict[tuple[str, int, str], int] = {}
        self._lock = threading.Lock()

    def size(self, connection: Connection, manifest: Manifest, space: str) -> int:
        """The size of `space` in the state `manifest` names (read on `connection`)."""
        state = (manifest.index_id, manifest.generation)
        with self._lock:
            known = self._sizes.get((*state, space))
        if known is None:
            known = vectors.count(connection, space)
            with self._lock:
                self._sizes = {key: n for key, n in self._sizes.items() if key[:2] == state}
                self._sizes[(*state, space)] = known
        return known


class PostgresSnapshot(SqlReads):
    """Rows (`SqlReads`), pgvector spaces and tsvector full text, on one connection."""

    def __init__(self, connection: Connection, manifest: Manifest, sizes: SpaceSizes):
        super().__init__(session_rows(connection), "postgresql", manifest)
        self.connection = connection
        self.sizes = sizes
        self._hydrated: dict[int, StoredChunk] = {}

    def vector_search(
        self, space: str, queries: np.ndarray, k: int, where: SearchFilter | None = None
    ) -> list[Ranked]:
        """The `k` nearest chunks of each query row (the graph, or an exact scan: see
        `nearest.nearest`). The statement reads the chunks' rows too, kept for `chunks`:
        a query's hits need no second round trip to be hydrated."""
        dim = self.manifest.dim_of(space)
        condition = where.sql(self.dialect) if where else None
        form = self.graph_form(space)
        ranked = []
        for row in queries:
            found = nearest.nearest(
                self.connection, space, dim, row, k, condition, quantization=form
            )
            self._hydrated.update((chunk_id, StoredChunk(*chunk)) for chunk_id, _, chunk in found)
            ranked.append([(chunk_id, cosine) for chunk_id, cosine, _ in found])
        return ranked

    def graph_form(self, space: str) -> str:
        """The form of the space's graph as this state's publish made it: `none` (float32,
        or no graph: an exact scan), `halfvec` or `binary`."""
        manifest = self.manifest
        if manifest.quantize == "none":
            return "none"  # the float32 graph, or none: the same statement
        # the size decides only where `auto` does (counted once per state)
        automatic = "auto" in (manifest.index_type, manifest.quantize)
        size = self.space_size(space) if automatic else 1
        if structure_for(manifest.index_type, size) != "hnsw":
            return "none"
        return quantization_for(manifest.quantize, size, "pgvector")

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids (those a vector search of this snapshot read already
        without asking the database again); unknown ids left out."""
        wanted = list(chunk_ids)
        found = {i: self._hydrated[i] for i in wanted if i in self._hydrated}
        missing = [i for i in wanted if i not in found]
        return found | super().chunks(missing) if missing else found

    def similarities(self, space: str, query: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """The cosine of one query vector with each of these chunks' vectors in a space."""
        dim = self.manifest.dim_of(space)
        return nearest.similarities(self.connection, space, dim, query, chunk_ids)

    def vectors(self, space: str, chunk_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks (the space table's vector column)."""
        dim = self.manifest.dim_of(space)
        return vectors.stored_vectors(self.connection, space, dim, list(chunk_ids))

    def space_size(self, space: str) -> int:
        """How many vectors a space holds."""
        return self.sizes.size(self.connection, self.manifest, space)

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """Full-text search over the chunks' tsvectors (of the documents `where` allows)."""
        condition = where.sql(self.dialect) if where else None
        return fulltext.fulltext_search(self.connection, query, k, condition)

    def lexical_scores(self, query: str, chunk_ids: list[int]) -> dict[int, float]:
        """The full-text rank of each of these chunks that holds a query term."""
        return fulltext.fulltext_scores(self.connection, query, chunk_ids)

    def term_counts(self, terms: list[str]) -> dict[str, int]:
        """How many chunks hold each of these query terms (for their IDF)."""
        return fulltext.term_counts(self.connection, terms)

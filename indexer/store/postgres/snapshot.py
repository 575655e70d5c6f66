"""One consistent state of a PostgreSQL index: a read-only REPEATABLE READ transaction,
begun by its first statement (`read_transaction.Reading`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from indexer.store.base import Ranked, StoredChunk
from indexer.store.filters import SearchFilter
from indexer.store.index_types import quantization_for, structure_for
from indexer.store.manifest import Manifest
from indexer.store.postgres import fulltext, nearest, vectors
from indexer.store.postgres.database import vector_schema
from indexer.store.postgres.read_transaction import Reading
from indexer.store.sql_reads import SqlReads


class SpaceSizes:
    """How many vectors each space holds in a published state, and how many chunks,
    counted once per state: a count reads a whole table (6 ms at 100,000 chunks), and
    every query's match signal needs the chunks' (their IDF)."""

    def __init__(self) -> None:
        self._sizes: dict[tuple[str, int, str], int] = {}
        self._lock = threading.Lock()

    def size(self, connection: Connection, manifest: Manifest, space: str) -> int:
        """The size of `space` in the state `manifest` names (read on `connection`)."""
        return self.counted(manifest, space, lambda: vectors.count(connection, space))

    def counted(self, manifest: Manifest, table: str, count: Callable[[], int]) -> int:
        """How many rows `table` holds in the state `manifest` names: `count()` the first
        time it is asked for that state."""
        state = (manifest.index_id, manifest.generation)
        with self._lock:
            known = self._sizes.get((*state, table))
        if known is None:
            known = int(count())
            with self._lock:
                self._sizes = {key: n for key, n in self._sizes.items() if key[:2] == state}
                self._sizes[(*state, table)] = known
        return known

    def known(self, manifest: Manifest, space: str) -> int | None:
        """The size of `space` in the state `manifest` names, if counted already."""
        with self._lock:
            return self._sizes.get((manifest.index_id, manifest.generation, space))


class PostgresSnapshot(SqlReads):
    """Rows (`SqlReads`), pgvector spaces and tsvector full text, on one connection."""

    def __init__(self, reading: Reading, sizes: SpaceSizes):
        super().__init__(self._rows, "postgresql", reading.expected)  # type: ignore[arg-type]
        self.reading = reading
        self.sizes = sizes
        self._hydrated: dict[int, StoredChunk] = {}

    @property
    def manifest(self) -> Manifest:
        """The manifest of the state this snapshot reads (the transaction begins)."""
        return self.reading.state_manifest()

    @property
    def connection(self) -> Connection:
        """The connection, inside the snapshot's transaction (begun now if it was not)."""
        return self.reading.connection

    def _rows(self, sql: str, values: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        return self.connection.execute(text(sql), values).all()

    def vector_search(
        self, space: str, queries: np.ndarray, k: int, where: SearchFilter | None = None
    ) -> list[Ranked]:
        """The `k` nearest chunks of each query row (the graph, or an exact scan: see
        `nearest.nearest`). The statement reads the chunks' rows and their documents'
        content keys too, kept for `chunks` and `content_keys`: a query's hits need no
        second round trip to be hydrated."""
        condition = where.sql(self.dialect) if where else None
        ranked = []
        for row in queries:
            found = None if where else self._first_search(space, row, k)
            if found is None:
                dim, form = self.manifest.dim_of(space), self.graph_form(space)
                size = self.space_size(space) if form == "halfvec" else 0  # sets the walk's depth
                found = nearest.nearest(
                    self.connection, space, dim, row, k, condition, quantization=form, size=size
                )
            self._keep(found)
            ranked.append([(chunk_id, cosine) for chunk_id, cosine, _ in found])
        return ranked

    def _first_search(
        self, space: str, query: np.ndarray, k: int
    ) -> list[tuple[int, float, tuple[Any, ...]]] | None:
        """A search sent with the snapshot's BEGIN, one round trip for both, built from the
        manifest the store saw last and kept only if the state's is the same; None when the
        snapshot has begun, the search is more than one statement, or its graph's form or
        depth hangs on a count not at hand."""
        expected = self.reading.expected
        if self.reading.begun or expected is None or space not in expected.spaces:
            return None
        form = _graph_form(expected, space, lambda name: self.sizes.known(expected, name))
        size = self.sizes.known(expected, space) if form == "halfvec" else 0
        if form is None or size is None:
            return None
        schema = vector_schema(self.reading.checked_out())
        dim = expected.dim_of(space)
        rows = self.reading.begin_with(
            nearest.unfiltered_statements(schema, space, dim, query, k, form, size)
        )
        return None if rows is None else nearest.found_rows(rows)

    def _keep(self, found: list[tuple[int, float, tuple[Any, ...]]]) -> None:
        """Keep the chunks a search statement read with its hits, for `chunks`."""
        self._hydrated.update((chunk_id, self.chunk_of(chunk)) for chunk_id, _, chunk in found)

    def graph_form(self, space: str) -> str:
        """The form of the space's graph as this state's publish made it: `none` (float32,
        or no graph: an exact scan), `halfvec` or `binary`."""
        form = _graph_form(self.manifest, space, self.space_size)
        assert form is not None
        return form

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

    def chunk_count(self, where: SearchFilter | None = None) -> int:
        """How many chunks there are (counted once per state), or how many `where` allows."""
        if where:
            return super().chunk_count(where)
        return self.sizes.counted(self.manifest, "chunks", lambda: SqlReads.chunk_count(self))

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """Full-text search over the chunks' tsvectors (of the documents `where` allows).
        The statement reads the chunks' rows too, kept as `vector_search` keeps its own;
        the first of a snapshot goes with its BEGIN (its text needs nothing from the
        manifest), one round trip for both."""
        condition = where.sql(self.dialect) if where else None
        statement = fulltext.search_statement(query, k, condition)
        if statement is None:
            return []
        rows = None if self.reading.begun else self.reading.begin_with([statement])
        if rows is None:
            rows = self.connection.exec_driver_sql(*statement).all()
        found = fulltext.found_rows(rows)
        self._keep(found)
        return [(chunk_id, score) for chunk_id, score, _ in found]

    def lexical_scores(self, query: str, chunk_ids: list[int]) -> dict[int, float]:
        """The full-text rank of each of these chunks that holds a query term."""
        return fulltext.fulltext_scores(self.connection, query, chunk_ids)

    def term_counts(self, terms: list[str]) -> dict[str, int]:
        """How many chunks hold each of these query terms (for their IDF)."""
        return fulltext.term_counts(self.connection, terms)

    def term_evidence(
        self, terms: list[str], chunk_ids: list[int]
    ) -> tuple[dict[str, int], dict[str, set[int]]]:
        """`term_counts`, and which of these chunks hold each term, in one statement: one
        wait for the server."""
        return fulltext.term_evidence(self.connection, terms, chunk_ids)


def _graph_form(manifest: Manifest, space: str, size_of: Callable[[str], int | None]) -> str | None:
    """The form of a space's graph in the state `manifest` names (see
    `PostgresSnapshot.graph_form`); None when it hangs on a size `size_of` does not know."""
    if manifest.quantize == "none":
        return "none"  # the float32 graph, or none: the same statement
    # the size decides only where `auto` does (counted once per state)
    automatic = "auto" in (manifest.index_type, manifest.quantize)
    size = size_of(space) if automatic else 1
    if size is None:
        return None
    if structure_for(manifest.index_type, size) != "hnsw":
        return "none"
    return quantization_for(manifest.quantize, size, "pgvector")

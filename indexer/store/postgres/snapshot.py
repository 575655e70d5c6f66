"""One consistent state of a PostgreSQL index: a read-only REPEATABLE READ transaction,
begun by its first statements (`read_transaction.Reading`).

A call sends its statements together, in as few rounds as their answers allow: a search
sends every side's search (each reading its hits' rows and content keys) and the counts it
needs with the BEGIN; a filtered vector search waits for the count of allowed chunks
(which decides between graph and exact scan); then the exact scores of the candidates
a side did not list. What hits show is one round.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from indexer.store.base import Candidates, CandidateSearch, Ranked
from indexer.store.filters import SearchFilter
from indexer.store.index_types import quantization_for, structure_for
from indexer.store.manifest import Manifest
from indexer.store.postgres import fulltext, nearest, vectors
from indexer.store.postgres.database import vector_schema
from indexer.store.postgres.read_transaction import Reading, Statement, driver_sql
from indexer.store.sql_reads import CandidateRows, SqlReads, TermReads
from indexer.store.word_filter import WordFilter

# Rows of a search statement: (chunk id, score, the chunk's row and content key).
Found = list[tuple[int, float, tuple[Any, ...]]]
Rows = list[tuple[Any, ...]]
# What a read is for (`lexical`, `allowed`, `chunks`, `size` or `vector` of a space,
# `cosines`, `bm25`), and its statements: their last one's rows are its answer.
ReadName = tuple[str, str]
Read = tuple[ReadName, list[Statement]]


class SpaceSizes:
    """How many vectors each space holds in a published state, and how many chunks,
    counted once per state: a count reads a whole table, and every query's match signal
    needs the chunks' (their IDF)."""

    def __init__(self) -> None:
        self._sizes: dict[tuple[str, int, str], int] = {}
        self._lock = threading.Lock()

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

    def known(self, manifest: Manifest, table: str) -> int | None:
        """How many rows `table` holds in the state `manifest` names, if counted already."""
        with self._lock:
            return self._sizes.get((manifest.index_id, manifest.generation, table))


class PostgresSnapshot(SqlReads):
    """Rows (`SqlReads`), pgvector spaces and tsvector full text, on one connection."""

    def __init__(self, reading: Reading, sizes: SpaceSizes):
        super().__init__(self._rows, "postgresql", reading.expected)  # type: ignore[arg-type]
        self.reading = reading
        self.sizes = sizes
        self._allowed_counts: dict[SearchFilter, int] = {}

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

    def batch(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        """Each statement's rows, all sent in one round trip."""
        return self.reading.run([(driver_sql(sql), values) for sql, values in statements])

    def search(self, ask: CandidateSearch) -> Candidates:
        """Every side's search with the counts it needs (the passages searched among
        them) in one round (with the BEGIN when the snapshot has not begun: built from
        the manifest the store saw last), the filtered vector searches once the allowed
        chunks are counted, a filtered graph walk that stopped short again as an exact
        scan, then the exact scores."""
        where = ask.where or None
        condition = self.chunk_condition(where) if where else None
        searched: dict[str, Found] = {}
        lexical: Found | None = None

        def first(manifest: Manifest) -> list[Read]:
            reads: list[Read] = []
            if ask.text is not None:
                statement = fulltext.search_statement(ask.text, ask.depth, condition)
                reads.append((("lexical", ""), [statement] if statement else []))
            if condition and where not in self._allowed_counts:
                reads.append((("allowed", ""), [nearest.allowed_statement(condition)]))
            if not condition and self.sizes.known(manifest, "chunks") is None:
                count = driver_sql("SELECT count(*) FROM chunks")
                reads.append((("chunks", ""), [(count, {})]))
            present = {s: v for s, v in ask.vectors.items() if s in manifest.spaces}
            for space in present:
                if self.sizes.known(manifest, space) is None:
                    sql = f"SELECT count(*) FROM {vectors.table_name(space)}"
                    reads.append((("size", space), [(driver_sql(sql), {})]))

            def known(space: str) -> int | None:
                return self.sizes.known(manifest, space)

            return reads + self._vector_reads(manifest, present, ask.depth, where, known)

        for (kind, space), rows in self._first_round(first).items():
            if kind == "lexical":
                lexical = fulltext.found_rows(rows)
            elif kind == "allowed":
                self._allowed_counts[where] = int(rows[0][0])  # type: ignore[index]
            elif kind == "chunks":
                self.counted_chunks(int(rows[0][0]))
            elif kind == "size":
                self.sizes.counted(self.manifest, space, lambda n=int(rows[0][0]): n)
            else:
                searched[space] = nearest.found_rows(rows)
        waiting = {space: vector for space, vector in ask.vectors.items() if space not in searched}
        if waiting:
            reads = self._vector_reads(self.manifest, waiting, ask.depth, where, self.space_size)
            searched |= _searched(self._round(reads))
        if where is not None and ask.vectors:
            searched |= self._walked_short_again(ask, searched, where)
        found = self._candidates(ask, searched, lexical, where)
        self._complete(ask, found)
        return found

    def _vector_reads(
        self,
        manifest: Manifest,
        queries: Mapping[str, np.ndarray],
        depth: int,
        where: SearchFilter | None,
        size_of: Callable[[str], int | None],
    ) -> list[Read]:
        """The searches of these spaces (each with its query vector) whose statements can
        be made in the state `manifest` names with the counts `size_of` and the allowed
        chunks' count at hand."""
        reads: list[Read] = []
        condition = self.chunk_condition(where) if where else None
        allowed = self._allowed_counts.get(where) if where else None
        schema = vector_schema(self.reading.checked_out())
        for space, vector in queries.items():
            form = _graph_form(manifest, space, size_of)
            size = size_of(space) if form == "halfvec" else 0
            if form is None or size is None or (where and allowed is None):
                continue
            statements = nearest.search_statements(
                schema, space, manifest.dim_of(space), vector, depth, condition, allowed, form,
                size,
            )  # fmt: skip
            reads.append((("vector", space), statements))
        return reads

    def _first_round(self, build: Callable[[Manifest], list[Read]]) -> dict[ReadName, Rows]:
        """The answer of each read `build` makes, all in one round: sent with the BEGIN
        when the snapshot has not begun, made from the manifest the store saw last (and
        made again from the state's, and sent again, when that one differs)."""
        expected = self.reading.expected
        if not self.reading.begun and expected is not None:
            reads = build(expected)
            rows = self.reading.begin_with([s for _, statements in reads for s in statements])
            if rows is not None:
                return _answers(reads, rows)
        return self._round(build(self.manifest))

    def _round(self, reads: list[Read]) -> dict[ReadName, Rows]:
        """The answer of each read (its last statement's rows), all sent in one round."""
        statements = [statement for _, read in reads for statement in read]
        return _answers(reads, self.reading.run(statements))

    def _walked_short_again(
        self, ask: CandidateSearch, searched: dict[str, Found], where: SearchFilter
    ) -> dict[str, Found]:
        """The filtered searches whose graph walk stopped short of `depth`, made again as
        exact scans (in one round)."""
        allowed = self._allowed_counts[where]
        condition = self.chunk_condition(where)
        schema = vector_schema(self.reading.checked_out())
        again: list[Read] = []
        for space, vector in ask.vectors.items():
            if nearest.walked_short(ask.depth, allowed, len(searched[space])):
                dim = self.manifest.dim_of(space)
                statements = nearest.exact_statements(
                    schema, space, dim, vector, ask.depth, condition
                )
                again.append((("vector", space), statements))
        return _searched(self._round(again))

    def _candidates(
        self,
        ask: CandidateSearch,
        searched: dict[str, Found],
        lexical: Found | None,
        where: SearchFilter | None,
    ) -> Candidates:
        """The lists, sizes, rows and content keys the searches read."""
        rows = CandidateRows()
        for found in [*searched.values(), lexical or []]:
            for _, _, row in found:
                rows.add(row)
        return Candidates(
            vector={space: _ranked(searched[space]) for space in ask.vectors},
            lexical=None if lexical is None else _ranked(lexical),
            sizes={
                space: self._allowed_counts[where] if where else self.space_size(space)
                for space in ask.vectors
            },
            cosines={},
            bm25={},
            chunks=rows.chunks,
            content_keys=rows.content_keys,
            passages=rows.passages,
            searched=self._allowed_counts[where] if where else self.chunk_count(),
        )

    def _complete(self, ask: CandidateSearch, found: Candidates) -> None:
        """Look up the exact scores `CandidateSearch.missing_scores` names, in one round."""
        cosine_ids, bm25_ids = ask.missing_scores(found)
        reads: list[Read] = []
        if ask.cosine is not None and cosine_ids:
            space, vector = ask.cosine
            schema = vector_schema(self.reading.checked_out())
            dim = self.manifest.dim_of(space)
            statement = nearest.similarities_statement(schema, space, dim, vector, cosine_ids)
            reads.append((("cosines", space), [statement]))
        if ask.text is not None and bm25_ids:
            scores = fulltext.scores_statement(ask.text, bm25_ids)
            if scores is not None:
                reads.append((("bm25", ""), [scores]))
        answers = {kind: rows for (kind, _), rows in self._round(reads).items()}
        found.cosines = nearest.similarities_of(answers.get("cosines", []))
        found.bm25 = {int(i): float(score) for i, score in answers.get("bm25", [])}

    def vector_search(
        self, space: str, queries: np.ndarray, k: int, where: SearchFilter | None = None
    ) -> list[Ranked]:
        """The `k` nearest chunks of each query row (the graph, or an exact scan: see
        `nearest.search_statements`): `search` for that space alone."""
        return [
            self.search(CandidateSearch({space: row}, None, k, where)).vector[space]
            for row in queries
        ]

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """Full-text search over the chunks' tsvectors (of the documents `where` allows):
        `search` for the full text alone."""
        return self.search(CandidateSearch({}, query, k, where)).lexical or []

    def vectors(self, space: str, chunk_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks (the space table's vector column)."""
        dim = self.manifest.dim_of(space)
        return vectors.stored_vectors(self.connection, space, dim, list(chunk_ids))

    def space_size(self, space: str) -> int:
        """How many vectors a space holds (counted once per state)."""
        return self.sizes.counted(
            self.manifest, space, lambda: vectors.count(self.connection, space)
        )

    def chunk_count(self, where: SearchFilter | None = None) -> int:
        """How many chunks there are (counted once per state), or how many `where` allows."""
        if where:
            return super().chunk_count(where)
        return self.sizes.counted(self.manifest, "chunks", lambda: SqlReads.chunk_count(self))

    def known_chunk_count(self) -> int | None:
        """How many chunks there are, when counted already in this state."""
        return self.sizes.known(self.manifest, "chunks") if self.reading.begun else None

    def counted_chunks(self, count: int) -> int:
        """Keep the chunks' count for this state."""
        return self.sizes.counted(self.manifest, "chunks", lambda: count)

    def term_reads(self, terms: list[str], chunk_ids: list[int]) -> TermReads:
        """The terms' counts and holders, one statement each (`fulltext.term_reads`)."""
        return fulltext.term_reads(terms, chunk_ids)

    def words_sql(self, words: WordFilter) -> tuple[str, dict[str, Any]]:
        """The tsqueries of the phrases and exclusions (`fulltext.words_condition`)."""
        return fulltext.words_condition(words)


def _answers(reads: list[Read], rows: list[Rows]) -> dict[ReadName, Rows]:
    """Each read's answer (its last statement's rows) from the rows of all statements."""
    answers: dict[ReadName, Rows] = {}
    position = 0
    for name, statements in reads:
        position += len(statements)
        answers[name] = rows[position - 1] if statements else []
    return answers


def _searched(answers: dict[ReadName, Rows]) -> dict[str, Found]:
    """The vector searches' answers as each space's rows found."""
    return {space: nearest.found_rows(rows) for (_, space), rows in answers.items()}


def _ranked(found: Found) -> Ranked:
    return [(chunk_id, score) for chunk_id, score, _ in found]


def _graph_form(manifest: Manifest, space: str, size_of: Callable[[str], int | None]) -> str | None:
    """The form of a space's graph as the publish of the state `manifest` names made it:
    `none` (float32, or no graph: an exact scan), `halfvec` or `binary`; None when it
    hangs on a size `size_of` does not know."""
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

"""The nearest chunks of a query vector on PostgreSQL: one prepared statement per shape.

A search's SQL text is fixed by its shape (space, dimension, graph form, `k`, the filter's
condition text, exact or not), never by its values: the query vector and the filter's
values are parameters, the limits are literals. psycopg prepares a text after its fifth
run on a connection, and PostgreSQL then reuses one generic plan: no parse and no plan per
query. The query vector is one binary parameter in pgvector's own wire format, referenced
wherever the statement needs it, not text formatted float by float in Python and parsed by
the server. This module builds the statements; the snapshot sends them
(`indexer.store.postgres.snapshot`), the first ones with its BEGIN (`read_transaction.py`).

An exact scan is spelled so that no index can serve it (`ORDER BY distance + 0`) rather
than by turning index scans off for the transaction: PostgreSQL does not plan a cached
generic plan again when a setting changes, so one text must never run under two sets of
planner settings, and each text here always runs under the same ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from indexer.store.index_types import HNSW_EF_SEARCH
from indexer.store.postgres.query_vector import QueryVector
from indexer.store.postgres.read_transaction import Statement, driver_sql
from indexer.store.postgres.vectors import graph_ef_search, table_name
from indexer.store.sql_reads import CANDIDATE_COLUMNS, FILE_PASSAGES

# pgvector's HNSW returns at most ef_search rows, and ef_search is capped at 1000.
MAX_EF_SEARCH = 1000
# A filtered search scans exactly the chunks its filter allows when there are at most this
# many; above, it walks the graph (iterative scan). Exact stays cheaper up to about 13,000
# allowed chunks (`ctxsearch lab bench --only postgres`, docs/reports/2026-12-01-postgres.md):
# 10,000 keeps to the safe side.
EXACT_UP_TO = 10_000
ALWAYS_EXACT = 2**62  # as `EXACT_UP_TO`: never the graph (the benchmark's baseline)
# The most graph rows a filtered walk visits before it gives up (pgvector's default,
# 20,000) and the search scans the allowed chunks exactly instead.
MAX_SCAN_TUPLES = 20_000
# How many candidates a quantized graph finds for `k` hits, re-ranked by float32: halfvec's
# order is float32's but for ties (two bytes a dimension keep ~3 digits), so a few more;
# binary codes order coarsely: measured on 100,000 real static vectors
# (docs/postgres.md), 200 candidates gave recall@10 0.80, 500 gave 0.87.
RERANK_LEAST = {"none": 0, "halfvec": 20, "binary": 500}
RERANK_FACTOR = {"none": 1, "halfvec": 2, "binary": 50}

Where = tuple[str, dict[str, Any]]  # a condition on `documents` and its values


def search_statements(
    schema: str,
    space: str,
    dim: int,
    query: np.ndarray,
    k: int,
    where: Where | None = None,
    allowed: int | None = None,
    quantization: str = "none",
    size: int = 0,
) -> list[Statement]:
    """The statements of a search for the `k` nearest chunks of one query vector (the last
    one's rows, read by `found_rows`: id, cosine and the chunk's row,
    `sql_reads.CANDIDATE_COLUMNS`, read by the same statement); with
    `where` (a condition on `documents` and its values, see `SearchFilter.sql`) that
    allows `allowed` chunks, only among those.

    A filtered search walks the HNSW graph with pgvector's iterative index scans, which
    go on past `ef_search` until `k` allowed rows are found; when the filter allows at
    most `EXACT_UP_TO` chunks, scanning those exactly is cheaper (`scans_exactly`), and
    so it is whenever the graph walk stops short of `k` (`hnsw.max_scan_tuples`, see
    `walked_short`): the filter's guarantee is `k` hits whenever `k` allowed chunks exist.

    Through a quantized graph (`quantization` `halfvec` or `binary`, the form the graph
    present has), the graph finds `candidates_for` rows by the quantized distance and
    they are ranked again by the float32 vectors: the cosines are float32's. `size`, the
    vectors the space holds, sets how deep the graph is walked (`graph_ef_search`)."""
    exact = scans_exactly(k, allowed if where is not None else None)
    return _statements(schema, space, dim, query, k, where, quantization, exact, size)


def scans_exactly(k: int, allowed: int | None) -> bool:
    """Whether a search `k` deep scans exactly: past what the graph returns, with the graph
    turned off (`ALWAYS_EXACT`), or with a filter that allows at most `EXACT_UP_TO`
    chunks (`allowed`; None for no filter)."""
    if k > MAX_EF_SEARCH or EXACT_UP_TO >= ALWAYS_EXACT:
        return True
    return allowed is not None and allowed <= EXACT_UP_TO


def walked_short(k: int, allowed: int, found: int) -> bool:
    """Whether a filtered search that walked the graph (one allowing `allowed` chunks)
    stopped before `k` hits, having `found`: it then scans the allowed chunks exactly
    (`exact_statements`)."""
    return not scans_exactly(k, allowed) and found < k


def exact_statements(
    schema: str, space: str, dim: int, query: np.ndarray, k: int, where: Where
) -> list[Statement]:
    """A filtered search's statements scanning the allowed chunks exactly."""
    return _statements(schema, space, dim, query, k, where, "none", True, 0)


def candidates_for(quantization: str, k: int) -> int:
    """The candidates a graph of this form finds for `k` hits (at most `MAX_EF_SEARCH`,
    what pgvector's graph returns, and never fewer than `k`)."""
    wanted = max(RERANK_LEAST[quantization], RERANK_FACTOR[quantization] * k)
    return max(k, min(MAX_EF_SEARCH, wanted))


def _statements(
    schema: str,
    space: str,
    dim: int,
    query: np.ndarray,
    k: int,
    where: Where | None,
    quantization: str,
    exact: bool,
    size: int,
) -> list[Statement]:
    """A search as driver SQL and values: the graph's settings first when it needs its
    own (a depth other than the session's `HNSW_EF_SEARCH`: the halfvec graph's, or more
    candidates, as a search's default depth, 200, wants; or a filter's iterative scan),
    then the search itself."""
    quantization = "none" if exact else quantization
    depth = max(graph_ef_search(quantization, size), candidates_for(quantization, k))
    condition, values = where if where is not None else (None, {})
    sql = search_sql(schema, space, dim, k, quantization, condition, exact)
    search = (driver_sql(sql), {**values, "query": QueryVector(query)})
    if exact or (depth == HNSW_EF_SEARCH and where is None):
        return [search]
    return [_settings(depth, filtered=where is not None), search]


def found_rows(rows: Iterable[Sequence[Any]]) -> list[tuple[int, float, tuple[Any, ...]]]:
    """A search statement's rows as (chunk id, cosine, the chunk's row:
    `CANDIDATE_COLUMNS`)."""
    return [(int(row[1]), -float(row[0]), tuple(row[1:])) for row in rows]


@lru_cache(maxsize=256)
def search_sql(
    schema: str,
    space: str,
    dim: int,
    k: int,
    quantization: str,
    condition: str | None,
    exact: bool,
) -> str:
    """The statement of one search shape: the nearest `k` by float32 inner product
    (through the graph of form `quantization`, or exactly), their chunks' rows joined.
    `:query` is the query vector; `condition` is SQL text on `documents`."""
    table = table_name(space)
    query = f"CAST(:query AS {schema}.vector({dim}))"
    distance = f"{table}.embedding OPERATOR({schema}.<#>) {query}"
    source = table
    if condition is not None:
        source = (
            f"{table} JOIN chunks ON chunks.id = {table}.chunk_id "
            f"JOIN documents ON documents.id = chunks.document_id WHERE {condition}"
        )
    found = f"SELECT {table}.chunk_id, {distance} AS distance FROM {source} "
    if exact:
        found += f"ORDER BY ({distance}) + 0 LIMIT {k}"
    elif quantization == "none":
        found += f"ORDER BY {distance} LIMIT {k}"
    else:
        graph = _quantized_distance(schema, table, dim, query, quantization)
        candidates = candidates_for(quantization, k)
        found = (
            f"SELECT chunk_id, distance FROM ({found}ORDER BY {graph} LIMIT {candidates}) "
            f"AS candidates ORDER BY distance LIMIT {k}"
        )
    # relaxed_order may hand rows back slightly out of order: the k found are sorted again
    return (
        f"WITH nearest AS MATERIALIZED ({found}) "
        f"SELECT nearest.distance, {CANDIDATE_COLUMNS} FROM nearest "
        "JOIN chunks ON chunks.id = nearest.chunk_id "
        "JOIN documents ON documents.id = chunks.document_id "
        f"{FILE_PASSAGES.format(held='held.id IN (SELECT chunk_id FROM nearest)')} "
        "ORDER BY nearest.distance, nearest.chunk_id"
    )


def _quantized_distance(schema: str, table: str, dim: int, query: str, quantization: str) -> str:
    """The graph's distance of a quantized form to `query` (the very expression its index
    was made on, `vectors.graph_statement`, so the planner walks that index)."""
    if quantization == "halfvec":
        return (
            f"CAST({table}.embedding AS {schema}.halfvec({dim})) OPERATOR({schema}.<#>) "
            f"CAST({query} AS {schema}.halfvec({dim}))"
        )
    return (
        f"CAST({schema}.binary_quantize({table}.embedding) AS bit({dim})) "
        f"OPERATOR({schema}.<~>) CAST({schema}.binary_quantize({query}) AS bit({dim}))"
    )


_SETTINGS = (
    "SELECT set_config('hnsw.ef_search', :ef, true), "
    "set_config('hnsw.iterative_scan', :scan, true), "
    "set_config('hnsw.max_scan_tuples', :tuples, true), "
    "set_config('enable_sort', :sort, true)"
)


def _settings(depth: int, filtered: bool) -> Statement:
    """ef_search `depth`, and for a filter the iterative scan that keeps walking the graph
    until `k` allowed rows are found (or `MAX_SCAN_TUPLES` were visited). The planner,
    guessing a filter's share (often far too small), prefers reading the allowed chunks
    and sorting them: the count already chose the graph, so sorting is off for this
    transaction (the k rows found are still put in order; disabling only costs a plan)."""
    return driver_sql(_SETTINGS), {
        "ef": str(depth),
        "scan": "relaxed_order" if filtered else "off",
        "tuples": str(MAX_SCAN_TUPLES),
        "sort": "off" if filtered else "on",
    }


def allowed_statement(where: Where) -> Statement:
    """How many chunks the filter allows (what decides exact or graph, and the size of
    what a filtered search can find)."""
    sql = (
        "SELECT count(*) FROM chunks JOIN documents ON documents.id = chunks.document_id "
        f"WHERE {where[0]}"
    )
    return driver_sql(sql), where[1]


def similarities_statement(
    schema: str, space: str, dim: int, query: np.ndarray, ids: list[int]
) -> Statement:
    """The cosine of one query vector with the stored vector of each of these chunks
    (rows: chunk id, negated cosine; one statement text whatever the ids, so it is
    prepared like a search)."""
    table = table_name(space)
    sql = (
        f"SELECT chunk_id, embedding OPERATOR({schema}.<#>) "
        f"CAST(:query AS {schema}.vector({dim})) FROM {table} WHERE chunk_id = ANY(:ids)"
    )
    return driver_sql(sql), {"query": QueryVector(query), "ids": [int(i) for i in ids]}


def similarities_of(rows: Iterable[Sequence[Any]]) -> dict[int, float]:
    """`similarities_statement`'s rows as cosines by chunk id."""
    return {int(chunk_id): -float(negative) for chunk_id, negative in rows}

"""The FTS5 query of the lexical space, as plain SQL (no SQLAlchemy: the light reader
runs it through the standard library's sqlite3, the store through SQLAlchemy)."""

from __future__ import annotations

import json

from indexer.terms import query_terms

FTS_TABLE = "chunks_fts"
# The best chunks by BM25 (FTS5's bm25() negated, so higher is better), named parameters.
BM25_SQL = (
    f"SELECT rowid, -bm25({FTS_TABLE}) AS score FROM {FTS_TABLE} "
    f"WHERE {FTS_TABLE} MATCH :expression ORDER BY bm25({FTS_TABLE}) LIMIT :k"
)

# The BM25 of given chunks (named parameters: the MATCH expression and a JSON array of
# chunk ids). FTS5 scores every match once and the ids are picked from that; a
# `rowid IN (...)` beside MATCH would run the MATCH again for each id.
BM25_OF_SQL = (
    f"WITH matched AS MATERIALIZED (SELECT rowid AS id, -bm25({FTS_TABLE}) AS score "
    f"FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :expression) "
    "SELECT id, score FROM matched WHERE id IN (SELECT value FROM json_each(:ids))"
)


def bm25_of_parameters(query: str, chunk_ids: list[int]) -> dict[str, str] | None:
    """The named parameters of `BM25_OF_SQL`, or None when there is nothing to ask."""
    expression = match_expression(query)
    if expression is None or not chunk_ids:
        return None
    return {"expression": expression, "ids": json.dumps(chunk_ids)}


def match_expression(query: str) -> str | None:
    """An FTS5 MATCH expression: any of the query's terms, each quoted (no syntax leaks)."""
    terms = query_terms(query)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def bm25_sql_among(allowed_chunk_ids_sql: str) -> str:
    """`BM25_SQL` among the chunks a query selects (positional parameters: the MATCH
    expression, the selecting query's own, then k)."""
    return (
        f"SELECT rowid, -bm25({FTS_TABLE}) AS score FROM {FTS_TABLE} "
        f"WHERE {FTS_TABLE} MATCH ? AND rowid IN ({allowed_chunk_ids_sql}) "
        f"ORDER BY bm25({FTS_TABLE}) LIMIT ?"
    )

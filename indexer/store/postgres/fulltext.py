"""The PostgreSQL lexical space: a tsvector column on `chunks` with a GIN index.

The column is generated from the chunk text, so it changes in the same transaction as
the chunk and needs no trigger. Queries keep the embedded store's rule: any of the
query's terms (English stop words left out), each parsed by `plainto_tsquery`, so no
query syntax leaks in. Ranking is `ts_rank` with length normalisation 1 (divide by
1 + log(length)), which scored closest to FTS5's BM25 on SciFact (see the README);
it is not BM25, and hybrid fusion normalises each list before combining them.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from indexer.terms import query_terms

CONFIG = "english"
RANK = "ts_rank(tsv, query, 1)"
SETTINGS = {
    "backend": "postgresql full-text search",
    "tokenizer": f"to_tsvector('{CONFIG}') (Snowball English stemmer and stop words)",
    "ranking": RANK,
    "query_stop_words": "english (stop-words package, alphabetic entries)",
}


def create_fulltext_space(connection: Connection) -> None:
    """Add the generated tsvector column and its GIN index (fills them for existing rows)."""
    connection.execute(
        text(
            f"ALTER TABLE chunks ADD COLUMN tsv tsvector "
            f"GENERATED ALWAYS AS (to_tsvector('{CONFIG}', text)) STORED"
        )
    )
    connection.execute(text("CREATE INDEX ix_chunks_tsv ON chunks USING gin (tsv)"))


def fulltext_search(
    connection: Connection, query: str, k: int, where: tuple[str, dict[str, str]] | None = None
) -> list[tuple[int, float]]:
    """The best `k` chunks for any of the query's terms, by `RANK` (higher is better);
    with `where` (a condition on `documents` and its values, see `SearchFilter.sql`),
    only the chunks of the documents it allows."""
    terms = query_terms(query)
    if not terms:
        return []
    join, condition, values = "", "", {"k": k, **_term_values(terms)}
    if where is not None:
        join = "JOIN documents ON documents.id = chunks.document_id "
        condition = f" AND ({where[0]})"
        values |= where[1]
    sql = (
        f"SELECT chunks.id, {RANK} AS score FROM chunks {join}"
        f"CROSS JOIN ({_tsquery(terms)}) AS q(query) "
        f"WHERE tsv @@ query{condition} ORDER BY score DESC, chunks.id LIMIT :k"
    )
    return [(int(i), float(s)) for i, s in connection.execute(text(sql), values)]


def fulltext_scores(connection: Connection, query: str, chunk_ids: list[int]) -> dict[int, float]:
    """The `RANK` of each of these chunks that holds any of the query's terms."""
    terms = query_terms(query)
    if not terms or not chunk_ids:
        return {}
    sql = text(
        f"SELECT id, {RANK} FROM chunks CROSS JOIN ({_tsquery(terms)}) AS q(query) "
        "WHERE id = ANY(:ids) AND tsv @@ query"
    )
    values = {"ids": chunk_ids, **_term_values(terms)}
    return {int(i): float(s) for i, s in connection.execute(sql, values)}


def term_counts(connection: Connection, terms: list[str]) -> dict[str, int]:
    """How many chunks hold each of these terms (as `to_tsvector` stems it)."""
    sql = text(f"SELECT count(*) FROM chunks WHERE tsv @@ plainto_tsquery('{CONFIG}', :term)")
    return {term: int(connection.execute(sql, {"term": term}).scalar_one()) for term in terms}


def _tsquery(terms: list[str]) -> str:
    """The query that makes the tsquery of any of the terms (parameters `:t0`, `:t1` ...)."""
    parts = " || ".join(f"plainto_tsquery('{CONFIG}', :t{i})" for i in range(len(terms)))
    return f"SELECT {parts}"


def _term_values(terms: list[str]) -> dict[str, str]:
    return {f"t{i}": term for i, term in enumerate(terms)}


def reindex_fulltext(connection: Connection) -> None:
    """Rebuild the GIN index from the stored column."""
    connection.execute(text("REINDEX INDEX ix_chunks_tsv"))

"""The PostgreSQL lexical space: a tsvector column on `chunks` with a GIN index.

The column is generated from the chunk text, so it changes in the same transaction as
the chunk and needs no trigger. Queries keep the embedded store's rule: any of the
query's terms (English stop words left out), each parsed by `plainto_tsquery`, so no
query syntax leaks in. Ranking is `ts_rank` with length normalisation 1 (divide by
1 + log(length)), which scored closest to FTS5's BM25 on SciFact (see the README);
it is not BM25, and hybrid fusion normalises each list before combining them.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Connection, bindparam, func, literal_column, select, text
from sqlalchemy.dialects.postgresql import TSQUERY

from indexer.store.schema import ChunkRow, DocumentRow
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
    connection: Connection, query: str, k: int, where: ColumnElement[bool] | None = None
) -> list[tuple[int, float]]:
    """The best `k` chunks for any of the query's terms, by `RANK` (higher is better);
    with `where` (a condition on `documents`), only the chunks of the documents it allows."""
    terms = query_terms(query)
    if not terms:
        return []
    parts = " || ".join(f"plainto_tsquery('{CONFIG}', :t{i})" for i in range(len(terms)))
    values = {f"t{i}": term for i, term in enumerate(terms)}
    if where is None:
        sql = text(
            f"SELECT id, {RANK} AS score FROM chunks, ({'SELECT ' + parts}) AS q(query) "
            "WHERE tsv @@ query ORDER BY score DESC, id LIMIT :k"
        ).bindparams(bindparam("k"))
        return [(int(i), float(s)) for i, s in connection.execute(sql, values | {"k": k})]
    tsquery = text(f"SELECT {parts} AS query").bindparams(**values).columns(query=TSQUERY)
    q = tsquery.subquery("q")
    tsv = literal_column("chunks.tsv")
    score = func.ts_rank(tsv, q.c.query, 1).label("score")
    statement = (
        select(ChunkRow.id, score)
        .select_from(ChunkRow)
        .join(q, tsv.op("@@")(q.c.query))
        .join(DocumentRow, DocumentRow.id == ChunkRow.document_id)
        .where(where)
        .order_by(score.desc(), ChunkRow.id)
        .limit(k)
    )
    return [(int(i), float(s)) for i, s in connection.execute(statement)]


def fulltext_scores(connection: Connection, query: str, chunk_ids: list[int]) -> dict[int, float]:
    """The `RANK` of each of these chunks that holds any of the query's terms."""
    terms = query_terms(query)
    if not terms or not chunk_ids:
        return {}
    parts = " || ".join(f"plainto_tsquery('{CONFIG}', :t{i})" for i in range(len(terms)))
    values = {f"t{i}": term for i, term in enumerate(terms)}
    sql = text(
        f"SELECT id, {RANK} FROM chunks, ({'SELECT ' + parts}) AS q(query) "
        "WHERE id = ANY(:ids) AND tsv @@ query"
    )
    return {int(i): float(s) for i, s in connection.execute(sql, values | {"ids": chunk_ids})}


def reindex_fulltext(connection: Connection) -> None:
    """Rebuild the GIN index from the stored column."""
    connection.execute(text("REINDEX INDEX ix_chunks_tsv"))

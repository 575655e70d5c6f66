"""The PostgreSQL lexical space: a tsvector column on `chunks` with a GIN index, ranked
by BM25 as FTS5 ranks it.

The column is generated from the chunk text, so it changes in the same transaction as
the chunk and needs no trigger. It holds FTS5's own tokens (`fts5_tokens.py`: the text
split as unicode61 splits it, each word stemmed by the Porter stemmer), so the two
stores count the same terms, lengths and document frequencies and rank alike (measured
in docs/postgres.md). Queries keep the embedded store's rule: any of the query's terms
(English stop words left out), each read as FTS5 reads a quoted term (its tokens as a
phrase), so no query syntax leaks in. The GIN index finds the chunks holding any term;
each is scored in the same statement by BM25 with FTS5's constants and formula: the
inverse document frequency of each query term (the counts of `term_counts.py`), its
frequency in the chunk (the positions its lexeme has in `tsv`) and the chunk's length
against the average. A term of several tokens is scored token by token (FTS5 scores the
phrase). A filter's words are tsqueries of their own (`words_condition`): they choose
chunks without changing any chunk's score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, text

from indexer.cjk import CJK_UNITS, phrase_form
from indexer.store.postgres.fts5_tokens import phrase_expression, vector_expression
from indexer.store.postgres.read_transaction import Statement, driver_sql
from indexer.store.postgres.term_counts import recount_terms
from indexer.store.sql_reads import CANDIDATE_COLUMNS, FILE_PASSAGES, TermReads
from indexer.store.word_filter import WordFilter
from indexer.terms import query_terms

# Migration 0009's configuration (PostgreSQL's parser, the Porter stemmer), which 0010
# replaced by `fts5_tokens.CONFIG`.
PORTER_CONFIG = "ctxsearch_porter"
# Every kind of word the parser finds is stemmed; numbers, URLs and the like keep
# `simple`'s mapping (lower-cased as they are).
_WORD_TOKENS = ("asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, "
                "hword_part, hword_numpart")  # fmt: skip
# FTS5's bm25() defaults (sqlite/ext/fts5/fts5_aux.c).
K1 = 1.2
B = 0.75
SETTINGS = {
    "backend": "postgresql full-text search",
    "tokenizer": "lexical_text: unicode61's tokens, accents and case folded; the Porter stemmer",
    "cjk": CJK_UNITS,
    "ranking": f"bm25 (k1 {K1}, b {B}; document frequencies kept with the chunks)",
    "query_stop_words": "english (stop-words package, alphabetic entries)",
}
# Each query term's lexemes and their inverse document frequency, as FTS5 computes it:
# ln((N - n + 0.5) / (n + 0.5)), at least 1e-6. A lexeme two terms share counts twice,
# as two FTS5 phrases do.
_WEIGHTS = (
    "SELECT lexeme, GREATEST(1e-6, ln(CAST((totals.chunks - COALESCE(kept.chunks, 0) + 0.5) "
    "/ (COALESCE(kept.chunks, 0) + 0.5) AS float8))) AS idf "
    "FROM unnest(CAST(:terms AS text[])) AS term(word) "
    f"CROSS JOIN LATERAL unnest({vector_expression('term.word')}) AS found "
    "LEFT JOIN lexical_terms kept ON kept.term = found.lexeme CROSS JOIN lexical_totals totals"
)
# The chunks holding any term (`{among}`: more conditions), scored. `setweight` marks the
# query's lexemes in the chunk's tsvector and `ts_filter` keeps only those, so a chunk's
# term frequencies are read from its few matching lexemes, not all of them. The query is
# MATERIALIZED so that no plan sees its terms, the first runs' custom plans included (a
# generic plan never did): seeing that common terms match a quarter of the chunks, the
# planner read them all and tested each tsvector (27.7 of a 43 ms statement on 10,799
# chunks); not seeing them, it finds them in the GIN index (3 ms).
_BM25 = (
    f"WITH weights AS MATERIALIZED ({_WEIGHTS}), "
    "query AS MATERIALIZED (SELECT {tsquery} AS match, "
    "(SELECT array_agg(DISTINCT lexeme) FROM weights) AS lexemes, "
    "(SELECT tokens::float8 / GREATEST(chunks, 1) FROM lexical_totals) AS average) "
    "SELECT chunks.id, sum(weights.idf * hits.tf * "
    f"{K1 + 1} / (hits.tf + {K1} * ({1 - B} + {B} * chunks.lexical_length / query.average))) "
    "AS score FROM chunks {join}CROSS JOIN query "
    "CROSS JOIN LATERAL (SELECT lexeme, COALESCE(array_length(positions, 1), 1) AS tf "
    "FROM unnest(ts_filter(setweight(chunks.tsv, 'A', query.lexemes), '{{a}}'))) AS hits "
    "JOIN weights ON weights.lexeme = hits.lexeme "
    "WHERE chunks.tsv @@ query.match{among} GROUP BY chunks.id"
)


def create_fulltext_space(connection: Connection, config: str) -> None:
    """Add the tsvector column generated with the text search configuration `config` and
    its GIN index (fills them for existing rows)."""
    connection.execute(
        text(
            f"ALTER TABLE chunks ADD COLUMN tsv tsvector "
            f"GENERATED ALWAYS AS (to_tsvector('{config}', text)) STORED"
        )
    )
    connection.execute(text("CREATE INDEX ix_chunks_tsv ON chunks USING gin (tsv)"))


def use_porter_configuration(connection: Connection) -> None:
    """Make `PORTER_CONFIG` in the index's schema and generate the tsvector column with it
    (the column and its GIN index made again: an existing index's rows are re-read)."""
    stem = f"{PORTER_CONFIG}_stem"
    for statement in (
        # Left behind in `public` by an index dropped with its tables (its schema cannot go).
        f"DROP TEXT SEARCH CONFIGURATION IF EXISTS {PORTER_CONFIG}",
        f"DROP TEXT SEARCH DICTIONARY IF EXISTS {stem}",
        f"CREATE TEXT SEARCH DICTIONARY {stem} (TEMPLATE = snowball, Language = porter)",
        f"CREATE TEXT SEARCH CONFIGURATION {PORTER_CONFIG} (COPY = pg_catalog.simple)",
        f"ALTER TEXT SEARCH CONFIGURATION {PORTER_CONFIG} ALTER MAPPING FOR {_WORD_TOKENS} "
        f"WITH {stem}",
        "DROP INDEX ix_chunks_tsv",
        "ALTER TABLE chunks DROP COLUMN tsv",
    ):
        connection.execute(text(statement))
    create_fulltext_space(connection, PORTER_CONFIG)


def search_statement(
    query: str, k: int, where: tuple[str, dict[str, str]] | None = None
) -> Statement | None:
    """The best `k` chunks for any of the query's terms by BM25, best first, with their
    rows (`sql_reads.CANDIDATE_COLUMNS`: the hits need no statement of
    their own to be hydrated), as driver SQL and values (`found_rows` reads its rows);
    with `where` (a condition on `documents` and its values, see `SearchFilter.sql`), only
    the chunks of the documents it allows. None for a query with no terms."""
    terms = query_terms(query)
    if not terms:
        return None
    join, among, values = "", "", {"k": k, **_term_values(terms)}
    if where is not None:
        join = "JOIN documents ON documents.id = chunks.document_id "
        among = f" AND ({where[0]})"
        values |= where[1]
    ranked = _BM25.format(tsquery=_tsquery(terms), join=join, among=among)
    sql = (
        f"WITH found AS MATERIALIZED ({ranked} ORDER BY score DESC, chunks.id LIMIT :k) "
        f"SELECT found.score, {CANDIDATE_COLUMNS} FROM found "
        "JOIN chunks ON chunks.id = found.id JOIN documents ON documents.id = chunks.document_id "
        f"{FILE_PASSAGES.format(held='held.id IN (SELECT id FROM found)')} "
        "ORDER BY found.score DESC, found.id"
    )
    return driver_sql(sql), values


def found_rows(rows: Iterable[Sequence[Any]]) -> list[tuple[int, float, tuple[Any, ...]]]:
    """`search_statement`'s rows as (chunk id, BM25, the chunk's row)."""
    return [(int(row[1]), float(row[0]), tuple(row[1:])) for row in rows]


def scores_statement(query: str, chunk_ids: list[int]) -> Statement | None:
    """The BM25 of each of these chunks that holds any of the query's terms (rows: chunk
    id, score); None when it has nothing to find (no term, no chunk)."""
    terms = query_terms(query)
    if not terms or not chunk_ids:
        return None
    sql = _BM25.format(tsquery=_tsquery(terms), join="", among=" AND chunks.id = ANY(:ids)")
    return driver_sql(sql), {"ids": [int(i) for i in chunk_ids], **_term_values(terms)}


# How many chunks hold each term: a term of one lexeme reads its document frequency from
# `lexical_terms`; one of several tokens (`snake_case`: 'snake' <-> 'case') is counted
# through the GIN index, as its phrase matches.
_TERM_COUNTS = (
    "SELECT term.word, CASE count(found.lexeme) WHEN 0 THEN 0 "
    "WHEN 1 THEN COALESCE(max(kept.chunks), 0) "
    f"ELSE (SELECT count(*) FROM chunks WHERE tsv @@ {phrase_expression('term.word')}) "
    "END FROM unnest(CAST(:terms AS text[])) AS term(word) "
    f"LEFT JOIN LATERAL unnest({vector_expression('term.word')}) AS found ON true "
    "LEFT JOIN lexical_terms kept ON kept.term = found.lexeme GROUP BY term.word"
)
# Which of the chunks `:ids` hold each term (as `_TERM_COUNTS` counts them).
_TERM_HOLDERS = (
    "SELECT term.word, chunks.id FROM unnest(CAST(:terms AS text[])) AS term(word) "
    f"JOIN chunks ON chunks.id = ANY(:ids) AND chunks.tsv @@ {phrase_expression('term.word')}"
)


def term_reads(terms: list[str], chunk_ids: list[int]) -> TermReads:
    """How many chunks hold each of these terms (as FTS5 tokenizes and stems it) and which
    of these chunks hold each: two statements whatever the number of terms."""
    values = {"terms": list(terms), "ids": [int(i) for i in chunk_ids]}
    statements = [(_TERM_COUNTS, {"terms": list(terms)}), (_TERM_HOLDERS, values)]

    def read(answers: list[Sequence[Sequence[Any]]]) -> tuple[dict[str, int], dict[str, set[int]]]:
        counted, holding = answers
        held: dict[str, set[int]] = {term: set() for term in terms}
        for word, chunk_id in holding:
            held[word].add(int(chunk_id))
        return {word: int(count) for word, count in counted}, held

    return statements, read


def words_condition(words: WordFilter) -> tuple[str, dict[str, str]]:
    """The condition that a chunk (`chunks`) holds every phrase of `words` (its tokens
    adjacent and in order, as FTS5 reads a phrase) and none of its exclusions, and its
    values."""
    parts, values = [], {}
    for n, phrase in enumerate(words.phrases):
        values[f"w_held{n}"] = phrase_form(phrase)
        parts.append(f"chunks.tsv @@ {phrase_expression(f':w_held{n}')}")
    if words.excluded:
        excluded = []
        for n, phrase in enumerate(words.excluded):
            values[f"w_excluded{n}"] = phrase_form(phrase)
            excluded.append(phrase_expression(f":w_excluded{n}"))
        parts.append(f"NOT (chunks.tsv @@ ({' || '.join(excluded)}))")
    return " AND ".join(parts) or "TRUE", values


def _tsquery(terms: list[str]) -> str:
    """The tsquery of any of the terms (parameters `:t0`, `:t1` ...)."""
    return " || ".join(phrase_expression(f":t{i}") for i in range(len(terms)))


def _term_values(terms: list[str]) -> dict[str, object]:
    return {"terms": terms} | {f"t{i}": term for i, term in enumerate(terms)}


def reindex_fulltext(connection: Connection) -> None:
    """Rebuild the GIN index from the stored column, and count the terms again."""
    connection.execute(text("REINDEX INDEX ix_chunks_tsv"))
    recount_terms(connection)

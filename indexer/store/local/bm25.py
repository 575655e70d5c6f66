"""BM25 over the FTS5 lexical space, as plain SQL (run by any snapshot's `rows`).

FTS5's bm25() is negated, so a higher score is better. A filter joins the chunks its
documents allow inside the query (`rowid IN (...)`), never by cutting a top-k afterwards;
the phrases and exclusions of its words are FTS5 queries of their own
(`words_condition`), so they choose passages without changing any passage's score.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from indexer.cjk import phrase_form
from indexer.store.sql_reads import Rows, Statement, TermReads, allowed_chunks_sql
from indexer.store.word_filter import WordFilter
from indexer.terms import query_terms

FTS_TABLE = "chunks_fts"
_BM25 = (
    f"SELECT rowid, -bm25({FTS_TABLE}) AS score FROM {FTS_TABLE} "
    f"WHERE {FTS_TABLE} MATCH :expression{{among}} ORDER BY bm25({FTS_TABLE}) LIMIT :k"
)
# The BM25 of given chunks: FTS5 scores every match once and the ids are picked from
# that; a `rowid IN (...)` beside MATCH would run the MATCH again for each id.
_BM25_OF = (
    f"WITH matched AS MATERIALIZED (SELECT rowid AS id, -bm25({FTS_TABLE}) AS score "
    f"FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :expression) "
    "SELECT id, score FROM matched WHERE id IN (SELECT value FROM json_each(:ids))"
)

_COUNT = f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :expression"
# The chunks an FTS5 query (the parameter `name`) matches.
_MATCHING = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :{{name}}"


def fts5_phrase(text: str) -> str:
    """`text` as one FTS5 phrase: quoted, its own quotes doubled (no syntax leaks in); FTS5
    splits it into tokens, which must then stand adjacent and in order."""
    return '"' + text.replace('"', '""') + '"'


def match_expression(query: str) -> str | None:
    """An FTS5 MATCH expression: any of the query's terms, each quoted (no syntax leaks)."""
    terms = query_terms(query)
    if not terms:
        return None
    return " OR ".join(fts5_phrase(term) for term in terms)


def words_condition(words: WordFilter, column: str = "chunks.id") -> tuple[str, dict[str, str]]:
    """The condition that the chunk whose id is `column` holds every phrase of `words` and
    none of its exclusions (each one FTS5 query, read once), and its values."""
    parts, values = [], {}
    if words.phrases:
        values["w_held"] = " AND ".join(fts5_phrase(phrase_form(p)) for p in words.phrases)
        parts.append(f"{column} IN ({_MATCHING.format(name='w_held')})")
    if words.excluded:
        values["w_excluded"] = " OR ".join(fts5_phrase(phrase_form(p)) for p in words.excluded)
        parts.append(f"{column} NOT IN ({_MATCHING.format(name='w_excluded')})")
    return " AND ".join(parts) or "1 = 1", values


def bm25_search(
    rows: Rows,
    query: str,
    k: int,
    where: tuple[str, dict[str, str]] | None = None,
    words: WordFilter | None = None,
) -> list[tuple[int, float]]:
    """The best `k` chunks by BM25; with `where` (a condition on `documents` and its
    values, see `SearchFilter.sql`), only the chunks of the documents it allows; with
    `words`, only the chunks holding its phrases and none of its exclusions."""
    expression = match_expression(query)
    if expression is None:
        return []
    values: dict[str, object] = {"expression": expression, "k": k}
    among = ""
    if where is not None:
        condition, named = where
        among = f" AND rowid IN ({allowed_chunks_sql(condition)})"
        values |= named
    if words:
        condition, named = words_condition(words, "rowid")
        among += f" AND {condition}"
        values |= named
    found = rows(_BM25.format(among=among), values)
    return [(int(rowid), float(score)) for rowid, score in found]


def bm25_scores(rows: Rows, query: str, chunk_ids: list[int]) -> dict[int, float]:
    """The BM25 of each of these chunks that holds a query term."""
    statement = scores_statement(query, chunk_ids)
    if statement is None:
        return {}
    return {int(rowid): float(score) for rowid, score in rows(*statement)}


def scores_statement(query: str, chunk_ids: list[int]) -> Statement | None:
    """The statement of `bm25_scores` (rows: chunk id, BM25); None when it has nothing to
    find (no query term, no chunk)."""
    expression = match_expression(query)
    if expression is None or not chunk_ids:
        return None
    return _BM25_OF, {"expression": expression, "ids": json.dumps(chunk_ids)}


def term_reads(terms: list[str], chunk_ids: list[int]) -> TermReads:
    """How many chunks hold each of these terms (as FTS5 tokenizes and stems it: one count
    a term), and which of these chunks hold each (those `bm25_scores` scores for it)."""
    counting = [(_COUNT, {"expression": fts5_phrase(term)}) for term in terms]
    holding = [scores_statement(term, chunk_ids) for term in terms]
    asked = [statement for statement in holding if statement is not None]

    def read(answers: list[Sequence[Sequence[Any]]]) -> tuple[dict[str, int], dict[str, set[int]]]:
        counts = {
            term: int(rows[0][0]) for term, rows in zip(terms, answers[: len(terms)], strict=True)
        }
        found = iter(answers[len(terms) :])
        holders = {
            term: set() if statement is None else {int(row[0]) for row in next(found)}
            for term, statement in zip(terms, holding, strict=True)
        }
        return counts, holders

    return counting + asked, read

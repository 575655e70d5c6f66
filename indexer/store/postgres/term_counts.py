"""What BM25 needs to know of the PostgreSQL lexical space, kept in step with the chunks.

- `chunks.lexical_length`: each chunk's length in tokens (a generated column: every
  token, stop words included, as FTS5 counts a row's; since migration 0010 the token runs
  of `fts5_tokens.length_expression`).
- `lexical_terms(term, chunks)`: in how many chunks each lexeme of the `tsv` column occurs
  (its document frequency).
- `lexical_totals`: one row, how many chunks there are and their tokens in all (N and
  the average length).

Statement-level triggers on `chunks` update them from the rows a statement inserted,
deleted or changed (transition tables: one grouped upsert per statement, not one per
row), so they change in the same transaction as the chunks, roll back with it, and a
snapshot reads counts that agree with the rows it sees.

A transaction that fills an empty index turns the triggers off for itself
(`defer_term_counts`) and counts everything once before it commits (`recount_terms`):
each statement's upsert makes a new version of every common term's row and of the
totals row, which no one can clean up while the transaction runs, so the next statement
walks them all: each statement is slower than the one before, without end in a run of a
million chunks.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

# Migration 0009's length: every word the default parser finds, stop words included.
LENGTH_CONFIG = "simple"
# When 'on' in a transaction, its triggers leave the counts alone (it recounts them).
DEFER_SETTING = "ctxsearch.defer_term_counts"

_TOKENS_FUNCTION = """
CREATE OR REPLACE FUNCTION lexical_tokens(value tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT COALESCE(sum(COALESCE(array_length(positions, 1), 1)), 0)::integer
        FROM unnest(value))
"""
_SUBTRACT = """
    WITH gone AS ({rows}), counted AS (
      SELECT lexeme, count(*) AS n FROM gone, unnest(gone.tsv) GROUP BY lexeme
    ), lowered AS (
      UPDATE lexical_terms t SET chunks = t.chunks - counted.n FROM counted
      WHERE t.term = counted.lexeme
    )
    UPDATE lexical_totals SET chunks = chunks - (SELECT count(*) FROM gone),
      tokens = tokens - (SELECT COALESCE(sum(lexical_length), 0) FROM gone);
    DELETE FROM lexical_terms WHERE chunks <= 0;"""
_ADD = """
    WITH came AS ({rows}), counted AS (
      INSERT INTO lexical_terms (term, chunks)
      SELECT lexeme, count(*) FROM came, unnest(came.tsv) GROUP BY lexeme
      ON CONFLICT (term) DO UPDATE SET chunks = lexical_terms.chunks + excluded.chunks
    )
    UPDATE lexical_totals SET chunks = chunks + (SELECT count(*) FROM came),
      tokens = tokens + (SELECT COALESCE(sum(lexical_length), 0) FROM came);"""
# On an UPDATE only the rows whose lexemes changed count (a rebuild updates every chunk's
# content key, never its text).
_CHANGED = (
    "SELECT {this}.tsv, {this}.lexical_length FROM {table} {this} WHERE NOT EXISTS "
    "(SELECT 1 FROM {other_table} {other} WHERE {other}.id = {this}.id "
    "AND {other}.tsv IS NOT DISTINCT FROM {this}.tsv)"
)
_BODIES = {
    "added": _ADD.format(rows="SELECT tsv, lexical_length FROM added"),
    "removed": _SUBTRACT.format(rows="SELECT tsv, lexical_length FROM removed"),
    "changed": _SUBTRACT.format(
        rows=_CHANGED.format(this="o", table="removed", other="n", other_table="added")
    )
    + _ADD.format(rows=_CHANGED.format(this="n", table="added", other="o", other_table="removed")),
}
_TRIGGERS = {
    "added": "INSERT ON chunks REFERENCING NEW TABLE AS added",
    "removed": "DELETE ON chunks REFERENCING OLD TABLE AS removed",
    "changed": "UPDATE ON chunks REFERENCING OLD TABLE AS removed NEW TABLE AS added",
}


def counting_functions() -> list[str]:
    """The trigger function of each kind of change (made again by a migration when they
    change); its search_path is the index's schema, fixed when it is created."""
    skip = f"IF current_setting('{DEFER_SETTING}', true) = 'on' THEN RETURN NULL; END IF;"
    return [
        f"CREATE OR REPLACE FUNCTION lexical_count_{kind}() RETURNS trigger LANGUAGE plpgsql "
        f"SET search_path FROM CURRENT AS $$ BEGIN {skip}{body}\n    RETURN NULL; END $$"
        for kind, body in _BODIES.items()
    ]


def _counting_statements() -> list[str]:
    """The trigger functions and a statement-level trigger for each kind of change."""
    return counting_functions() + [
        f"CREATE TRIGGER lexical_count_{kind} AFTER {_TRIGGERS[kind]} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION lexical_count_{kind}()"
        for kind in _BODIES
    ]


def defer_term_counts(connection: Connection) -> None:
    """Leave the counts alone for the rest of this transaction, which must call
    `recount_terms` before it commits."""
    connection.execute(text(f"SELECT set_config('{DEFER_SETTING}', 'on', true)"))


def create_term_counts(connection: Connection) -> None:
    """Add the length column, the counts (filled from the rows there are) and the
    triggers that keep them."""
    statements = [
        _TOKENS_FUNCTION,
        "ALTER TABLE chunks ADD COLUMN lexical_length integer GENERATED ALWAYS AS "
        f"(lexical_tokens(to_tsvector('{LENGTH_CONFIG}', text))) STORED",
        "CREATE TABLE lexical_terms (term text NOT NULL PRIMARY KEY, chunks bigint NOT NULL)",
        "CREATE TABLE lexical_totals (id integer PRIMARY KEY CHECK (id = 1), "
        "chunks bigint NOT NULL, tokens bigint NOT NULL)",
        # the terms no chunk holds any more, found without reading the others
        "CREATE INDEX ix_lexical_terms_unused ON lexical_terms (term) WHERE chunks <= 0",
        "INSERT INTO lexical_totals (id, chunks, tokens) VALUES (1, 0, 0)",
        *_counting_statements(),
    ]
    for statement in statements:
        connection.execute(text(statement))
    recount_terms(connection)


def recount_terms(connection: Connection) -> None:
    """Count every term and the totals again from the stored chunks (a rebuild, a repair)."""
    connection.execute(text("DELETE FROM lexical_terms"))
    connection.execute(
        text(
            "INSERT INTO lexical_terms (term, chunks) "
            "SELECT lexeme, count(*) FROM chunks, unnest(chunks.tsv) GROUP BY lexeme"
        )
    )
    connection.execute(
        text(
            "UPDATE lexical_totals SET chunks = (SELECT count(*) FROM chunks), "
            "tokens = (SELECT COALESCE(sum(lexical_length), 0) FROM chunks)"
        )
    )


def count_problems(connection: Connection) -> list[str]:
    """`verify`: where the kept counts disagree with the chunks (read in full: the
    check is as long as a rebuild of the counts)."""
    problems = []
    [(chunks, tokens)] = connection.execute(
        text("SELECT count(*), COALESCE(sum(lexical_length), 0) FROM chunks")
    ).all()
    [(kept_chunks, kept_tokens)] = connection.execute(
        text("SELECT chunks, tokens FROM lexical_totals")
    ).all()
    if (chunks, tokens) != (kept_chunks, kept_tokens):
        problems.append(
            f"lexical space: totals say {kept_chunks} chunks and {kept_tokens} tokens, "
            f"the chunks hold {chunks} and {tokens}"
        )
    wrong = connection.execute(
        text(
            "SELECT count(*) FROM (SELECT lexeme AS term, count(*) AS chunks FROM chunks, "
            "unnest(chunks.tsv) GROUP BY lexeme) AS counted "
            "FULL JOIN lexical_terms kept USING (term) "
            "WHERE counted.chunks IS DISTINCT FROM kept.chunks"
        )
    ).scalar_one()
    if wrong:
        problems.append(f"lexical space: {wrong} terms with a wrong chunk count")
    return problems

"""BM25 on PostgreSQL: the same scores as FTS5's bm25() on the same chunks, and term
counts that follow every change in the chunks' own transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from indexer import Indexer
from indexer.runs.removal import remove_path
from indexer.store.backends import open_store, verify_target

pytestmark = pytest.mark.postgres

# Words that the Porter (FTS5) and Snowball (PostgreSQL) stemmers reduce alike.
TEXTS = {
    "river.txt": "The river bank floods in spring and the river carries stone to the sea.",
    "crane.txt": "A tower crane lifts stone blocks; the crane stands on a concrete base.",
    "otters.txt": "Otters swim in the river and eat fish near the bank of the river.",
    "bridge.txt": "The old stone bridge crosses the river where the town market stands.",
    "market.txt": "Fish and bread are sold at the market every morning in the town square.",
}
QUERIES = ["river bank", "stone crane tower", "fish market town", "otters swim river stone"]


def write(folder: Path, texts: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in texts.items():
        (folder / name).write_text(value + "\n")
    return folder


def lexical(target, query: str) -> dict[str, float]:
    """Each hit's file name and lexical score, every matching chunk (one per file here)."""
    store = open_store(target)
    try:
        with store.snapshot() as snapshot:
            ranked = snapshot.lexical_search(query, 100)
            chunks = snapshot.chunks([chunk_id for chunk_id, _ in ranked])
        return {Path(chunks[i].path).name: score for i, score in ranked}
    finally:
        store.close()


def test_postgres_lexical_scores_are_fts5_bm25(tmp_path, postgres_index, fast_model):
    assert_both_stores_score_alike(tmp_path / "notes", postgres_index, fast_model, TEXTS, QUERIES)


# Sentences of SciFact abstracts: hyphenated words, decimals, signed numbers, Greek
# letters, the micro sign and a diacritic, which PostgreSQL's own parser splits, keeps
# whole or cases apart from FTS5's unicode61 tokenizer (words the two stemmers agree on).
ABSTRACTS = {
    "164985.txt": "Here, we demonstrate that 4T1 mammary carcinoma cells, when co-cultured with "
    "RAW264.7 macrophage cells, skew the RAW264.7 macrophage cell differentiation into M2d "
    "macrophages.",
    "263364.txt": "The rs8099917-G allele was also associated with advanced liver disease "
    "(OR = 2.34; 95% CI, 1.40-3.93; p = 0.0100).",
    "474325.txt": "Non-invasive ventilation improved gas exchange (p< 0.05) and inspiratory "
    "effort (p< 0.01) with both interfaces.",
    "643765.txt": "Ski/SnoN are important transcription regulators of the transforming growth "
    "factor-\u03b2 (TGF-\u03b2) superfamily and function mainly through heterodimers.",
    "1044552.txt": "Though not statistically significant, IL-1\u03b2 produced an additional "
    "effect on the activation of Erk1/2 and p38.",
    "1225513.txt": "Isothermal titration calorimetry measurements indicated that cognate HK-RR "
    "pairs interact with dissociation constants (Kd) of approximately 1 \u00b5M, while "
    "noncognate pairs had no measurable binding.",
    "1907601.txt": "These events are sufficient to trigger HIF-1\u03b1 induction, setting off "
    "the chronic adipose tissue inflammatory response characteristic of obesity.",
    "1855679.txt": "Tumor necrosis factor \u03b1 also synergized with IL-23 to enhance IL-17 "
    "production, and this was IL-1 dependent, as in Kr\u00fcppel-like factor 4 cells.",
}
ABSTRACT_QUERIES = [
    "co-cultured macrophage cells",
    "p 0.05 inspiratory effort",
    "95% CI 1.40 liver disease",
    "TGF-\u03b2 growth factor superfamily",
    "IL-1\u03b2 activation of Erk1/2",
    "binding at 1 \u00b5M",
    "HIF-1\u03b1 induction in adipose tissue",
    "KR\u00dcPPEL-like factor and IL-17",
    "non-invasive ventilation",
]


def test_both_stores_score_real_abstracts_alike(tmp_path, postgres_index, fast_model):
    """The stores agree on how text splits into terms, so on the same chunks each query
    finds the same chunks with the same BM25 (FTS5's unicode61 tokens on PostgreSQL)."""
    assert_both_stores_score_alike(
        tmp_path / "abstracts", postgres_index, fast_model, ABSTRACTS, ABSTRACT_QUERIES
    )


def test_an_index_made_with_the_parsers_tokens_is_migrated_to_fts5s(
    tmp_path, postgres_index, fast_model, monkeypatch
):
    """An index made by the code before 0010 (PostgreSQL's parser: `co-cultured` kept
    whole) gets FTS5's tokens, counts and lengths when first opened: then it ranks as a
    folder index of the same files, and as a PostgreSQL index made afresh."""
    from indexer.store import migrations

    folder = write(tmp_path / "abstracts", ABSTRACTS)
    # The index of the code before 0010, less the migrations since that only add what
    # today's rows need (a document's file identity) and leave the lexical space alone.
    lexical_since = {"0010_fts5_tokens", "0011_deferred_term_counts"}
    made_before = tuple(step for step in migrations.MIGRATIONS if step[0] not in lexical_since)
    with monkeypatch.context() as before:
        before.setattr(migrations, "MIGRATIONS", made_before)
        before.setattr(migrations, "MIGRATION_NAMES", tuple(name for name, _ in made_before))
        Indexer(postgres_index, model=fast_model).index_folder(folder)
        assert held(postgres_index, "co-cultur") == [(1,)]
    assert held(postgres_index, "co-cultur") == []  # opening it migrated it
    fresh = f"{postgres_index}_fresh"
    Indexer(tmp_path / "ix", model=fast_model).index_folder(folder)
    Indexer(fresh, model=fast_model).index_folder(folder)
    for query in ABSTRACT_QUERIES:
        expected = lexical(tmp_path / "ix", query)
        assert lexical(postgres_index, query) == pytest.approx(expected, rel=1e-9), query
        assert lexical(fresh, query) == pytest.approx(expected, rel=1e-9), query
    assert verify_target(postgres_index).problems == []
    totals = "SELECT chunks, tokens FROM lexical_totals"
    assert rows_of(postgres_index, totals) == rows_of(fresh, totals)
    store = open_store(postgres_index)
    assert "unicode61" in store.manifest.lexical["tokenizer"]
    store.close()


def rows_of(target, sql: str, values: dict | None = None) -> list[tuple]:
    store = open_store(target)
    try:
        with store.snapshot() as snapshot:
            return [tuple(row) for row in snapshot.rows(sql, values or {})]
    finally:
        store.close()


def held(target, term: str) -> list[tuple]:
    """How many chunks hold `term`, as the index's counts say (no row: none)."""
    return rows_of(target, "SELECT chunks FROM lexical_terms WHERE term = :term", {"term": term})


def test_term_counts_follow_added_removed_and_changed_chunks(tmp_path, postgres_index, fast_model):
    folder = write(tmp_path / "notes", TEXTS)
    indexer = Indexer(postgres_index, model=fast_model)
    indexer.index_folder(folder)
    (folder / "crane.txt").write_text("A harbour crane unloads fish from the boats.\n")
    write(folder, {"sea.txt": "The sea is calm; boats sail past the stone pier."})
    indexer.index_folder(folder)
    remove_path(postgres_index, folder / "otters.txt")
    (folder / "otters.txt").unlink()
    # a fresh index of the same files: the counts, and so every score, must be equal
    Indexer(tmp_path / "ix", model=fast_model).index_folder(folder)
    for query in [*QUERIES, "harbour boats sea pier"]:
        expected = lexical(tmp_path / "ix", query)
        assert lexical(postgres_index, query) == pytest.approx(expected, rel=1e-9), query
    report = verify_target(postgres_index)
    assert report.problems == [] and report.counts["chunks"] == 5


def test_verify_names_term_counts_that_disagree(postgres_index, tmp_path, fast_model):
    Indexer(postgres_index, model=fast_model).index_folder(write(tmp_path / "notes", TEXTS))
    store = open_store(postgres_index)
    with store.engine.begin() as connection:
        connection.execute(
            text("UPDATE lexical_terms SET chunks = chunks + 1 WHERE term = 'river'")
        )
        connection.execute(text("UPDATE lexical_totals SET tokens = tokens + 3"))
    store.close()
    problems = verify_target(postgres_index).problems
    assert any("1 terms with a wrong chunk count" in problem for problem in problems), problems
    assert any("totals say 5 chunks" in problem for problem in problems), problems


def test_an_index_in_public_made_again_after_its_tables_were_dropped(
    tmp_path, postgres_server, fast_model
):
    """An index in `public` cannot be dropped with its schema: its tables go, and the
    text search configuration and functions BM25 made there stay. Making the index again
    must not trip over them (the oracle found `ctxsearch_porter_stem already exists`)."""
    import uuid

    import psycopg
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    parsed = make_url(postgres_server)
    name = f"public_{uuid.uuid4().hex[:8]}"
    admin = f"host={parsed.host} port={parsed.port} user={parsed.username} dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    database = parsed.set(database=name).render_as_string(hide_password=False)
    try:
        with psycopg.connect(admin.replace("dbname=postgres", f"dbname={name}")) as connection:
            connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        target = f"{database}?index=public"
        folder = write(tmp_path / "notes", TEXTS)
        Indexer(target, model=fast_model).index_folder(folder)
        engine = create_engine(database)
        with engine.begin() as connection:
            tables = connection.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            ).scalars()
            for table in list(tables):
                connection.execute(text(f'DROP TABLE public."{table}" CASCADE'))
        engine.dispose()
        Indexer(target, model=fast_model).index_folder(folder)
        assert set(lexical(target, "river bank")) == {"river.txt", "otters.txt", "bridge.txt"}
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.mark.parametrize("unicode_collation", [True, False])
def test_the_tokenizer_splits_as_unicode61_with_or_without_a_unicode_collation(
    postgres_server, unicode_collation
):
    """Without `pg_c_utf8` (PostgreSQL before 17) a C-locale database's classes know only
    ASCII: every other character is then taken for a letter, so Greek and accented words
    stay words, and the length counts the tokens the tsvector holds."""
    import uuid

    from sqlalchemy import create_engine

    from indexer.store.postgres.fts5_tokens import (
        Server,
        length_expression,
        tokenizer_statements,
        vector_expression,
    )

    schema = f"tok_{uuid.uuid4().hex[:8]}"
    engine = create_engine(postgres_server)
    sample = "Kr\u00fcppel-like factor \u03b1 (IL-1\u03b2) at 1 \u00b5M, p < 0.05 per m\u00b2"
    try:
        with engine.begin() as connection:
            server = Server.of(connection)
            assert server.ascii_classes  # the test server's database is C-locale
            server = Server(server.utf8, unicode_collation, True, server.regexp_count)
            connection.execute(text(f"CREATE SCHEMA {schema}"))
            connection.execute(text(f"SET LOCAL search_path TO {schema}"))
            connection.execute(
                text(
                    "CREATE FUNCTION lexical_tokens(value tsvector) RETURNS integer "
                    "LANGUAGE sql IMMUTABLE RETURN (SELECT sum(array_length(positions, 1)) "
                    "FROM unnest(value))"
                )
            )
            for statement in tokenizer_statements(server):
                connection.execute(text(statement))
            split, tokens, length = connection.execute(
                text(
                    "SELECT btrim(lexical_text(text)), "
                    f"lexical_tokens({vector_expression('text')}), {length_expression(server)} "
                    "FROM (SELECT CAST(:text AS text) AS text) AS chunk"
                ),
                {"text": sample},
            ).one()
        assert split == "kruppel like factor \u03b1 il 1\u03b2 at 1 \u03bcm p 0 05 per m\u00b2"
        assert tokens == length == 14
    finally:
        with engine.begin() as connection:
            connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        engine.dispose()


def assert_both_stores_score_alike(folder, postgres_index, fast_model, texts, queries) -> None:
    """`texts` written into `folder`, indexed into a folder index beside it and into
    `postgres_index`: each query's lexical hits and BM25 scores are the same on both."""
    write(folder, texts)
    local = folder.parent / f"{folder.name}-ix"
    Indexer(local, model=fast_model).index_folder(folder)
    Indexer(postgres_index, model=fast_model).index_folder(folder)
    for query in queries:
        expected = lexical(local, query)
        assert lexical(postgres_index, query) == pytest.approx(expected, rel=1e-9), query

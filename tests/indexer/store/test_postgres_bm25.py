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
            by_id = snapshot.lexical_scores(query, [chunk_id for chunk_id, _ in ranked])
        assert by_id == pytest.approx(dict(ranked))
        return {Path(chunks[i].path).name: score for i, score in ranked}
    finally:
        store.close()


def test_postgres_lexical_scores_are_fts5_bm25(tmp_path, postgres_index, fast_model):
    folder = write(tmp_path / "notes", TEXTS)
    Indexer(tmp_path / "ix", model=fast_model).index_folder(folder)
    Indexer(postgres_index, model=fast_model).index_folder(folder)
    for query in QUERIES:
        expected = lexical(tmp_path / "ix", query)
        assert lexical(postgres_index, query) == pytest.approx(expected, rel=1e-9), query


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

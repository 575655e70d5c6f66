"""Quantized graphs on PostgreSQL (`index --quantize halfvec|binary|auto`): pgvector's
HNSW over the halfvec cast or the binary quantization of the float32 column, which the
table keeps for re-ranking; chosen at index time, recorded, shown, and switched."""

from __future__ import annotations

import numpy as np
import pytest

from indexer import Indexer
from indexer.store.backends import open_store, verify_target
from indexer.store.postgres.vectors import graph_form, index_name

pytestmark = pytest.mark.postgres


def form_of(target) -> dict[str, str | None]:
    store = open_store(target)
    try:
        with store.engine.connect() as connection:
            return {space: graph_form(connection, space) for space in store.manifest.spaces}
    finally:
        store.close()


def nearest(target, form: str = "none") -> list[tuple[int, float]]:
    """The 3 nearest chunks of chunk 1's own contextual vector, with their cosines, found
    by a walk of the graph in `form` (pg_stat_get_xact_numscans of its index)."""
    store = open_store(target)
    try:
        with store.snapshot() as snapshot:
            [query] = snapshot.vectors("contextual", [1]).values()
            # a table this small is cheaper to scan: the planner is told not to, so that
            # the search shows it can walk the graph (its index matches the expression)
            snapshot.rows("SELECT set_config('enable_seqscan', 'off', true)", {})
            found = snapshot.vector_search("contextual", query[None], 3)[0]
            [scans] = snapshot.rows(
                "SELECT pg_stat_get_xact_numscans(CAST(:ix AS regclass))",
                {"ix": index_name("contextual", form)},
            )[0]
            assert scans == 1, form
            return found
    finally:
        store.close()


WORDS = ["river", "bank", "stone", "crane", "tower", "bridge", "market", "fish", "boat"]


@pytest.fixture
def notes(tmp_path):
    """60 files of 12 words each: enough rows that the planner walks a graph."""
    folder = tmp_path / "notes"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for number in range(60):
        (folder / f"{number:02d}.txt").write_text(" ".join(rng.choice(WORDS, 12)) + "\n")
    return folder


def test_a_postgres_index_is_made_switched_and_kept_in_each_form(postgres_index, notes, fast_model):
    def index(quantize):
        indexer = Indexer(postgres_index, model=fast_model, index_type="hnsw", quantize=quantize)
        indexer.index_folder(notes)

    index(None)
    assert set(form_of(postgres_index).values()) == {"none"}
    float32 = nearest(postgres_index)
    for form in ("halfvec", "binary", None, "none"):
        index(form)
        expected = form or "binary"  # not given: the index keeps its own
        assert set(form_of(postgres_index).values()) == {expected}, form
        assert verify_target(postgres_index).consistent
        store = open_store(postgres_index)
        try:
            shown = store.describe()
        finally:
            store.close()
        assert shown["quantization"] == expected and shown["manifest"]["quantize"] == expected
        assert dict(nearest(postgres_index, expected)) == pytest.approx(dict(float32)), form


def test_a_larger_halfvec_graph_is_walked_deeper():
    """At 1,000,000 real vectors the halfvec graph walked at 100 found recall@10 0.8625;
    at 240, 0.964 (docs/reports/2026-12-05-postgres-1m.md). Its depth grows past 100,000
    vectors; the other forms keep theirs."""
    from indexer.store.postgres.vectors import GRAPH_EF_SEARCH, graph_ef_search

    assert [graph_ef_search("halfvec", size) for size in (10, 100_000)] == [100, 100]
    assert graph_ef_search("halfvec", 300_000) == 152
    assert graph_ef_search("halfvec", 1_000_000) == 240
    assert graph_ef_search("halfvec", 10**9) == 1000  # pgvector's cap
    for form in ("none", "binary"):
        assert graph_ef_search(form, 1_000_000) == GRAPH_EF_SEARCH[form]


def test_the_walk_of_a_halfvec_graph_is_as_deep_as_its_size_wants(
    postgres_index, notes, fast_model, monkeypatch
):
    """The depth follows the space's size, counted once per published state: with the
    growth starting at 2 vectors, a space of N walks at 100 * (N / 2) ** 0.38, the first
    search of a snapshot (sent with its BEGIN) as the later ones."""
    from indexer.store.postgres import vectors

    Indexer(postgres_index, model=fast_model, index_type="hnsw", quantize="halfvec").index_folder(
        notes
    )
    monkeypatch.setattr(vectors, "DEPTH_GROWS_FROM", 2)
    store = open_store(postgres_index)
    try:
        with store.snapshot() as snapshot:
            size = snapshot.space_size("contextual")
            [query] = snapshot.vectors("contextual", [1]).values()
        wanted = str(round(100 * (size / 2) ** 0.38))
        assert size > 2 and wanted != "100"
        for _ in range(2):  # the size unknown to the store, then known
            with store.snapshot() as snapshot:
                snapshot.vector_search("contextual", query[None], 3)
                depth = snapshot.rows("SELECT current_setting('hnsw.ef_search')", {})
                assert depth == [(wanted,)]
    finally:
        store.close()


def test_a_halfvec_graph_is_built_as_its_form_wants_and_searched_as_deep(
    postgres_index, notes, fast_model
):
    """The halfvec graph is built with ef_construction 160 and searched at ef_search 100
    (`vectors.GRAPH_BUILD`, `GRAPH_EF_SEARCH`); one an older version built otherwise is
    built again at the next publish."""
    from sqlalchemy import text

    from indexer.store.postgres import vectors

    def index() -> None:
        indexer = Indexer(postgres_index, model=fast_model, index_type="hnsw", quantize="halfvec")
        indexer.index_folder(notes)

    def built() -> tuple[int, int] | None:
        store = open_store(postgres_index)
        try:
            with store.engine.connect() as connection:
                return vectors.graph_build(connection, "contextual", "halfvec")
        finally:
            store.close()

    index()
    assert built() == vectors.GRAPH_BUILD["halfvec"] == (16, 160)
    store = open_store(postgres_index)
    try:
        with store.snapshot() as snapshot:
            [query] = snapshot.vectors("contextual", [1]).values()
        with store.snapshot() as snapshot:
            snapshot.vector_search("contextual", query[None], 3)
            assert snapshot.rows("SELECT current_setting('hnsw.ef_search')", {}) == [("100",)]
        with store.engine.begin() as connection:  # as an older version built it
            dim = vectors.dim_of(connection, "contextual")
            older = vectors.graph_statement(connection, "contextual", dim, "halfvec")
            connection.execute(text(f"DROP INDEX {index_name('contextual', 'halfvec')}"))
            connection.execute(text(older.replace("ef_construction = 160", "ef_construction = 80")))
    finally:
        store.close()
    assert built() == (16, 80)
    (notes / "new.txt").write_text("river bank stone\n")
    index()
    assert built() == (16, 160)
    assert verify_target(postgres_index).consistent

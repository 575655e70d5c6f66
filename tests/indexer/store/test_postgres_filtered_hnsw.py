"""Filtered vector search on PostgreSQL: the HNSW graph walked with iterative index scans
above the exact-search threshold, an exact scan below it or when the walk stops short,
and `k` hits whenever `k` allowed chunks exist."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from indexer import Indexer
from indexer.store.backends import open_store
from indexer.store.filters import make_filter
from indexer.store.postgres import nearest, vectors

pytestmark = pytest.mark.postgres

WORDS = [
    "river",
    "bank",
    "stone",
    "crane",
    "tower",
    "bridge",
    "market",
    "fish",
    "boat",
    "harbour",
    "town",
    "field",
]


@pytest.fixture(scope="module")
def graph_index(postgres_server, tmp_path_factory) -> tuple[str, Path]:
    """An index with HNSW graphs: 40 files in `wide/`, 4 in `narrow/`."""
    from indexer.encoders.hashed import HASHED_MODEL

    folder = tmp_path_factory.mktemp("filtered") / "notes"
    rng = np.random.default_rng(0)
    for place, count in (("wide", 40), ("narrow", 4)):
        (folder / place).mkdir(parents=True)
        for number in range(count):
            words = rng.choice(WORDS, size=12).tolist()
            (folder / place / f"{number:02d}.txt").write_text(" ".join(words) + "\n")
    url = f"{postgres_server}?index=t_filtered_hnsw"
    Indexer(url, model=HASHED_MODEL, index_type="hnsw").index_folder(folder)
    return url, folder


def graph_scans(connection) -> int:
    """How many scans of the contextual space's HNSW index this transaction made."""
    return connection.execute(
        text("SELECT pg_stat_get_xact_numscans(CAST(:ix AS regclass))"),
        {"ix": vectors.index_name("contextual")},
    ).scalar_one()


def filtered(url: str, folder: Path, place: str, k: int):
    """A search under `place` from the first chunk's vector as a snapshot runs it: the ids
    found, the ids of the exact answer (NumPy, over the allowed chunks), the graph scans."""
    store = open_store(url)
    try:
        with store.snapshot() as snapshot:
            where = make_filter(under=str(folder / place))
            stored = snapshot.vectors("contextual", snapshot.allowed_chunks(where).tolist())
            query = snapshot.vectors("contextual", [1])[1]
            [found] = snapshot.vector_search("contextual", query[None], k, where)
            scans = graph_scans(snapshot.connection)
    finally:
        store.close()
    exact = sorted(stored, key=lambda chunk_id: -float(stored[chunk_id] @ query))[:k]
    return [chunk_id for chunk_id, _ in found], exact, scans


def test_a_filter_above_the_threshold_walks_the_graph(graph_index, monkeypatch):
    url, folder = graph_index
    monkeypatch.setattr(nearest, "EXACT_UP_TO", 5, raising=False)
    found, exact, scans = filtered(url, folder, "wide", 10)
    assert scans >= 1
    assert len(found) == 10 and set(found) == set(exact)


def test_a_filter_at_or_below_the_threshold_scans_exactly(graph_index, monkeypatch):
    url, folder = graph_index
    monkeypatch.setattr(nearest, "EXACT_UP_TO", 4, raising=False)
    found, exact, scans = filtered(url, folder, "narrow", 3)
    assert scans == 0
    assert found == exact


def test_a_graph_walk_that_stops_short_falls_back_to_exact(graph_index, monkeypatch):
    url, folder = graph_index
    monkeypatch.setattr(nearest, "EXACT_UP_TO", 0, raising=False)
    monkeypatch.setattr(nearest, "MAX_SCAN_TUPLES", 1, raising=False)  # gives up at once
    found, exact, scans = filtered(url, folder, "narrow", 4)
    assert scans >= 1
    assert found == exact


def test_the_exact_fallback_is_exact_after_the_same_walk_was_prepared(graph_index, monkeypatch):
    """A prepared statement keeps its generic plan whatever the settings say later, so the
    exact scan must be a statement of its own, not the walk's with index scans turned off."""
    url, folder = graph_index
    monkeypatch.setattr(nearest, "EXACT_UP_TO", 0, raising=False)
    store = open_store(url)
    try:
        query = None
        for _ in range(15):  # past psycopg's prepare threshold and PostgreSQL's 5 custom plans
            with store.snapshot() as snapshot:
                query = snapshot.vectors("contextual", [1])[1]
                where = make_filter(under=str(folder / "narrow"))
                snapshot.vector_search("contextual", query[None], 4, where)
    finally:
        store.close()
    monkeypatch.setattr(nearest, "MAX_SCAN_TUPLES", 1, raising=False)
    found, exact, scans = filtered(url, folder, "narrow", 4)
    assert scans >= 1
    assert found == exact

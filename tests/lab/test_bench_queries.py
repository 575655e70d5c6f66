"""The queries bench section: whole queries per mode on an index against a baseline."""

from __future__ import annotations

import pytest

from indexer import Indexer
from lab.bench_queries import query_rows

QUERIES = ["pruning roses", "interest on savings", "river bank", "snake_case names"] * 3


def test_each_mode_is_timed_on_both_indexes_with_the_baseline_ratio(tmp_path, notes, fast_model):
    one, other = tmp_path / "one", tmp_path / "other"
    for index in (one, other):
        Indexer(index, model=fast_model).index_folder(notes)
    rows = query_rows(one, QUERIES, baseline=other)
    assert [(row["mode"], row["benchmark"].split(": ")[1]) for row in rows] == [
        (mode, f"folder {name}")
        for mode in ("contextual", "lexical", "hybrid")
        for name in ("one", "other")
    ]
    for row in rows:
        assert row["queries"] == len(QUERIES) and row["server_waits"] is None
        assert 0 < row["p50_ms"] <= row["p95_ms"] and row["total_p50_ms"] >= row["p50_ms"]
        assert row["ratio"] > 0
    assert all(row["ratio"] == 1.0 for row in rows if ", baseline:" in row["benchmark"])


@pytest.mark.postgres
def test_a_postgresql_index_counts_its_waits_for_the_server(
    tmp_path, notes, fast_model, postgres_index
):
    Indexer(postgres_index, model=fast_model).index_folder(notes)
    rows = query_rows(postgres_index, QUERIES, modes=("contextual", "lexical", "hybrid"))
    waits = {row["mode"]: row["server_waits"] for row in rows}
    assert rows[0]["benchmark"].startswith("contextual, index: postgresql ")
    # the BEGIN with the manifest and the searches (their hits' rows and content keys
    # with them), then what the hits show: their copies and the match signal's counts and
    # holders (the COMMIT is sent, not waited for); lexical adds its hits' cosines, hybrid
    # may add each side's exact scores of the other's candidates
    assert waits["contextual"] == 2 and waits["lexical"] == 3 and 2 <= waits["hybrid"] <= 3
    assert "ratio" not in rows[0]  # no baseline, no ratio

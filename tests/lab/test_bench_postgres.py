"""`ctxsearch lab bench --only postgres`: what it needs before it connects, and its
rows of the graph's forms (a real PostgreSQL, a small index, each form built through the
store as `index --quantize` does)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from lab.bench_postgres import fill, form_rows, truths
from search.cli import cli


def test_the_postgres_section_needs_queries_and_texts_or_vectors(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "otters"}\n')
    runner = CliRunner()
    url = "postgresql+psycopg://nobody@127.0.0.1:1/none"  # never reached
    arguments = ["lab", "bench", "--only", "postgres", "--postgres", url]
    alone = runner.invoke(cli, [*arguments, "--queries", str(queries)])
    assert alone.exit_code == 2
    assert "needs --queries and --texts (BEIR) or --vectors (.npy)" in alone.output
    assert "Traceback" not in alone.output


@pytest.mark.postgres
def test_each_form_has_its_row_with_ratios_against_float32(postgres_index):
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((1500, 64)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    probes = matrix[:20] + 0.1 * rng.standard_normal((20, 64)).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    fill(postgres_index, matrix)
    rows = {
        row["quantize"]: row
        for row in form_rows(postgres_index, probes, truths(matrix, probes, 10), 10)
    }
    assert set(rows) == {"none", "halfvec", "binary"}
    assert rows["none"]["ratio"] == 1.0 and rows["none"]["bytes_ratio"] == 1.0
    # the graph over halfvec or bits is smaller than over float32; the table is the same
    assert rows["binary"]["bytes_per_vector"] < rows["halfvec"]["bytes_per_vector"]
    assert rows["halfvec"]["bytes_per_vector"] < rows["none"]["bytes_per_vector"]
    assert all(
        0 <= row["recall@10"] <= 1 and row["p99_ms"] >= row["p50_ms"] for row in rows.values()
    )
    assert rows["none"]["recall@10"] >= 0.9


@pytest.mark.postgres
def test_the_fill_commits_its_rows_then_builds_the_graph_it_is_asked_for(postgres_index):
    from indexer.store.backends import open_store
    from indexer.store.postgres.vectors import graph_form
    from lab.bench_postgres import prewarm

    matrix = np.random.default_rng(3).standard_normal((300, 16)).astype(np.float32)
    lines: list[str] = []
    _, folders = fill(postgres_index, matrix, lines.append, quantize="halfvec")
    assert len(folders) == 300 and "300 rows committed" in lines[0] and "(halfvec)" in lines[1]
    store = open_store(postgres_index)
    try:
        with store.engine.connect() as connection:
            assert graph_form(connection, "static") == "halfvec"
        generation = store.manifest.generation
    finally:
        store.close()
    assert generation == 2  # the rows' publish, then the graph's
    assert prewarm(postgres_index) > 0  # the table's pages and the graph's

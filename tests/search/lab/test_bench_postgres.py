"""The postgres bench's rows of the graph's forms (`bench --only postgres`): a real
PostgreSQL, a small index, each form built through the store as `index --quantize` does."""

from __future__ import annotations

import numpy as np
import pytest

from search.lab.bench_postgres import fill, form_rows, truths

pytestmark = pytest.mark.postgres


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

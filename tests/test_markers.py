"""The markers select what they say: the quick loop's expression leaves out every test that
starts PostgreSQL, a Ray cluster or Chromium, and `lab` marks the lab's tests (collected
only: nothing is started)."""

import json
import os
import subprocess
import sys

from _pytest.mark.expression import Expression

from tests.conftest import ROOT

QUICK = "not postgres and not ray and not browser and not lab and not slow and not soak"
HEAVY_FIXTURES = {"postgres_server", "postgres_index", "ray_cluster", "browser", "page"}


def collected(tmp_path) -> list[dict]:
    """Every test in tests/ (`pytest --collect-only`, once): id, fixture closure,
    parameters and marker names."""
    out = tmp_path / "collected.jsonl"
    subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "tests.support.selection_probe", "-m", "slow or not slow", "tests"],
        cwd=ROOT, env={**os.environ, "SELECTION_PROBE_OUT": str(out)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [json.loads(line) for line in out.read_text().splitlines()]


def selected(tests: list[dict], expression: str) -> list[dict]:
    """What `pytest -m expression` selects of `tests`, by pytest's own expression rules."""
    compiled = Expression.compile(expression)
    return [test for test in tests if compiled.evaluate(set(test["markers"]).__contains__)]


def test_the_quick_expression_leaves_out_postgres_ray_and_the_browser(tmp_path):
    everything = collected(tmp_path)
    quick = selected(everything, QUICK)
    assert 0 < len(quick) < len(everything)
    for test in quick:
        assert not HEAVY_FIXTURES & set(test["fixtures"]), test["id"]
        assert test["params"].get("any_index") != "postgres", test["id"]
        assert "/test_postgres.py::" not in test["id"] and "/test_page.py::" not in test["id"]
    quick_ids = {test["id"] for test in quick}
    # and what is left out is exactly the heavy tests and the slow and soak ones
    heavy = [
        test["id"]
        for test in everything
        if HEAVY_FIXTURES & set(test["fixtures"])
        or test["params"].get("any_index") == "postgres"
        or "/test_page.py::" in test["id"]
    ]
    assert heavy and not quick_ids & set(heavy)
    assert any("[postgres]" in name for name in heavy)
    assert any("test_ray.py::" in name for name in heavy)
    # `-m 'not lab'` leaves out tests/lab/ and nothing else (the lab can have a gate of its own)
    lab = {test["id"] for test in selected(everything, "lab")}
    assert lab and lab == {test["id"] for test in everything if test["id"].startswith("tests/lab/")}

"""The evaluation report: Markdown, HTML and PNG plots from an eval result dict."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from lab.report import human_bytes, human_seconds, write_report
from tests.conftest import ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

POOLING = ("contextual", "cls", "max", "mean-last2", "mean-last4")


def _row(ndcg: float, kind: str, **extra: object) -> dict:
    """One method's numbers, the other metrics derived from nDCG@10 so the data looks real."""
    return {
        "ndcg@10": ndcg,
        "mrr@10": round(ndcg * 0.93, 4),
        "recall@100": round(min(1.0, ndcg + 0.27), 4),
        "map@100": round(ndcg * 0.88, 4),
        "docs_per_second": 310.0,
        "query_ms": 6.2,
        "index_bytes": 7_960_000,
        "kind": kind,
        **extra,
    }


def fake_result() -> dict:
    """A result shaped like `ctxsearch eval --json` for MiniLM-L6 on SciFact (made-up numbers)."""
    methods = {
        "static": _row(0.4318, "static", docs_per_second=9000.0, query_ms=0.5),
        "contextual": _row(0.6461, "pooling"),
        "cls": _row(0.5523, "pooling"),
        "max": _row(0.5871, "pooling"),
        "mean-last2": _row(0.6512, "pooling"),
        "mean-last4": _row(0.6389, "pooling"),
        "bm25": _row(0.6650, "lexical", docs_per_second=25000.0, query_ms=1.4, index_bytes=None),
    }
    layer_scores = (0.3105, 0.4021, 0.4633, 0.5210, 0.5802, 0.6217, 0.6461)
    for layer, score in enumerate(layer_scores):
        methods[f"layer-{layer}"] = _row(score, "layer", layer=layer)
    return {
        "dataset": "scifact",
        "split": "test",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "documents": 5183,
        "queries": 300,
        "wall_seconds": 412.3,
        "truncated_documents": 1234,
        "max_tokens": 256,
        "methods": methods,
    }


def _assert_png(path: Path) -> None:
    from matplotlib.image import imread

    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert 10_000 < len(data) < 2_000_000
    pixels = imread(path)
    assert pixels.ndim == 3 and pixels.shape[2] in (3, 4)
    assert pixels.shape[1] == 1000  # the width the plots are laid out for
    assert 300 <= pixels.shape[0] <= 1200


def _table_rows(markdown: str) -> dict[str, str]:
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    return {line.split("|")[1].strip().strip("*"): line for line in rows[1:]}


def test_full_report(tmp_path):
    out = tmp_path / "new" / "report"
    path = write_report(fake_result(), out)

    assert path == out / "report.md"
    for name in ("report.md", "report.html", "methods.png", "layers.png"):
        assert (out / name).is_file()
    _assert_png(out / "methods.png")
    _assert_png(out / "layers.png")

    markdown = path.read_text()
    assert "scifact" in markdown and "test" in markdown and "all-MiniLM-L6-v2" in markdown
    assert "](methods.png)" in markdown and "](layers.png)" in markdown
    assert "5,183 documents" in markdown and "300 queries" in markdown
    assert "6 min 52 s" in markdown and "1,234 documents truncated (24%) to 256 tokens" in markdown

    rows = _table_rows(markdown)
    assert set(rows) == set(fake_result()["methods"])
    assert "| **bm25** | **0.665** |" in rows["bm25"]
    assert [name for name, row in rows.items() if "**" in row] == ["bm25"]
    assert "| static | 0.432 | 0.402 | 0.702 | 0.380 | 9,000 | 0.50 | 7.6 MB |" in markdown
    assert rows["bm25"].rstrip().endswith("| \u2014 |")

    # Non-layer methods by nDCG@10, best first; then the layers in order.
    order = list(rows)
    assert order[:7] == ["bm25", "mean-last2", "contextual", "mean-last4", "max", "cls", "static"]
    assert order[7:] == [f"layer-{i}" for i in range(7)]

    assert "+0.214 absolute, +49.6% relative" in markdown
    assert "best layer is the last one, layer 6 (nDCG@10 0.646); layer 0 scores 0.310." in markdown

    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert 'src="methods.png"' in page and 'src="layers.png"' in page
    assert "<strong>bm25</strong>" in page and "<td>mean-last2</td>" in page


def test_no_layer_methods_means_no_layer_plot(tmp_path):
    result = fake_result()
    result["methods"] = {k: v for k, v in result["methods"].items() if v["kind"] != "layer"}
    (tmp_path / "layers.png").write_bytes(PNG_MAGIC)  # left over from an earlier run

    markdown = write_report(result, tmp_path).read_text()

    assert not (tmp_path / "layers.png").exists()
    assert "layers.png" not in markdown
    assert "layers.png" not in (tmp_path / "report.html").read_text()
    assert "best layer" not in markdown
    _assert_png(tmp_path / "methods.png")


def test_missing_optional_keys(tmp_path):
    result = {
        "dataset": "nfcorpus",
        "methods": {
            "static": {"ndcg@10": 0.25, "docs_per_second": None, "query_ms": None},
            "contextual": {"ndcg@10": 0.31, "recall@100": 0.5, "index_bytes": None},
            "layer-0": {"ndcg@10": 0.2},
            "layer-1": {"ndcg@10": 0.28, "kind": "layer", "layer": 1},
        },
    }
    markdown = write_report(result, tmp_path).read_text()

    assert markdown.startswith("# Retrieval evaluation: nfcorpus\n")
    assert "Setup:" not in markdown
    rows = _table_rows(markdown)
    assert list(rows) == ["contextual", "static", "layer-0", "layer-1"]
    assert rows["static"].count("\u2014") == 6
    assert "**contextual**" in rows["contextual"]
    assert "+0.060 absolute, +24.0% relative" in markdown
    assert "(`static`)" not in markdown  # a method without a kind is not called a pooling
    _assert_png(tmp_path / "methods.png")
    _assert_png(tmp_path / "layers.png")


def test_best_layer_in_the_middle(tmp_path):
    result = fake_result()
    result["methods"]["layer-4"]["ndcg@10"] = 0.7
    markdown = write_report(result, tmp_path).read_text()
    assert (
        "The best layer is layer 4 (nDCG@10 0.700), ahead of the last one, layer 6 (0.646); "
        "layer 0 scores 0.310." in markdown
    )
    assert "| **layer-4** | **0.700** |" in markdown


def test_input_is_not_modified(tmp_path):
    result = fake_result()
    before = copy.deepcopy(result)
    write_report(result, tmp_path)
    assert result == before


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (None, "\u2014"),
        (512, "512 B"),
        (2048, "2.0 KB"),
        (7_960_000, "7.6 MB"),
        (3 << 30, "3.0 GB"),
    ],
)
def test_human_bytes(size, text):
    assert human_bytes(size) == text


@pytest.mark.parametrize(
    ("seconds", "text"), [(41.24, "41.2 s"), (412.3, "6 min 52 s"), (3725, "1 h 02 min")]
)
def test_human_seconds(seconds, text):
    assert human_seconds(seconds) == text


def test_import_does_not_load_matplotlib():
    code = "import sys, lab.report; print('matplotlib' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


def _with_classic_methods() -> dict:
    """fake_result plus the classic static rows, as `eval` gives them (made-up numbers)."""
    result = fake_result()
    result["methods"] |= {
        "glove": _row(0.115, "static", docs_per_second=2400.0, setup_seconds=None),
        "word2vec": _row(0.301, "static", docs_per_second=3100.0, setup_seconds=63.0),
        "fasttext": _row(0.288, "static", docs_per_second=900.0, setup_seconds=95.0),
        "model2vec": _row(0.398, "static", docs_per_second=5200.0, setup_seconds=120.0),
        "hybrid-linear": _row(0.731, "hybrid", docs_per_second=250.0),
    }
    return result


def test_static_vs_contextual_figure_groups_every_method(tmp_path):
    from lab.report import split_methods, static_vs_contextual_groups

    result = _with_classic_methods()
    markdown = write_report(result, tmp_path).read_text()

    _assert_png(tmp_path / "static-vs-contextual.png")
    assert "](static-vs-contextual.png)" in markdown
    assert 'src="static-vs-contextual.png"' in (tmp_path / "report.html").read_text()
    groups = dict(static_vs_contextual_groups(*split_methods(result["methods"])))
    assert [m.name for m in groups["static"]] == [
        "glove",
        "word2vec",
        "fasttext",
        "static",
        "model2vec",
    ]
    contextual = [m.name for m in groups["contextual"]]
    assert contextual[0] == "contextual" and contextual[-1] == "hybrid-linear"
    assert [name for name in contextual if name.startswith("layer-")] == [
        f"layer-{i}" for i in range(7)
    ]
    assert [m.name for m in groups["lexical"]] == ["bm25"]
    # The text names the classic rows and weighs the best static method against contextual.
    assert "(`glove`, `word2vec`, `fasttext`, `model2vec`) are static too" in markdown
    assert (
        "The best static method, static, reaches 0.432 nDCG@10 against 0.646 for contextual, "
        "and encodes 29 times as many documents per second." in markdown
    )


def test_no_static_vs_contextual_figure_without_both_sides(tmp_path):
    result = _with_classic_methods()
    result["methods"] = {k: v for k, v in result["methods"].items() if v["kind"] == "static"}
    (tmp_path / "static-vs-contextual.png").write_bytes(PNG_MAGIC)  # from an earlier run

    markdown = write_report(result, tmp_path).read_text()

    assert not (tmp_path / "static-vs-contextual.png").exists()
    assert "static-vs-contextual.png" not in markdown

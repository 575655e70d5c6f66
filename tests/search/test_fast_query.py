"""Torch-free query encoders: the ONNX export and the saved token table agree with torch,
a real `ctxsearch query` process never imports torch (nor SQLAlchemy, for a folder
index), and torch stands in when it must."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from indexer.encoders.export import (
    MIN_COSINE,
    PARITY_TEXTS,
    ExportFailed,
    export_query_model,
    failure_file,
    parity,
    previous_failure,
)
from indexer.encoders.onnx import OnnxContextualEncoder, query_model_dir, read_info
from indexer.encoders.transformer import ContextualEncoder
from indexer.errors import ModelNotAvailable
from search.engine import Searcher
from tests.conftest import SHARED_EVAL

ROOT = Path(__file__).resolve().parents[2]
QUERY = (sys.executable, "-X", "importtime", "-m", "search", "query")
HEAVY = ("torch", "transformers", "sentence_transformers")


@pytest.fixture(scope="module")
def exported(model, tmp_path_factory) -> Path:
    """The default model exported into a cache of this module's own."""
    return export_query_model(model, tmp_path_factory.mktemp("cache"))


def test_the_export_agrees_with_torch_on_the_fixed_texts(model, exported):
    info = read_info(exported)
    assert info["fingerprint"] == model.fingerprint
    assert min(info["parity_min_cosine"].values()) >= MIN_COSINE
    contextual, static = parity(model, exported, PARITY_TEXTS)
    assert contextual >= 0.9999 and static >= 0.9999


@pytest.mark.parametrize("pooling", ["mean", "cls", "max", "mean-last4"])
def test_every_pooling_agrees_with_torch(model, exported, pooling):
    texts = list(PARITY_TEXTS[:8])
    expected = ContextualEncoder(model, pooling).encode(texts)
    actual = OnnxContextualEncoder(exported, pooling).encode(texts)
    assert (expected * actual).sum(axis=1).min() >= 0.9999


def test_a_second_export_reuses_the_first(model, exported):
    before = (exported / "model.onnx").stat().st_mtime_ns
    assert export_query_model(model, exported.parent) == exported
    assert (exported / "model.onnx").stat().st_mtime_ns == before


def _query_process(index: Path, mode: str, env: dict | None = None) -> tuple[dict, str]:
    """A real `python -m search query` process: its JSON, and the modules it imported."""
    completed = subprocess.run(
        [*QUERY, "tower crane safety", "--index", str(index), "--mode", mode, "-k", "3", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    return json.loads(completed.stdout), completed.stderr


def _imported(importtime: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in importtime.splitlines() if "|" in line}


@pytest.mark.parametrize("mode", ["hybrid", "contextual", "static"])
def test_a_query_process_never_imports_torch(sample_index, mode):
    payload, importtime = _query_process(sample_index, mode)
    assert payload["results"]
    assert "torch" not in payload["query_encoder"].values()
    assert not _imported(importtime) & set(HEAVY)
    assert "sqlalchemy" not in _imported(importtime)  # a folder index reads with sqlite3
    assert not _imported(importtime) & {"pydantic", "fastapi"}  # the HTTP model of a request
    if mode != "static":
        assert payload["query_encoder"]["contextual"] == "onnx"
        assert "onnxruntime" in _imported(importtime)


def test_fast_and_torch_query_encoders_find_the_same_hits(sample_index):
    queries = ["where do I open a savings account", "bank erosion after a flood", "cranes"]
    with Searcher(sample_index) as fast, Searcher(sample_index, query_encoder="torch") as ref:
        for mode in ("hybrid", "contextual", "static"):
            for text in queries:
                ours, theirs = fast.search(text, k=5, mode=mode), ref.search(text, k=5, mode=mode)
                assert set(ours.query_encoder.values()) <= {"onnx", "table"}
                assert set(theirs.query_encoder.values()) == {"torch"}
                assert [hit.chunk_id for hit in ours.results] == [
                    hit.chunk_id for hit in theirs.results
                ]
                assert np.allclose(
                    [hit.score for hit in ours.results],
                    [hit.score for hit in theirs.results],
                    atol=1e-3,
                )


@pytest.fixture(scope="module")
def tiny_index(tiny_model_dir, tmp_path_factory) -> Path:
    """The sample corpus indexed with a small random BERT (its export takes a second)."""
    from indexer import Indexer
    from tests.conftest import SAMPLE_CORPUS

    directory = tmp_path_factory.mktemp("tiny") / "index"
    Indexer(directory, model=str(tiny_model_dir)).index_folder(SAMPLE_CORPUS)
    return directory


def test_without_an_export_torch_stands_in_and_exports_for_next_time(
    tiny_index, tiny_model_dir, monkeypatch, tmp_path
):
    from indexer.encoders.loading import load_model

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with (
        Searcher(tiny_index, query_encoder="onnx") as searcher,
        pytest.raises(ModelNotAvailable, match="no ONNX export"),
    ):
        searcher.search("tower crane", mode="contextual")
    with Searcher(tiny_index) as searcher:
        response = searcher.search("tower crane", mode="contextual")
    assert response.query_encoder == {"contextual": "torch"}
    assert "no ONNX export" in response.query_encoder_note
    fingerprint = load_model(str(tiny_model_dir)).fingerprint
    assert read_info(query_model_dir(fingerprint)) is not None
    with Searcher(tiny_index) as searcher:
        again = searcher.search("tower crane", mode="contextual")
    assert again.query_encoder == {"contextual": "onnx"}
    assert again.query_encoder_note == ""
    assert [hit.chunk_id for hit in again.results] == [hit.chunk_id for hit in response.results]


def test_a_failed_export_is_not_tried_again_on_every_query(
    tiny_index, tiny_model_dir, monkeypatch, tmp_path
):
    from indexer.encoders.loading import load_model

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    loaded = load_model(str(tiny_model_dir))
    folder = query_model_dir(loaded.fingerprint)
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the export's folder goes makes it fail for real")
    with pytest.raises(ExportFailed):
        export_query_model(loaded)
    assert previous_failure(loaded.fingerprint) is not None
    assert failure_file(folder).exists()
    folder.unlink()
    with Searcher(tiny_index) as searcher:
        response = searcher.search("tower crane", mode="contextual")
    assert response.query_encoder == {"contextual": "torch"}
    assert not folder.exists()  # not tried again


def test_cli_query_encoder_onnx_without_an_export_fails_in_one_line(tiny_index, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    completed = subprocess.run(
        [*QUERY, "cranes", "--index", str(tiny_index), "--query-encoder", "onnx"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert completed.returncode == 1
    errors = [line for line in completed.stderr.splitlines() if "import time:" not in line]
    assert len(errors) == 1 and "no ONNX export" in errors[0]


def test_both_stores_answer_with_the_torch_free_encoders(any_index, notes):
    from indexer import Indexer

    summary = Indexer(any_index).index_folder(notes)
    assert summary.query_export == "ready"
    with (
        Searcher(any_index, one_shot=True) as fast,
        Searcher(any_index, query_encoder="torch") as ref,
    ):
        for mode in ("hybrid", "static"):
            ours = fast.search("savings account at the bank", k=3, mode=mode)
            theirs = ref.search("savings account at the bank", k=3, mode=mode)
            assert "torch" not in ours.query_encoder.values()
            assert [hit.path for hit in ours.results] == [hit.path for hit in theirs.results]
            assert ours.results[0].path.endswith("money.txt")


def test_index_says_in_one_line_when_queries_will_need_torch(
    tiny_model_dir, notes, monkeypatch, tmp_path
):
    from click.testing import CliRunner

    from indexer.encoders.loading import load_model
    from search.cli import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = query_model_dir(load_model(str(tiny_model_dir)).fingerprint)
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the export's folder goes makes it fail for real")
    arguments = ["index", str(notes), "--index", str(tmp_path / "ix"), "--quiet"]
    result = CliRunner().invoke(cli, [*arguments, "--model", str(tiny_model_dir), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["query_export"].startswith("the ONNX export")
    notes_line = [line for line in result.stderr.splitlines() if "torch (slower)" in line]
    assert len(notes_line) == 1 and "ONNX export" in notes_line[0]


@pytest.mark.skipif(not (SHARED_EVAL / "scifact").exists(), reason="no SciFact data")
def test_the_scifact_queries_encode_alike_with_onnx_and_torch(model, exported):
    queries = [
        json.loads(line)["text"]
        for line in (SHARED_EVAL / "scifact" / "queries.jsonl").read_text().splitlines()[:300]
    ]
    expected = ContextualEncoder(model).encode(queries)
    actual = OnnxContextualEncoder(exported).encode(queries)
    assert (expected * actual).sum(axis=1).min() >= 0.9999


def test_the_two_query_encoders_of_an_export_load_its_tokenizer_once(exported, monkeypatch):
    # The contextual encoder (cut to the window) and the static one (not cut) each
    # loaded tokenizer.json for itself: two loads in every process that queries both.
    import tokenizers

    import indexer.encoders.onnx as onnx
    from indexer.encoders.onnx import TableStaticEncoder

    loads: list[str] = []
    real = tokenizers.Tokenizer

    class Counting:
        @staticmethod
        def from_file(path: str):
            loads.append(path)
            return real.from_file(path)

    monkeypatch.setattr(tokenizers, "Tokenizer", Counting)
    onnx._tokenizer.cache_clear()
    try:
        OnnxContextualEncoder(exported)
        TableStaticEncoder(exported)
    finally:
        onnx._tokenizer.cache_clear()
    assert loads == [str(exported / "tokenizer.json")]


def test_the_contextual_query_tokens_are_cut_to_the_window_as_the_tokenizer_cuts(exported):
    from tokenizers import Tokenizer

    encoder = OnnxContextualEncoder(exported)
    cut = Tokenizer.from_file(str(exported / "tokenizer.json"))
    cut.no_padding()
    cut.enable_truncation(max_length=encoder.max_tokens)
    texts = [
        *PARITY_TEXTS,
        "a " * (encoder.max_tokens - 2),
        "a " * (encoder.max_tokens - 1),
        "word " * 1000,
        "é" * 600,
    ]
    batch = encoder.tokenize(texts)
    for row, expected in enumerate(cut.encode_batch(texts, add_special_tokens=True)):
        count = len(expected.ids)
        assert batch["input_ids"][row, :count].tolist() == expected.ids
        assert batch["token_type_ids"][row, :count].tolist() == expected.type_ids
        assert batch["attention_mask"][row].sum() == count

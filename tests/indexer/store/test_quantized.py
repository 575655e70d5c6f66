"""Quantized vector spaces (`index --quantize int8|binary|auto`): codes in memory, float32
vectors memory-mapped from disk, candidates re-scored exactly.

Real FAISS, real SQLite index folders, the hashed-words test encoder: a quantized index
must answer with the very hits (and scores) of a float32 one, through a delta segment, a
change of setting (a rebuild of the spaces), verify and repair.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.runs.repair import repair_index
from indexer.store.backends import open_store, verify_target
from indexer.store.local.segments import Segments
from search.cli import cli
from tests.support.crash_harness import mutate_corpus, state, write_corpus


def build(index_dir, folder, model, quantize=None):
    return Indexer(index_dir, model=model, quantize=quantize).index_folder(folder)


def structures(index_dir) -> dict[str, Segments]:
    store = open_store(index_dir)
    try:
        return {name: Segments.of(store.manifest, name) for name in store.manifest.spaces}
    finally:
        store.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("quantized") / "docs")


@pytest.fixture(scope="module")
def float32_index(tmp_path_factory, corpus, fast_model):
    index_dir = tmp_path_factory.mktemp("float32") / "ix"
    build(index_dir, corpus, fast_model)
    return index_dir


@pytest.mark.parametrize("quantize", ["int8", "binary"])
def test_a_quantized_index_answers_with_the_hits_of_float32(
    tmp_path, corpus, float32_index, fast_model, quantize
):
    index_dir = tmp_path / "ix"
    build(index_dir, corpus, fast_model, quantize)
    assert {s.structure for s in structures(index_dir).values()} == {f"flat-{quantize}"}
    assert state(index_dir) == state(float32_index)  # same hits, same scores (4 places)
    assert verify_target(index_dir).consistent


def test_the_float32_vectors_are_memory_mapped_not_loaded(tmp_path, corpus, fast_model):
    index_dir = tmp_path / "ix"
    build(index_dir, corpus, fast_model, "int8")
    store = open_store(index_dir)
    try:
        with store.snapshot() as snapshot:
            for space in snapshot.spaces.values():
                assert isinstance(space.base.exact._base_rows, np.memmap)
    finally:
        store.close()


def test_an_incremental_edit_adds_a_delta_to_a_quantized_space(tmp_path, corpus, fast_model):
    folder = shutil.copytree(corpus, tmp_path / "docs")
    quantized, reference = tmp_path / "q", tmp_path / "f"
    build(quantized, folder, fast_model, "int8")
    build(reference, folder, fast_model)
    mutate_corpus(folder)
    build(quantized, folder, fast_model)  # keeps the index's own setting
    build(reference, folder, fast_model)
    segments = structures(quantized)
    assert all(s.deltas and s.structure == "flat-int8" for s in segments.values()), segments
    assert state(quantized) == state(reference)
    assert verify_target(quantized).consistent


def test_changing_the_setting_rebuilds_the_spaces(tmp_path, corpus, fast_model, float32_index):
    index_dir = tmp_path / "ix"
    build(index_dir, corpus, fast_model)
    build(index_dir, corpus, fast_model, "binary")  # nothing changed but the setting
    assert {s.structure for s in structures(index_dir).values()} == {"flat-binary"}
    assert state(index_dir) == state(float32_index)
    build(index_dir, corpus, fast_model, "none")
    assert {s.structure for s in structures(index_dir).values()} == {"flat"}
    assert not list(index_dir.glob("*.exact.npy"))  # swept with the quantized bases
    assert state(index_dir) == state(float32_index)


def test_a_missing_vectors_file_is_reported_and_repaired(tmp_path, corpus, fast_model):
    index_dir = tmp_path / "ix"
    build(index_dir, corpus, fast_model, "int8")
    next(index_dir.glob("static-*.exact.npy")).unlink()
    report = verify_target(index_dir)
    assert not report.consistent and "float32 vectors file" in " ".join(report.problems)
    repair_index(index_dir)
    assert verify_target(index_dir).consistent
    assert {s.structure for s in structures(index_dir).values()} == {"flat-int8"}


def test_info_shows_the_quantization(tmp_path, corpus, fast_model):
    index_dir = tmp_path / "ix"
    build(index_dir, corpus, fast_model, "int8")
    runner = CliRunner()
    shown = json.loads(runner.invoke(cli, ["info", "--index", str(index_dir), "--json"]).output)
    assert shown["quantization"] == "int8" and shown["manifest"]["quantize"] == "int8"
    assert shown["manifest"]["format"] == 3  # code from before quantizing refuses to read it
    text = runner.invoke(cli, ["info", "--index", str(index_dir)]).output
    assert "quantization: int8" in text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--quantize", "int4"], "Invalid value for '--quantize'"),
        (
            ["--quantize", "int8", "--index", "postgresql+psycopg://nobody@127.0.0.1:1/none"],
            "--quantize int8: a PostgreSQL index quantizes as none, halfvec, binary or auto",
        ),
        (["--quantize", "halfvec"], "--quantize halfvec: a folder index quantizes as none, "),
    ],
)
def test_a_bad_quantization_is_a_usage_error(tmp_path, corpus, fast_model, arguments, message):
    command = ["index", str(corpus), "--model", fast_model, "--quiet", *arguments]
    if "--index" not in arguments:
        command += ["--index", str(tmp_path / "ix")]
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "ix").exists()


def test_auto_quantizes_from_its_threshold():
    from indexer.store.index_types import quantization_for, space_structure

    assert quantization_for("auto", 99_999) == "none"
    assert quantization_for("auto", 100_000) == "int8"
    assert quantization_for("auto", 100_000, "pgvector") == "halfvec"
    assert quantization_for("auto", 99_999, "pgvector") == "none"
    assert space_structure("auto", "auto", 1_000_000) == "hnsw-int8"
    assert space_structure("flat", "binary", 0) == "flat"  # nothing to train codes on


@pytest.mark.parametrize("structure", ["hnsw-int8", "hnsw-binary"])
def test_an_id_removed_and_added_again_in_a_quantized_graph_is_scored_by_its_new_vector(
    structure,
):
    """A graph keeps a removed node (a tombstone), so replaying deltas adds the id's new
    vector beside its old one: re-scoring must read the new one."""
    from indexer.store.local.vectors import VectorSpace

    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((30, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    space = VectorSpace.built(16, structure, np.arange(1, 21), vectors[:20])
    space.add(np.array([21]), vectors[20:21])
    space.remove(np.array([21]))
    space.add(np.array([21]), vectors[21:22])
    assert np.array_equal(space.vectors([21])[21], vectors[21])
    [[(best, score)]] = space.ranked(vectors[21:22], 1)
    assert (best, round(score, 5)) == (21, 1.0)

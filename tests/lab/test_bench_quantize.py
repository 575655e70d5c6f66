"""`ctxsearch bench --only quantize`: float32 against quantized spaces on a vectors file."""

from __future__ import annotations

import json
import random

import numpy as np
from click.testing import CliRunner

from indexer.encoders.hashed import HashedWordsEncoder
from search.cli import cli
from tests.support.crash_harness import WORDS


def test_the_quantize_section_measures_every_form_against_exact_float32(tmp_path):
    generator = random.Random(0)
    texts = [" ".join(generator.choices(WORDS, k=12)) for _ in range(1600)]
    path = tmp_path / "vectors.npy"
    np.save(path, HashedWordsEncoder("static").encode(texts).astype(np.float32))
    result = CliRunner().invoke(
        cli, ["lab", "bench", "--only", "quantize", "--vectors", str(path), "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = {row["benchmark"]: row for row in json.loads(result.output)["rows"]}
    assert rows["quantize flat @ 1,100"]["recall@10"] >= 0.99  # ties may swap places
    assert all(row["ratio"] > 0 and "bytes_per_vector" in row for row in rows.values())
    structures = {row["structure"] for row in rows.values()}
    assert structures == {"flat", "hnsw", "flat-int8", "hnsw-int8", "flat-binary", "hnsw-binary"}
    # int8 codes re-scored from float32 find what exact search finds
    assert rows["quantize flat-int8 @ 1,100"]["recall@10"] >= 0.95


def test_the_quantize_section_needs_a_vectors_file(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(cli, ["lab", "bench", "--only", "quantize"])
    assert missing.exit_code == 2 and "needs --vectors" in missing.output
    text = tmp_path / "notes.npy"
    text.write_text("not vectors")
    wrong = runner.invoke(cli, ["lab", "bench", "--only", "quantize", "--vectors", str(text)])
    assert wrong.exit_code == 2 and "not a .npy or FAISS file" in wrong.output
    assert "Traceback" not in wrong.output


def test_quantize_forms_runs_only_the_named_forms(tmp_path):
    generator = random.Random(1)
    texts = [" ".join(generator.choices(WORDS, k=12)) for _ in range(1600)]
    path = tmp_path / "vectors.npy"
    np.save(path, HashedWordsEncoder("static").encode(texts).astype(np.float32))
    arguments = ["lab", "bench", "--only", "quantize", "--vectors", str(path), "--json"]
    result = CliRunner().invoke(cli, [*arguments, "--quantize-forms", "hnsw"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    # one build, measured at each efSearch
    assert {row["structure"] for row in rows} == {"hnsw"}
    assert sorted(row["ef_search"] for row in rows) == [64, 128, 256]
    wrong = CliRunner().invoke(cli, [*arguments, "--quantize-forms", "hnsw,int4"])
    assert wrong.exit_code == 2 and "unknown form 'int4'" in wrong.output
    assert "Traceback" not in wrong.output

"""`hashed-words`, the test encoder: real arithmetic, deterministic, torch-free, selectable
like any model and never the default."""

import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from indexer import Indexer, open_index
from indexer.encoders.hashed import DIM, HASHED_MODEL, HashedWordsEncoder
from indexer.encoders.loading import DEFAULT_MODEL, canonical_model_name, load_model
from indexer.errors import InvalidSettings
from search import Searcher
from search.cli import cli
from tests.conftest import ROOT


@pytest.mark.parametrize("space", ["contextual", "static"])
def test_vectors_are_unit_length_deterministic_and_near_when_words_are_shared(space):
    encoder = HashedWordsEncoder(space)
    texts = ["The river bank flooded.", "the RIVER bank", "Savings account interest", ""]
    vectors = encoder.encode(texts)
    assert vectors.shape == (4, DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0)
    assert not vectors[3].any()  # a text without words is the zero vector
    assert np.array_equal(vectors, HashedWordsEncoder(space).encode(texts))
    similarities = vectors[1] @ vectors[:3].T
    assert similarities[0] > similarities[2]  # shared words are nearer than none


def test_word_order_counts_in_the_contextual_space_only():
    pair = ["dog bites man", "man bites dog"]
    static = HashedWordsEncoder("static").encode(pair)
    contextual = HashedWordsEncoder("contextual").encode(pair)
    assert np.isclose(static[0] @ static[1], 1.0)
    assert contextual[0] @ contextual[1] < 0.99


def test_a_reserved_name_that_is_never_the_default(tmp_path, monkeypatch):
    (tmp_path / HASHED_MODEL).mkdir()  # a folder of that name does not take the name over
    monkeypatch.chdir(tmp_path)
    assert canonical_model_name(HASHED_MODEL) == HASHED_MODEL
    assert canonical_model_name(None) == DEFAULT_MODEL
    assert load_model(HASHED_MODEL).name == HASHED_MODEL


def test_it_loads_indexes_and_queries_without_torch(tmp_path, notes):
    script = (
        "import sys\n"
        "from indexer import Indexer\n"
        "from search import Searcher\n"
        f"Indexer({str(tmp_path / 'ix')!r}, model={HASHED_MODEL!r}).index_folder({str(notes)!r})\n"
        f"hits = Searcher({str(tmp_path / 'ix')!r}).search('roses in winter', k=1).results\n"
        "print(hits[0].path)\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    path, imported = done.stdout.splitlines()
    assert path.endswith("roses.md")
    assert imported == "False False"


def test_the_manifest_records_it_and_queries_use_it(tmp_path, notes):
    result = CliRunner().invoke(
        cli, ["index", str(notes), "--index", str(tmp_path / "ix"), "--model", HASHED_MODEL]
    )
    assert result.exit_code == 0, result.output
    manifest = open_index(tmp_path / "ix").manifest
    assert (manifest.model, manifest.dim, manifest.static) == (HASHED_MODEL, DIM, "token")
    response = Searcher(tmp_path / "ix").search("savings at the bank", k=1, mode="contextual")
    assert response.results[0].path.endswith("money.txt")
    query = CliRunner().invoke(
        cli, ["query", "bank", "--index", str(tmp_path / "ix"), "--json", "-k", "1"]
    )
    assert query.exit_code == 0, query.output
    assert json.loads(query.stdout)["results"]
    # a real model is refused for it, like any other model
    again = CliRunner().invoke(
        cli, ["index", str(notes), "--index", str(tmp_path / "ix"), "--model", DEFAULT_MODEL]
    )
    assert again.exit_code != 0 and "hashed-words" in again.output


def test_it_keeps_only_the_token_static_space(tmp_path, notes):
    with pytest.raises(InvalidSettings, match="only the token static space"):
        Indexer(tmp_path / "ix", model=HASHED_MODEL, static="glove").index_folder(notes)

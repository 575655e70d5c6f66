"""An index's static space can hold GloVe or a distilled Model2Vec model, not only the
model's token table; query --mode static and compare use what the index chose."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from indexer import Indexer, ModelMismatch
from indexer.store.backends import open_store, verify_target
from search import Searcher
from search.cli import cli


@pytest.mark.parametrize("static", ["glove", "model2vec"])
def test_a_chosen_static_space_is_recorded_searched_and_compared(
    any_index, notes, tiny_model_dir, static, tmp_path, monkeypatch
):
    if static == "model2vec" and not isinstance(any_index, type(tmp_path)):
        pytest.skip("one distillation is enough: the store does not care what made a vector")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    summary = Indexer(any_index, model=str(tiny_model_dir), static=static).index_folder(notes)
    assert summary.added == 4
    store = open_store(any_index)
    manifest = store.manifest
    store.close()
    assert manifest.static == static and manifest.static_settings
    # GloVe's vectors have 50 dimensions; PCA keeps the tiny BERT's 32 for Model2Vec.
    assert manifest.dim_of("static") == {"glove": 50, "model2vec": 32}[static]
    assert verify_target(any_index).consistent
    with Searcher(any_index) as searcher:
        hits = searcher.search("savings account deposit money", k=2, mode="static").results
        assert hits[0].path.endswith("money.txt")
    compared = CliRunner().invoke(cli, ["compare", "river bank", "--index", str(any_index),
                                        "--json"])  # fmt: skip
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.stdout)["static"]
    with pytest.raises(ModelMismatch, match=f"keeps a {static} static space"):
        Indexer(any_index, static="token").index_folder(notes)
    (notes / "extra.md").write_text("Storm petrels feed far out at sea.")
    assert Indexer(any_index).index_folder(notes).added == 1  # later runs keep the choice
    repaired = CliRunner().invoke(cli, ["repair", "--index", str(any_index), "--json"])
    assert repaired.exit_code == 0 and json.loads(repaired.stdout)["consistent"]


def test_an_unknown_static_space_is_refused(tmp_path, notes):
    result = CliRunner().invoke(cli, ["index", str(notes), "--index", str(tmp_path / "ix"),
                                      "--static", "word2vec"])  # fmt: skip
    assert result.exit_code == 2 and "word2vec" in result.stderr
    assert not (tmp_path / "ix").exists()

"""One writer-settings value (`indexer.runs.write_settings`): each setting described once
(default, check, `index` option, help), taken whole by `Indexer` and made whole by the
`index` command from its options."""

from __future__ import annotations

import inspect
import json

import pytest
from click.testing import CliRunner

from indexer import WriteSettings, open_index
from indexer.errors import InvalidSettings
from indexer.runs.indexer import Indexer
from indexer.runs.write_settings import setting_fields
from search.cli import cli


def test_the_command_line_and_python_refuse_the_same_numbers(tmp_path):
    """`--ray-threads 0` and `--ray-workers 0` were refused by the command line and taken
    by `Indexer(...)` without Ray."""
    for name, flag in (("ray_threads", "--ray-threads"), ("ray_workers", "--ray-workers")):
        result = CliRunner().invoke(cli, ["index", str(tmp_path), flag, "0"])
        assert result.exit_code == 2 and "0 is not in the range x>=1" in result.output
        with pytest.raises(InvalidSettings, match="must be a whole number of at least 1, not 0"):
            Indexer(tmp_path / "ix", **{name: 0})
    assert not (tmp_path / "ix").exists()


def test_each_setting_is_one_field_the_writer_takes_whole():
    described = list(setting_fields())
    assert [name for name, _, _ in described][:3] == ["model", "pooling", "index_type"]
    assert all(setting.help and setting.noun for _, _, setting in described)
    # the writer and the command take one value, not an argument per setting
    taken = inspect.signature(Indexer.__init__).parameters
    assert list(taken) == ["self", "index", "settings", "options"]
    command = cli.commands["index"]
    callback = inspect.signature(inspect.unwrap(command.callback)).parameters
    assert "settings" in callback and not {name for name, _, _ in described} & set(callback)


def test_the_index_options_are_the_settings(tmp_path):
    options = {param.name: param for param in cli.commands["index"].params}
    for name, default, setting in setting_fields():
        if setting.option is None:
            assert name not in options
            continue
        option = options[name]
        assert option.opts == [setting.option] and option.default == default
        assert option.help.startswith(setting.help)
        assert option.envvar == (setting.variable.name if setting.variable else None)
        if setting.choices:
            assert tuple(option.type.choices) == setting.choices


def test_settings_as_one_value_or_as_keywords_alike(tmp_path):
    chosen = WriteSettings(model="hashed-words", batch_chunks=8, precision="fp32")
    assert Indexer(tmp_path, settings=chosen).settings == chosen
    assert Indexer(tmp_path, model="hashed-words", batch_chunks=8, precision="fp32").settings == (
        chosen
    )
    assert Indexer(tmp_path, settings=chosen, batch_chunks=4).settings.batch_chunks == 4
    assert WriteSettings(precision="auto").precision in ("fp32", "bf16")
    assert WriteSettings(ray="").ray is None  # an empty address (an empty variable): here
    with pytest.raises(TypeError, match="unexpected keyword argument 'modle'"):
        Indexer(tmp_path, modle="hashed-words")
    with pytest.raises(InvalidSettings, match="a folder index quantizes as"):
        Indexer(tmp_path / "ix", quantize="halfvec")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"pooling": "median"}, "unknown pooling 'median'"),
        ({"index_type": "ivf"}, "unknown index type 'ivf': choose auto, flat, hnsw"),
        ({"static": "word2vec"}, "unknown static space 'word2vec'"),
        ({"quantize": "int4"}, "unknown quantization 'int4'"),
        ({"precision": "int8"}, "unknown precision 'int8'"),
        ({"batch_chunks": 0}, "batch size must be a whole number of at least 1, not 0"),
        ({"batch_chunks": None}, "batch size must be a whole number of at least 1, not None"),
        ({"chunk_overlap": 2.5}, "chunk overlap must be a whole number of at least 0, not 2.5"),
        ({"chunk_overlap": True}, "chunk overlap must be a whole number of at least 0"),
    ],
)
def test_a_setting_that_cannot_work_is_refused_when_made(given, message):
    with pytest.raises(InvalidSettings, match=message):
        WriteSettings(**given)


def test_the_command_builds_the_settings_from_its_options_and_variables(
    tmp_path, notes, monkeypatch
):
    monkeypatch.setenv("CTXSEARCH_PRECISION", "fp32")
    args = ["index", str(notes), "--index", str(tmp_path / "ix"), "--model", "hashed-words"]
    result = CliRunner().invoke(cli, [*args, "--batch-chunks", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 4
    store = open_index(tmp_path / "ix")
    try:
        assert (store.manifest.model, store.manifest.precision) == ("hashed-words", "fp32")
    finally:
        store.close()
    bad = CliRunner().invoke(cli, [*args, "--pooling", "median"])
    assert bad.exit_code == 2 and "unknown pooling 'median'" in bad.output

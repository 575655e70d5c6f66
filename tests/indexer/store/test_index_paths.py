"""An index folder's path means exactly that path, whatever characters it holds.

Issue 24, item 4: paths were pasted into SQLite URLs, so `app?v=2` wrote ctxsearch's
tables into an unrelated database `app`, `ix%41` opened the index `ixA`, and `a#b` made
a valid index unreadable (and left an empty file `a`). Each test below builds indexes
whose names are full of URL syntax, beside the files such a name could be misread as,
and checks every command reads and writes the right files, and only those.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.store.backends import is_database_url, open_store
from indexer.store.local.fts import TextCollection
from search.cli import cli
from tests.reliability.test_reliability import ctxsearch

NAMES = ["app?v=2", "ix%41", "a#b", "with space", "ünï", "q?mode=ro&immutable=1#x%20y"]
HERONS = "Grey herons stand still in the shallows and wait for fish."
OTTERS = "Otters crack shellfish open on their bellies while floating."


def run(*args: object) -> object:
    result = CliRunner().invoke(cli, [str(arg) for arg in args])
    assert result.exit_code == 0, (args, result.output, result.stderr)
    return result


def a_folder(path: Path, text: str) -> Path:
    path.mkdir(parents=True)
    (path / "note.md").write_text(text)
    return path


@pytest.fixture(scope="module")
def otters_index(tmp_path_factory, fast_model) -> Path:
    otters = a_folder(tmp_path_factory.mktemp("otters") / "otters", OTTERS)
    index = otters.parent / "index"
    run("index", otters, "--index", index, "--model", fast_model, "--quiet")
    return index


@pytest.fixture
def place(tmp_path, otters_index) -> Path:
    """A folder holding what a misread name would open instead: an unrelated SQLite file
    `app` and an index `ixA` (of otters; every index of an odd name is of herons)."""
    place = tmp_path / "place"
    place.mkdir()
    unrelated = sqlite3.connect(place / "app")
    unrelated.execute("CREATE TABLE settings (key TEXT, value TEXT)")
    unrelated.commit()
    unrelated.close()
    shutil.copytree(otters_index, place / "ixA")
    return place


def tables(database: Path) -> list[str]:
    with sqlite3.connect(database) as connection:
        return sorted(row[0] for row in connection.execute("SELECT name FROM sqlite_master"))


@pytest.mark.parametrize("name", NAMES)
def test_every_command_reads_and_writes_the_index_the_path_names(place, fast_model, name):
    herons = a_folder(place.parent / "herons", HERONS)
    index = place / name
    before = sorted(os.listdir(place))
    run("index", herons, "--index", index, "--model", fast_model, "--quiet")
    assert sorted(os.listdir(place)) == sorted([*before, name])  # nothing stray beside it
    assert (index / "ctxsearch.sqlite").is_file()
    assert tables(place / "app") == ["settings"]
    for mode in ("lexical", "contextual", "hybrid"):  # the sqlite3 read path
        found = run("query", "herons", "--index", index, "--mode", mode, "--json")
        [hit] = json.loads(found.stdout)["results"]
        assert hit["snippet"] == HERONS
    described = json.loads(run("info", "--index", index, "--json").stdout)
    assert described["documents"] == 1 and described["index"] == str(index)
    assert all(described["files"].values())  # every file of the index, found and sized
    assert "ctxsearch.sqlite" in run("info", "--index", index).stdout
    assert "consistent" in run("verify", "--index", index).stdout
    run("repair", "--index", index)
    reader = open_store(index, read_only=True)  # immutable: for a read-only folder or mount
    try:
        with reader.snapshot() as snapshot:
            assert [chunk.text for chunk in snapshot.chunks([1]).values()] == [HERONS]
    finally:
        reader.close()
    assert sorted(os.listdir(place)) == sorted([*before, name])
    otters = json.loads(run("query", "otters", "--index", place / "ixA", "--json").stdout)
    assert [hit["snippet"] for hit in otters["results"]] == [OTTERS]


def test_an_index_of_such_a_name_in_a_read_only_folder(tmp_path, fast_model):
    """The read-only readers (immutable SQLite): `query`, `info` and `verify`."""
    name = "ro?mode=rwc#b%41 ü"
    index = tmp_path / name
    herons = a_folder(tmp_path / "herons", HERONS)
    run("index", herons, "--index", index, "--model", fast_model, "--quiet")
    files = list(index.iterdir())
    for path in files:
        os.chmod(path, 0o444)
    os.chmod(index, 0o555)
    try:
        found = ctxsearch("query", "herons", "--index", index, "--mode", "static", "--json")
        assert found.returncode == 0, found.stderr
        assert [hit["snippet"] for hit in json.loads(found.stdout)["results"]] == [HERONS]
        described = ctxsearch("info", "--index", index, "--json")
        assert described.returncode == 0 and json.loads(described.stdout)["documents"] == 1
        verified = ctxsearch("verify", "--index", index)
        assert verified.returncode == 0 and "consistent" in verified.stdout, verified.stdout
    finally:
        os.chmod(index, 0o755)
        for path in files:
            os.chmod(path, 0o644)
    assert sorted(os.listdir(tmp_path)) == ["herons", name]


def test_a_relative_folder_named_like_a_database_is_a_folder(tmp_path, fast_model, monkeypatch):
    monkeypatch.chdir(tmp_path)
    herons = a_folder(tmp_path / "herons", HERONS)
    assert not is_database_url("postgresql-notes") and is_database_url("postgresql://h/db")
    run("index", herons, "--index", "postgresql-notes", "--model", fast_model, "--quiet")
    found = run("query", "herons", "--index", "postgresql-notes", "--mode", "lexical", "--json")
    assert [hit["snippet"] for hit in json.loads(found.stdout)["results"]] == [HERONS]


def test_a_text_collection_file_is_the_file_named(tmp_path):
    """The lab's standalone BM25 file goes through the same quoting."""
    collection = TextCollection.write(tmp_path / "c?v=1#x", ["otters swim", "herons fish"])
    try:
        assert collection.search("heron", 5)[0][0] == 1
    finally:
        collection.close()
    assert sorted(os.listdir(tmp_path)) == ["c?v=1#x"]

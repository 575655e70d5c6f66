"""Folders in an index: `ls` lists the roots with their counts, `remove` drops a folder's
or a file's documents from every space at once, on every backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.errors import NotIndexed
from indexer.removal import remove_path
from indexer.store.backends import describe_store, verify_target
from search.cli import cli
from search.engine import Searcher


def write(folder: Path, names: list[str]) -> Path:
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Notes on {path.stem}: otters, herons and the river bank.\n")
    return folder


def test_ls_counts_each_root_and_remove_drops_files_and_folders(
    any_index, tmp_path, tiny_model_dir
):
    docs = write(tmp_path / "docs", ["a.md", "b.md", "guide/c.md", "guide/d.md"])
    notes = write(tmp_path / "notes", ["x.txt", "Guide/y.txt"])
    indexer = Indexer(any_index, model=str(tiny_model_dir))
    indexer.index_folder(docs)
    indexer.index_folder(notes)
    indexer.index_folder(docs / "guide")  # a root of its own inside another
    folders = {f["root"].split(":")[-1]: f for f in describe_store(any_index)["folders"]}
    assert {Path(root).name: f["documents"] for root, f in folders.items()} == {
        "docs": 2,
        "guide": 2,
        "notes": 2,
    }
    removed = remove_path(any_index, docs / "a.md")
    assert (removed["removed_documents"], removed["removed_roots"]) == (1, 0)
    removed = remove_path(any_index, docs)  # the folder, with the root nested in it
    assert (removed["removed_documents"], removed["removed_roots"]) == (3, 2)
    assert removed["total_documents"] == 2
    assert verify_target(any_index).consistent  # every space lost the same chunks
    with Searcher(any_index) as searcher:
        for mode in ("contextual", "lexical"):
            hits = searcher.search("otters", k=10, mode=mode).results
            assert {Path(hit.path).name for hit in hits} == {"x.txt", "y.txt"}
    with pytest.raises(NotIndexed):
        remove_path(any_index, notes / "guide")  # paths compare case-sensitively
    assert [Path(f["root"].split(":")[-1]).name for f in describe_store(any_index)["folders"]] == [
        "notes"
    ]


def test_ls_and_remove_on_the_command_line(tmp_path, tiny_model_dir):
    docs = write(tmp_path / "docs", ["a.md", "b.md"])
    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).index_folder(docs)
    runner = CliRunner()
    listed = runner.invoke(cli, ["ls", "--index", str(index)])
    assert listed.exit_code == 0 and str(docs) in listed.stdout
    assert listed.stdout.splitlines()[1].split()[:2] == ["2", "2"]
    as_json = json.loads(runner.invoke(cli, ["ls", "--index", str(index), "--json"]).stdout)
    assert as_json == [{"root": str(docs), "documents": 2, "chunks": 2}]
    gone = runner.invoke(cli, ["remove", str(docs / "b.md"), "--index", str(index), "--json"])
    assert gone.exit_code == 0 and json.loads(gone.stdout)["removed_documents"] == 1
    again = runner.invoke(cli, ["remove", str(docs / "b.md"), "--index", str(index)])
    assert again.exit_code == 2 and "nothing indexed there" in again.stderr
    assert "Traceback" not in again.output

"""Folders in an index: `ls` lists the roots with their counts, `remove` drops a folder's
or a file's documents from every space at once, on every backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.errors import NotIndexed
from indexer.runs.removal import remove_path
from indexer.store.backends import describe_store, verify_target
from search.cli import cli
from search.engine import Searcher


def write(folder: Path, names: list[str]) -> Path:
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Notes on {path.stem}: otters, herons and the river bank.\n")
    return folder


def test_ls_counts_each_root_and_remove_drops_files_and_folders(any_index, tmp_path, fast_model):
    docs = write(tmp_path / "docs", ["a.md", "b.md", "guide/c.md", "guide/d.md"])
    notes = write(tmp_path / "notes", ["x.txt", "Guide/y.txt"])
    indexer = Indexer(any_index, model=str(fast_model))
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


def test_ls_and_remove_on_the_command_line(tmp_path, fast_model):
    docs = write(tmp_path / "docs", ["a.md", "b.md"])
    index = tmp_path / "ix"
    Indexer(index, model=str(fast_model)).index_folder(docs)
    runner = CliRunner()
    listed = runner.invoke(cli, ["ls", "--index", str(index)])
    assert listed.exit_code == 0 and str(docs) in listed.stdout
    assert listed.stdout.splitlines()[1].split()[:2] == ["2", "2"]
    as_json = json.loads(runner.invoke(cli, ["ls", "--index", str(index), "--json"]).stdout)
    assert as_json == [{"root": str(docs), "documents": 2, "chunks": 2, "contextual_passages": 2}]
    gone = runner.invoke(cli, ["remove", str(docs / "b.md"), "--index", str(index), "--json"])
    assert gone.exit_code == 0 and json.loads(gone.stdout)["removed_documents"] == 1
    again = runner.invoke(cli, ["remove", str(docs / "b.md"), "--index", str(index)])
    assert again.exit_code == 2 and "nothing indexed there" in again.stderr
    assert "Traceback" not in again.output


def test_remove_of_a_symlink_acts_on_the_links_own_path(tmp_path, fast_model):
    docs = write(tmp_path / "docs", ["target.md", "guide/c.md"])
    (docs / "link.md").symlink_to(docs / "target.md")
    (docs / "guide-link").symlink_to(docs / "guide", target_is_directory=True)
    index = tmp_path / "ix"
    Indexer(index, model=str(fast_model)).index_folder(docs)
    removed = remove_path(index, docs / "link.md")
    assert removed["path"] == str(docs / "link.md") and removed["removed_documents"] == 1
    # The walk does not follow a folder link: nothing is indexed at its own path.
    with pytest.raises(NotIndexed):
        remove_path(index, docs / "guide-link")
    with Searcher(index) as searcher:
        hits = searcher.search("otters", k=10, mode="lexical").results
        assert sorted(Path(hit.path).name for hit in hits) == ["c.md", "target.md"]
    # A folder indexed through a link is recorded as the link: removing the link
    # removes that root.
    notes = write(tmp_path / "notes", ["n.md"])
    (tmp_path / "notes-link").symlink_to(notes, target_is_directory=True)
    Indexer(index).index_folder(tmp_path / "notes-link")
    removed = remove_path(index, tmp_path / "notes-link")
    assert (removed["path"], removed["removed_documents"], removed["removed_roots"]) == (
        str(tmp_path / "notes-link"),
        1,
        1,
    )


def test_a_parents_run_brings_a_nested_root_up_to_date_with_its_own_rules(tmp_path, fast_model):
    """`index w/sub` then `index w`: later runs over `w` keep `w/sub` in step, with the
    rules `w/sub` was indexed with, as a fresh index of the same two roots would."""
    from tests.indexer.runs.test_moves import passages

    w = write(tmp_path / "w", ["a.md", "sub/b.md", "sub/notes/c.md"])
    model = str(fast_model)
    for index in (tmp_path / "ix", tmp_path / "fresh"):
        Indexer(index, model=model).index_folder(w / "sub", exclude=["draft*"])
        Indexer(index, model=model).index_folder(w)
    write(w, ["sub/new.md", "sub/draft-1.md", "draft-2.md"])
    (w / "sub" / "b.md").write_text("Edited: kingfishers dive from the bank.\n")
    summary = Indexer(tmp_path / "ix", model=model).index_folder(w)
    assert (summary.added, summary.updated, summary.removed) == (2, 1, 0)
    assert summary.nested_roots == [str(w / "sub")]
    fresh = tmp_path / "fresh-again"
    Indexer(fresh, model=model).index_folder(w / "sub", exclude=["draft*"])
    Indexer(fresh, model=model).index_folder(w)
    assert passages(tmp_path / "ix") == passages(fresh)
    assert str(w / "sub" / "draft-1.md") not in passages(fresh)  # sub's own rule
    again = CliRunner().invoke(cli, ["index", str(w), "--index", str(tmp_path / "ix")])
    assert again.exit_code == 0 and f"with their own rules: {w / 'sub'}." in again.stdout


def test_a_nested_root_whose_folder_is_gone_is_forgotten_by_the_parents_run(
    any_index, tmp_path, fast_model
):
    """`mv dr/proj dr/project2; index dr`: the files are found once, under their new path
    (moved, not encoded again), and `ls` no longer lists dr/proj."""
    from tests.indexer.runs.test_moves import passages

    dr = write(tmp_path / "dr", ["top.md", "proj/x.md", "proj/y.md"])
    index = any_index
    indexer = Indexer(index, model=str(fast_model))
    indexer.index_folder(dr / "proj")
    indexer.index_folder(dr)
    (dr / "proj").rename(dr / "project2")
    summary = indexer.index_folder(dr)
    assert (summary.moved, summary.added, summary.removed, summary.total_documents) == (2, 0, 0, 3)
    assert summary.forgotten_roots == [str(dr / "proj")]
    assert summary.nested_roots == []
    assert [f["root"].split(":")[-1] for f in describe_store(index)["folders"]] == [str(dr)]
    fresh = tmp_path / "fresh"
    Indexer(fresh, model=str(fast_model)).index_folder(dr)
    assert passages(index) == passages(fresh)
    assert verify_target(index).consistent


def test_a_folder_that_is_gone_is_taken_as_empty_only_when_asked(tmp_path, fast_model):
    """`missing_ok` (what `watch` runs with): the files of a deleted root leave the index
    and its remembered rules stay for its return; without it, a wrong path changes nothing."""
    import shutil

    from indexer.errors import SourceNotFound
    from indexer.store.backends import open_store

    docs = write(tmp_path / "docs", ["a.md", "b.md", "skip.md"])
    index = tmp_path / "ix"
    indexer = Indexer(index, model=str(fast_model))
    indexer.index_folder(docs, exclude=["skip*"])
    shutil.rmtree(docs)
    with pytest.raises(SourceNotFound, match="no such folder"):
        indexer.index_folder(docs)
    summary = indexer.index_folder(docs, missing_ok=True)
    assert (summary.missing, summary.removed, summary.total_documents) == (True, 2, 0)
    store = open_store(index)
    try:
        assert json.loads(store.root_rules(docs))["exclude"] == ["skip*"]
    finally:
        store.close()
    with pytest.raises(SourceNotFound, match="no such folder"):
        Indexer(tmp_path / "new", model=str(fast_model)).index_folder(docs, missing_ok=True)
    assert not (tmp_path / "new").exists()
    write(docs, ["a.md", "skip.md"])
    assert indexer.index_folder(docs, missing_ok=True).added == 1  # its rules still apply


def test_a_nested_root_whose_name_is_not_utf8_stays_a_root(tmp_path, fast_model):
    """Its recorded path is escaped text that names no file: it is found by listing."""
    import os

    w = write(tmp_path / "w", ["a.md"])
    odd = Path(os.fsdecode(os.fsencode(w) + b"/sub-\xff"))
    write(odd, ["b.md"])
    index = tmp_path / "ix"
    Indexer(index, model=str(fast_model)).index_folder(odd)
    summary = Indexer(index).index_folder(w)
    assert (summary.forgotten_roots, summary.removed, summary.total_documents) == ([], 0, 2)
    assert summary.nested_roots == [str(w / "sub-\\xff")]


def test_remove_of_a_link_never_removes_the_indexed_folder_it_points_to(tmp_path, fast_model):
    # The walk stores nothing under a folder link, so removing one removes nothing,
    # whatever it points to: here the root it is in, a folder indexed on its own, and a
    # root from outside every root. It used to remove the root the link pointed to.
    docs = write(tmp_path / "docs", ["a.md", "guide/c.md"])
    (docs / "deep").mkdir()
    (docs / "deep" / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "guide-link").symlink_to(docs / "guide", target_is_directory=True)
    index = tmp_path / "ix"
    Indexer(index, model=str(fast_model)).index_folder(docs)
    Indexer(index).index_folder(docs / "guide")
    for link in (docs / "deep" / "loop", docs / "guide-link"):
        with pytest.raises(NotIndexed, match="nothing indexed there"):
            remove_path(index, link)
    with Searcher(index) as searcher:
        hits = searcher.search("otters", k=10, mode="lexical").results
        assert sorted(Path(hit.path).name for hit in hits) == ["a.md", "c.md"]
    (tmp_path / "docs-link").symlink_to(docs, target_is_directory=True)
    with pytest.raises(NotIndexed, match="nothing indexed there"):
        remove_path(index, tmp_path / "docs-link")
    assert remove_path(index, docs)["removed_roots"] == 2  # its own path removes it

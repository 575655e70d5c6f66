"""A root that is one file (`Indexer.index_file`): its edits and its removal are seen,
never the files beside it; a file under a folder root is that root's, and a folder
indexed later takes a file root in. On every backend."""

from pathlib import Path

import pytest

from indexer.errors import SourceNotFound
from indexer.runs.indexer import Indexer
from indexer.store.backends import describe_store, open_store


def documents(target) -> list[str]:
    store = open_store(target)
    try:
        return sorted(Path(path).name for path in store.documents_under(Path("/")))
    finally:
        store.close()


def roots(target) -> dict[str, int]:
    """Each root's name (a PostgreSQL root is host:path) and its documents."""
    return {
        Path(row["root"].split(":")[-1]).name: row["documents"]
        for row in describe_store(target)["folders"]
    }


@pytest.fixture
def loose(tmp_path) -> Path:
    """A folder holding todo.md, and beside it other.md and a hidden .draft.md."""
    folder = tmp_path / "loose"
    folder.mkdir()
    (folder / "todo.md").write_text("# Todo\n\nBuy bread and feed the cat.\n")
    (folder / "other.md").write_text("Sparrows nest under the roof.\n")
    (folder / ".draft.md").write_text("A hidden draft about kites.\n")
    return folder


def test_a_file_root_sees_its_edits_and_its_removal_never_its_siblings(
    any_index, loose, fast_model
):
    indexer = Indexer(any_index, model=fast_model)
    todo = loose / "todo.md"
    first = indexer.index_file(todo)
    assert (first.added, first.chunks, first.total_documents) == (1, 1, 1)
    assert documents(any_index) == ["todo.md"] and roots(any_index) == {"todo.md": 1}
    assert indexer.index_file(todo).unchanged == 1
    todo.write_text("# Todo\n\nWalk the dog.\n")
    assert indexer.index_file(todo).updated == 1
    todo.unlink()
    gone = indexer.index_file(todo)  # a file root whose file is gone is no bad input
    assert gone.missing and (gone.removed, gone.total_documents) == (1, 0)
    assert roots(any_index) == {"todo.md": 0}  # kept for its return
    todo.write_text("Back again.\n")
    assert indexer.index_file(todo).added == 1
    assert documents(any_index) == ["todo.md"]


def test_a_file_is_read_as_named_hidden_or_not(tmp_path, loose, fast_model):
    """A folder's rules (hidden names, ignore files) are not a named file's."""
    (loose / ".ctxsearchignore").write_text("*.md\n")
    indexer = Indexer(tmp_path / "ix", model=fast_model)
    assert indexer.index_file(loose / ".draft.md").added == 1
    assert indexer.index_file(loose / "todo.md").added == 1
    assert documents(tmp_path / "ix") == [".draft.md", "todo.md"]


def test_a_file_under_a_folder_root_is_that_roots_and_no_double_row(tmp_path, loose, fast_model):
    target = tmp_path / "ix"
    indexer = Indexer(target, model=fast_model)
    indexer.index_folder(loose)
    covered = indexer.index_file(loose / "todo.md")
    assert covered.covered_by == str(loose)
    assert (covered.added, covered.updated, covered.total_documents) == (0, 0, 2)
    assert roots(target) == {"loose": 2}


def test_a_folder_indexed_later_takes_its_file_roots_in(tmp_path, loose, fast_model):
    target = tmp_path / "ix"
    indexer = Indexer(target, model=fast_model)
    indexer.index_file(loose / "todo.md")
    folder = indexer.index_folder(loose)
    assert folder.taken_in_roots == [str(loose / "todo.md")] and folder.forgotten_roots == []
    assert (folder.added, folder.unchanged, folder.total_documents) == (1, 1, 2)
    assert roots(target) == {"loose": 2}


def test_a_missing_file_that_is_no_root_is_refused(tmp_path, fast_model):
    indexer = Indexer(tmp_path / "ix", model=fast_model)
    with pytest.raises(SourceNotFound, match=r"missing\.md: no such file"):
        indexer.index_file(tmp_path / "missing.md")
    assert not (tmp_path / "ix").exists()


def test_a_folder_root_swapped_for_a_file_leaves_no_file_of_the_folder(tmp_path, fast_model):
    """`notes.md/` indexed as a folder, then a file `notes.md` in its place, indexed: the
    index holds what a fresh index of that file would, the folder's files gone."""
    import shutil

    place = tmp_path / "notes.md"
    place.mkdir()
    (place / "inside.md").write_text("Kept in a folder once.")
    target = tmp_path / "ix"
    indexer = Indexer(target, model=fast_model)
    indexer.index_folder(place)
    shutil.rmtree(place)
    place.write_text("Now a file of its own.")
    summary = indexer.index_file(place)
    assert (summary.added, summary.removed) == (1, 1)
    assert documents(target) == ["notes.md"] and roots(target) == {"notes.md": 1}

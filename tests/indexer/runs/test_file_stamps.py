"""Telling a changed file from an unchanged one without reading it: size, mtime, ctime
and inode. A replacement that keeps the size and the mtime (`cp -p`, `rsync -t`, an
archive extracted again) changes the ctime, and often the inode: it is read again. A
file nothing happened to is not read at all."""

from __future__ import annotations

import os
from pathlib import Path

from indexer import Indexer
from search.engine import Searcher
from tests.support.raw_statements import run_statements

OLD = "Herons wade in the shallow river and wait for fish.\n"
NEW = "Otters float on their backs and crack open mussels.\n"


def folder_of(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text(OLD)
    (docs / "other.md").write_text("# Other\n\nKingfishers dive from the bank.\n")
    return docs


def found(target, word: str) -> list[str]:
    with Searcher(target) as searcher:
        return [Path(hit.path).name for hit in searcher.search(word, mode="lexical").results]


def test_a_replacement_keeping_size_and_mtime_is_read_again(any_index, tmp_path, fast_model):
    """`rsync -t`: a new file of the same size, given the old mtime, renamed over it."""
    assert len(OLD) == len(NEW)
    docs = folder_of(tmp_path)
    notes = docs / "notes.txt"
    indexer = Indexer(any_index, model=fast_model)
    indexer.index_folder(docs)
    old = notes.stat()
    staged = docs / ".notes.txt.tmp"
    staged.write_text(NEW)
    os.utime(staged, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(staged, notes)
    assert (notes.stat().st_size, notes.stat().st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    summary = indexer.index_folder(docs)
    assert (summary.updated, summary.unchanged) == (1, 1)
    assert found(any_index, "otters") == ["notes.txt"] and found(any_index, "herons") == []


def test_a_copy_over_the_file_keeping_its_mtime_is_read_again(any_index, tmp_path, fast_model):
    """`cp -p`: the same file (inode) rewritten with the same size, its mtime set back."""
    docs = folder_of(tmp_path)
    notes = docs / "notes.txt"
    indexer = Indexer(any_index, model=fast_model)
    indexer.index_folder(docs)
    old = notes.stat()
    notes.write_text(NEW)
    os.utime(notes, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert (notes.stat().st_ino, notes.stat().st_mtime_ns) == (old.st_ino, old.st_mtime_ns)
    summary = indexer.index_folder(docs)
    assert (summary.updated, summary.unchanged) == (1, 1)
    assert found(any_index, "otters") == ["notes.txt"]


def test_an_unchanged_file_is_not_read_and_a_chmod_only_reads_it(any_index, tmp_path, fast_model):
    """Nothing happened: nothing is read (`touched` counts the files read again whose
    content was the same). A chmod changes the ctime: the file is read, its content is
    the same, and the index only records its new status."""
    docs = folder_of(tmp_path)
    indexer = Indexer(any_index, model=fast_model)
    indexer.index_folder(docs)
    again = indexer.index_folder(docs)
    assert (again.unchanged, again.touched, again.updated) == (2, 0, 0)
    os.chmod(docs / "notes.txt", 0o600)
    chmodded = indexer.index_folder(docs)
    assert (chmodded.unchanged, chmodded.touched, chmodded.updated, chmodded.chunks) == (
        2,
        1,
        0,
        0,
    )
    assert indexer.index_folder(docs).touched == 0


def undo_file_identity(target) -> None:
    """Make the index at `target` what migration 0011 left: no ctime or inode columns."""
    statements = [
        "ALTER TABLE documents DROP COLUMN ctime_ns",
        "ALTER TABLE documents DROP COLUMN inode",
        "DELETE FROM migrations WHERE name = '0012_file_identity'",
    ]
    run_statements(target, statements)


def test_an_index_from_before_file_identity_is_migrated_and_read_once(
    any_index, tmp_path, fast_model
):
    """Rows from before the migration know no ctime or inode: the first run reads each
    file once (a replacement that kept size and mtime is found then), records them, and
    the next run reads nothing."""
    docs = folder_of(tmp_path)
    Indexer(any_index, model=fast_model).index_folder(docs)
    undo_file_identity(any_index)
    notes = docs / "notes.txt"
    old = notes.stat()
    notes.write_text(NEW)
    os.utime(notes, ns=(old.st_atime_ns, old.st_mtime_ns))
    indexer = Indexer(any_index, model=fast_model)
    first = indexer.index_folder(docs)
    assert (first.updated, first.touched, first.unchanged) == (1, 1, 1)
    assert found(any_index, "otters") == ["notes.txt"]
    second = indexer.index_folder(docs)
    assert (second.updated, second.touched, second.unchanged) == (0, 0, 2)

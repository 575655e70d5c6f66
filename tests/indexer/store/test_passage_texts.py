"""`verify` compares every stored passage with its file's text at its offsets, for the
files that are as they were indexed, and says what it compared and what it left out."""

from __future__ import annotations

import sqlite3

from indexer import Indexer
from indexer.store.backends import verify_target
from indexer.store.local.index_files import DATABASE_FILE
from tests.conftest import make_pdf


def test_verify_compares_the_passages_of_unchanged_files(any_index, notes, fast_model):
    (notes / "cranes.pdf").write_bytes(make_pdf(["Cranes lift steel beams in calm wind."] * 30))
    indexer = Indexer(any_index, model=str(fast_model))
    summary = indexer.index_folder(notes)
    indexer.upsert_records([{"id": "kb-1", "text": "Saddle height, and how to set it."}])
    report = verify_target(any_index)
    assert report.consistent, report.problems
    checked = report.counts["passage_texts_checked"]
    assert checked == summary.total_chunks  # every passage of every file
    assert report.notes[-1] == (
        f"passage texts compared with {summary.total_documents} files read again ({checked} "
        "passages); not compared: 0 files changed, gone or unreadable since they were "
        "indexed, 1 records and other hosts' documents"
    )

    # a file edited (not indexed again) and one deleted cannot be compared: no problem
    (notes / "money.txt").write_text("Something else entirely.\n")
    (notes / "river.txt").unlink()
    report = verify_target(any_index)
    assert report.consistent, report.problems
    assert "not compared: 2 files changed, gone or unreadable" in report.notes[-1]


def test_verify_names_a_passage_whose_text_is_not_its_files(tmp_path, notes, fast_model):
    index = tmp_path / "ix"
    Indexer(index, model=str(fast_model)).index_folder(notes)
    connection = sqlite3.connect(index / DATABASE_FILE)
    with connection:
        connection.execute(
            "UPDATE chunks SET text = 'Prune roses in late summer.' WHERE id = "
            "(SELECT chunks.id FROM chunks JOIN documents ON documents.id = document_id "
            "WHERE path LIKE '%roses.md')"
        )
    connection.close()
    report = verify_target(index)
    assert report.problems == [
        "1 passages of 1 files do not hold the file's text at their offsets (the first: "
        f"{(notes / 'garden' / 'roses.md').resolve()} passage 0); `ctxsearch remove` such a "
        "file and index it again"
    ]

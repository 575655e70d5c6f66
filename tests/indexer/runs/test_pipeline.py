"""Indexing folders: the first run, re-runs, changes, deletions and failures."""

import os

import pytest

from indexer import Indexer, ModelMismatch, SourceNotFound
from indexer.store.backends import open_store, verify_target
from search import Searcher
from tests.conftest import make_pdf


def run(index_dir, folder, **options):
    return Indexer(index_dir, **options).index_folder(folder)


def assert_consistent(index_dir):
    """Every space holds exactly the chunk ids of the SQL store."""
    report = verify_target(index_dir)
    assert report.consistent, report.problems


def test_first_run_indexes_every_supported_file(tmp_path, notes):
    summary = run(tmp_path / "ix", notes)
    assert (summary.added, summary.updated, summary.removed, summary.failed) == (4, 0, 0, 0)
    assert summary.chunks == summary.total_chunks == 4
    assert_consistent(tmp_path / "ix")


def test_second_run_on_an_unchanged_folder_encodes_nothing(tmp_path, notes):
    run(tmp_path / "ix", notes)
    again = Indexer(tmp_path / "ix")
    summary = again.index_folder(notes)
    assert (summary.added, summary.updated, summary.removed, summary.chunks) == (0, 0, 0, 0)
    assert summary.unchanged == 4
    assert again.encoders.loaded is None, "an unchanged folder must not even load the model"


def test_a_run_that_only_removes_files_does_not_load_the_model(tmp_path, notes):
    run(tmp_path / "ix", notes)
    (notes / "money.txt").unlink()
    again = Indexer(tmp_path / "ix")
    summary = again.index_folder(notes)
    assert (summary.removed, summary.total_documents) == (1, 3)
    assert again.encoders.loaded is None
    assert_consistent(tmp_path / "ix")


def test_a_changed_file_is_the_only_one_re_encoded(tmp_path, notes):
    run(tmp_path / "ix", notes)
    (notes / "money.txt").write_text("Compound interest makes savings grow over decades.\n")
    summary = run(tmp_path / "ix", notes)
    assert (summary.added, summary.updated, summary.unchanged, summary.chunks) == (0, 1, 3, 1)
    assert_consistent(tmp_path / "ix")
    with Searcher(tmp_path / "ix") as searcher:
        top = searcher.search("compound interest", k=1).results[0]
    assert top.path.endswith("money.txt") and "Compound interest" in top.snippet


def test_a_touched_but_identical_file_is_not_re_encoded(tmp_path, notes):
    run(tmp_path / "ix", notes)
    path = notes / "river.txt"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    summary = run(tmp_path / "ix", notes)
    assert (summary.updated, summary.unchanged, summary.chunks) == (0, 4, 0)
    third = Indexer(tmp_path / "ix")
    assert third.index_folder(notes).unchanged == 4 and third.encoders.loaded is None


def test_a_deleted_file_leaves_every_space_and_the_results(tmp_path, notes):
    run(tmp_path / "ix", notes)
    (notes / "river.txt").unlink()
    summary = run(tmp_path / "ix", notes)
    assert (summary.removed, summary.total_documents) == (1, 3)
    assert_consistent(tmp_path / "ix")
    with Searcher(tmp_path / "ix") as searcher:
        for space in ("contextual", "static"):
            paths = [hit.path for hit in searcher.search("river flood", k=10, space=space).results]
            assert not any(path.endswith("river.txt") for path in paths)


def test_two_folders_share_an_index_without_removing_each_other(tmp_path, notes):
    other = tmp_path / "other"
    other.mkdir()
    (other / "jaguar.md").write_text("The jaguar is the largest cat of the Americas.")
    run(tmp_path / "ix", notes)
    summary = run(tmp_path / "ix", other)
    assert (summary.added, summary.removed, summary.total_documents) == (1, 0, 5)


def test_failures_are_counted_and_do_not_stop_the_run(tmp_path, notes):
    (notes / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (notes / "binary.txt").write_bytes(b"\x00\x01\x02" * 100)
    (notes / "paper.pdf").write_bytes(make_pdf(["Herons and cranes wade in shallow water."]))
    summary = run(tmp_path / "ix", notes)
    assert summary.added == 5 and summary.failed == 2
    assert {os.path.basename(f.path) for f in summary.failures} == {"broken.pdf", "binary.txt"}
    with Searcher(tmp_path / "ix") as searcher:
        assert searcher.search("wading birds", k=1).results[0].path.endswith("paper.pdf")


def test_a_file_that_becomes_binary_loses_its_indexed_version(tmp_path, notes):
    """Binary bytes have no text to index, whenever they are read: the old text goes (a
    failure that may pass keeps it: tests/indexer/runs/test_unindexable.py)."""
    run(tmp_path / "ix", notes)
    (notes / "money.txt").write_bytes(b"\x00\x01binary now" * 50)
    summary = run(tmp_path / "ix", notes)
    assert (summary.failed, summary.removed, summary.total_documents) == (1, 1, 3)


def test_empty_files_are_indexed_without_chunks(tmp_path, notes):
    (notes / "empty.md").write_text("   \n")
    summary = run(tmp_path / "ix", notes)
    assert summary.added == 5 and summary.total_chunks == 4
    assert run(tmp_path / "ix", notes).unchanged == 5


def test_long_documents_are_chunked_not_truncated(tmp_path, model):
    folder = tmp_path / "long"
    folder.mkdir()
    text = " ".join(f"Paragraph {i} is about topic number {i} at some length." for i in range(300))
    text += " The final sentence mentions a purple giraffe."
    (folder / "long.txt").write_text(text)
    summary = run(tmp_path / "ix", folder)
    assert summary.chunks > 5
    with Searcher(tmp_path / "ix") as searcher:
        hits = searcher.search("a purple giraffe", k=50, all_chunks=True).results
    last = max(hits, key=lambda hit: hit.end)
    assert last.end == len(text) and "purple giraffe" in text[last.start : last.end]


def test_model_and_pooling_must_match_an_existing_index(tmp_path, notes):
    run(tmp_path / "ix", notes)
    with pytest.raises(ModelMismatch, match="pooling"):
        run(tmp_path / "ix", notes, pooling="cls")
    with pytest.raises(ModelMismatch, match="model"):
        run(tmp_path / "ix", notes, model=str(tmp_path))


def test_a_missing_folder_is_refused_before_any_index_is_created(tmp_path):
    with pytest.raises(SourceNotFound):
        run(tmp_path / "ix", tmp_path / "missing")
    assert not (tmp_path / "ix").exists()


def test_vectors_in_the_index_are_those_of_the_encoders(tmp_path, notes, model):
    from indexer.encoders.transformer import ContextualEncoder
    from indexer.splitting.model_input import model_input

    run(tmp_path / "ix", notes)
    store = open_store(tmp_path / "ix")
    try:
        with store.snapshot() as snapshot:
            chunks = snapshot.chunks(range(1, 1000))
            encoder = ContextualEncoder(model, precision=snapshot.manifest.precision)
            window, spans = snapshot.manifest.chunk_tokens, model.token_spans
            fresh = encoder.encode(  # each passage with its section trail in front
                [model_input(c.text, c.section, spans, window) for c in chunks.values()]
            )
            nearest = snapshot.vector_search("contextual", fresh, 1)
    finally:
        store.close()
    for chunk_id, [(found, score)] in zip(chunks, nearest, strict=True):
        assert found == chunk_id and score == pytest.approx(1.0, abs=1e-5)

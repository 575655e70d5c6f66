"""A file that only moved or was renamed keeps its chunks and vectors: no re-encoding."""

from __future__ import annotations

from pathlib import Path

from indexer import Indexer
from indexer.store.backends import open_store, verify_target
from search.engine import Searcher


def test_a_moved_or_renamed_file_keeps_its_chunks_and_vectors(any_index, tmp_path, fast_model):
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "otters.md").write_text("# Otters\n\nOtters hold paws while they sleep.\n")
    (docs / "herons.md").write_text("# Herons\n\nHerons stand still in the shallows.\n")
    (docs / "same-a.txt").write_text("twin content\n")
    (docs / "same-b.txt").write_text("twin content\n")
    indexer = Indexer(any_index, model=str(fast_model))
    indexer.index_folder(docs)
    with Searcher(any_index) as searcher:
        hits = searcher.search("otters", k=10).results
        before = {hit.snippet: hit.chunk_id for hit in hits if hit.snippet != "twin content"}
        [twins] = [hit for hit in hits if hit.snippet == "twin content"]
        assert len(twins.duplicates) == 1  # identical files are one hit
    (docs / "otters.md").rename(docs / "guide" / "otters.md")
    (docs / "herons.md").rename(docs / "wading-birds.md")
    (docs / "same-a.txt").unlink()  # one of two identical files gone: nothing to move
    mover = Indexer(any_index, model=str(fast_model))
    summary = mover.index_folder(docs)
    assert (summary.moved, summary.added, summary.chunks, summary.removed) == (2, 0, 0, 1)
    assert mover.encoders.loaded is None  # nothing to encode: the model was never loaded
    assert {
        (m.old_path.rsplit("/", 1)[1], "/".join(m.path.split("/")[-2:]))
        for m in summary.moved_files
    } == {
        ("otters.md", "guide/otters.md"),
        ("herons.md", "docs/wading-birds.md"),
    }
    assert verify_target(any_index).consistent
    with Searcher(any_index) as searcher:
        hits = searcher.search("otters", k=10).results
        after = {hit.snippet: hit.chunk_id for hit in hits if hit.snippet != "twin content"}
        assert after == before  # the same chunks, under the new paths
        [twin] = [hit for hit in hits if hit.snippet == "twin content"]
        assert twin.path.endswith("same-b.txt") and twin.duplicates == []
        paths = {"/".join(hit.path.split("/")[-2:]) for hit in hits}
        assert {"guide/otters.md", "docs/wading-birds.md"} <= paths
        assert not any(path.endswith("same-a.txt") for path in paths)
    assert indexer.index_folder(docs).changed_anything() is False


def passages(index: Path) -> dict[str, list[tuple]]:
    """Every document's path, with its chunks' texts and locations (what a fresh index of
    the same folders must hold too)."""
    store = open_store(index)
    try:
        roots = [Path("/"), *map(Path, store.roots_under(Path("/")))]
        stored = {path: doc for root in roots for path, doc in store.documents_under(root).items()}
        with store.snapshot() as snapshot:
            found = {}
            for path, document in stored.items():
                _document, chunks = snapshot.document(document.id)
                found[path] = [
                    (c.text, c.start, c.end, c.line, c.end_line, c.heading) for c in chunks
                ]
            return found
    finally:
        store.close()


def test_a_rename_that_changes_the_reader_reads_the_file_again(tmp_path, fast_model):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text(
        "<html><body><h1>Cranes</h1><p>Tower cranes lift steel beams.</p>"
        "<script>var secret = 1;</script><!-- a comment --></body></html>"
    )
    (docs / "notes.txt").write_text("Herons\n======\n\nHerons stand still in the shallows.\n")
    indexer = Indexer(tmp_path / "ix", model=str(fast_model))
    indexer.index_folder(docs)
    (docs / "page.html").rename(docs / "page.txt")  # the same bytes, read as plain text
    (docs / "notes.txt").rename(docs / "notes.md")  # the same text, with a heading now
    summary = indexer.index_folder(docs)
    assert (summary.moved, summary.added, summary.removed) == (0, 2, 2)
    Indexer(tmp_path / "fresh", model=str(fast_model)).index_folder(docs)
    indexed = passages(tmp_path / "ix")
    assert indexed == passages(tmp_path / "fresh")
    assert "secret" in indexed[str(docs / "page.txt")][0][0]
    assert indexed[str(docs / "notes.md")][0][-1] == "Herons"


def test_very_large_files_are_indexed_and_named_in_the_summary(tmp_path, fast_model):
    from click.testing import CliRunner

    from indexer.runs.indexer import LARGE_TEXT_CHARACTERS
    from search.cli import cli

    docs = tmp_path / "docs"
    docs.mkdir()
    paragraph = "Release 1.2.3 fixed the otter feeder and the heron gate. " * 20 + "\n\n"
    (docs / "CHANGES.md").write_text(paragraph * (LARGE_TEXT_CHARACTERS // len(paragraph) + 1))
    (docs / "small.md").write_text("A small note about otters.\n")
    summary = Indexer(tmp_path / "ix", model=str(fast_model)).index_folder(docs)
    assert [large.path.rsplit("/", 1)[1] for large in summary.large_files] == ["CHANGES.md"]
    assert summary.large_files[0].characters >= LARGE_TEXT_CHARACTERS
    assert summary.added == 2 and summary.large_files[0].chunks > 100
    (docs / "CHANGES.md").write_text((docs / "CHANGES.md").read_text() + "One more.\n")
    result = CliRunner().invoke(
        cli, ["index", str(docs), "--index", str(tmp_path / "ix"), "--quiet"]
    )
    assert result.exit_code == 0 and "large " in result.stderr and "--exclude" in result.stderr

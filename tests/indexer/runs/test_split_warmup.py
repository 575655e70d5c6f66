"""A long-lived writer splits large indexed files ahead, so that the first edit of one is
split (tokenised) only where it changed, and its passages are those of a fresh index."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from indexer import Indexer
from indexer.runs.run import MEMO_CHARACTERS
from indexer.splitting.chunking import chunk_document
from indexer.store.backends import open_store


def sections(count: int) -> str:
    return "".join(
        f"## Release {n}\n\n"
        + f"Item {n}: the otters of river {n} moved their dens. " * 12
        + "\n\n"
        for n in range(count)
    )


def stored_texts(index, docs) -> list[str]:
    store = open_store(index)
    try:
        with store.snapshot() as snapshot:
            (document,) = snapshot.documents_at(next(iter(store.documents_under(docs))))
            return [chunk.text for chunk in snapshot.document(document.id)[1]]
    finally:
        store.close()


def stored_inputs(index) -> list[str]:
    """The content key of each stored passage, in order: the hash of what the model read
    for it (`indexer.store.content_keys`)."""
    with closing(sqlite3.connect(index / "ctxsearch.sqlite")) as database:
        rows = database.execute("SELECT content_key FROM chunks ORDER BY ordinal").fetchall()
    return [key for (key,) in rows]


def indexed_changelog(tmp_path, fast_model, count: int) -> tuple[Path, Path, str]:
    """docs/changelog.md of `count` sections, indexed into tmp_path/ix: (docs, page, text)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "changelog.md"
    text = "# Changelog\n\n" + sections(count)
    page.write_text(text)
    Indexer(tmp_path / "ix", model=fast_model).index_folder(docs)
    return docs, page, text


def counting_token_spans(patch, loaded) -> list[str]:
    """Every text `loaded`'s tokenizer is given from now on, in order."""
    calls: list[str] = []
    original = type(loaded).token_spans

    def counted(self, piece: str):
        calls.append(piece)
        return original(self, piece)

    patch.setattr(type(loaded), "token_spans", counted)
    return calls


def test_a_warmed_writer_tokenises_only_the_edited_section_of_a_large_file(tmp_path, fast_model):
    docs, page, text = indexed_changelog(tmp_path, fast_model, 60)
    writer = Indexer(tmp_path / "ix", model=fast_model)  # a new process, as `watch` is
    assert writer.warm_split_cache(docs, min_bytes=1_000) == 1
    assert writer.warm_split_cache(docs, min_bytes=len(text.encode()) + 1) == 0
    warmed = writer.split_cache.tokenised
    assert warmed >= 60
    edited = text.replace("Item 30: the otters", "Item 30: the herons", 1)
    page.write_text(edited)
    summary = writer.index_folder(docs)
    assert summary.updated == 1 and 1 <= summary.encoded <= 5
    assert writer.split_cache.tokenised - warmed == 1  # the edited section only
    fresh = tmp_path / "fresh"
    Indexer(fresh, model=fast_model).index_folder(docs)
    assert stored_texts(tmp_path / "ix", docs) == stored_texts(fresh, docs)


def test_a_warmed_writer_finds_the_model_input_of_each_unchanged_passage_without_tokenising(
    tmp_path, fast_model, monkeypatch
):
    """What the model reads for a passage (its trail in front, `model_input`) is kept with
    the split: the edit of one section of a large file tokenises that section and its
    passages' inputs, not three texts for every passage of the file; the stored passages
    and inputs are those of a fresh index."""
    docs, page, text = indexed_changelog(tmp_path, fast_model, 60)
    writer = Indexer(tmp_path / "ix", model=fast_model)
    loaded = writer.load_encoders().loaded
    calls = counting_token_spans(monkeypatch, loaded)
    assert writer.warm_split_cache(docs, min_bytes=1_000) == 1
    passages = len(stored_texts(tmp_path / "ix", docs))
    assert passages >= 60
    calls.clear()
    edited = text.replace("Item 30: the otters", "Item 30: the herons", 1)
    page.write_text(edited)
    summary = writer.index_folder(docs)
    assert summary.updated == 1 and 1 <= summary.encoded <= 5
    assert len(calls) <= 3 * summary.encoded + 1, f"{len(calls)} texts tokenised"
    store = open_store(tmp_path / "ix")
    manifest = store.manifest
    store.close()
    split = (edited, str(page), None, loaded.token_spans, manifest.chunk_tokens)
    cached = chunk_document(*split, manifest.chunk_overlap, writer.split_cache)
    assert cached == chunk_document(*split, manifest.chunk_overlap)  # model_text too


def test_a_new_process_tokenises_only_what_an_edit_changed_in_a_large_file(
    tmp_path, fast_model, monkeypatch
):
    """The token spans of a large file's texts are kept between processes (a memo in the
    cache), so that `ctxsearch index` after an edit, a new process each time, tokenises
    the edited section and its passages, not the whole file again; its passages and what
    the model reads for each are those of a fresh index all the same."""
    monkeypatch.setenv("CTXSEARCH_CACHE", str(tmp_path / "cache"))
    docs, page, text = indexed_changelog(tmp_path, fast_model, 200)
    assert len(text) >= MEMO_CHARACTERS
    page.write_text(text.replace("Item 130: the otters", "Item 130: the herons", 1))
    writer = Indexer(tmp_path / "ix", model=fast_model)  # a new process: an empty cache
    loaded = writer.load_encoders().loaded
    with monkeypatch.context() as patch:
        calls = counting_token_spans(patch, loaded)
        summary = writer.index_folder(docs)
    assert summary.updated == 1 and 1 <= summary.encoded <= 5
    assert len(calls) <= 6, f"{len(calls)} texts tokenised"
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("CTXSEARCH_CACHE", str(tmp_path / "another-cache"))
    Indexer(fresh, model=fast_model).index_folder(docs)
    assert stored_texts(tmp_path / "ix", docs) == stored_texts(fresh, docs)
    assert stored_inputs(tmp_path / "ix") == stored_inputs(fresh)


def test_a_damaged_memo_of_token_spans_is_passed_over(tmp_path, fast_model, monkeypatch):
    monkeypatch.setenv("CTXSEARCH_CACHE", str(tmp_path / "cache"))
    docs, page, text = indexed_changelog(tmp_path, fast_model, 200)
    (memo,) = (tmp_path / "cache" / "tokens").iterdir()
    memo.write_bytes(memo.read_bytes()[: memo.stat().st_size // 2])
    page.write_text(text.replace("Item 130: the otters", "Item 130: the herons", 1))
    summary = Indexer(tmp_path / "ix", model=fast_model).index_folder(docs)
    assert summary.updated == 1 and 1 <= summary.encoded <= 5
    fresh = tmp_path / "fresh"
    Indexer(fresh, model=fast_model).index_folder(docs)
    assert stored_inputs(tmp_path / "ix") == stored_inputs(fresh)

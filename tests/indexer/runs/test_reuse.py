"""Vectors reused by content (issue 26 item 2): a run encodes only the passages whose
text and encoding settings the index does not hold yet, and copies the stored vectors of
the rest, in every space, on both stores.

A real (tiny, seeded) BERT, real SQLite + FAISS and PostgreSQL + pgvector.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from indexer import Indexer
from tests.support.oracle import index_fingerprint

SEPARATOR = " \u203a "
SUBJECTS = ("otters", "herons", "beavers", "kingfishers", "voles", "newts", "trout", "eels")


def long_markdown(paragraphs: int = 40) -> str:
    """A Markdown file of many distinct paragraphs: over a dozen passages of the tiny BERT."""
    lines = ["# Field notes", ""]
    for n in range(paragraphs):
        subject = SUBJECTS[n % len(SUBJECTS)]
        lines += [
            f"Day {n}: the {subject} by the weir were counted at dawn, {n * 7 % 31} of them, "
            f"and the water stood at {n % 9} marks on the old post near the mill race.",
            "",
        ]
    return "\n".join(lines)


@pytest.fixture
def indexer(any_index, tiny_model_dir) -> Indexer:
    return Indexer(any_index, model=str(tiny_model_dir), precision="fp32", batch_chunks=8)


def vectors_by_text(target) -> dict[str, dict[str, np.ndarray]]:
    """Each stored passage's text -> its vector in every space."""
    found = index_fingerprint(target)
    texts = {
        (path, chunk.ordinal): chunk.text
        for path, document in found.documents.items()
        for chunk in document.chunks
    }
    by_text: dict[str, dict[str, np.ndarray]] = {}
    for space, vectors in found.vectors.items():
        for key, vector in vectors.items():
            by_text.setdefault(texts[key], {})[space] = vector
    return by_text


def test_appending_a_line_encodes_only_the_passages_it_changed(indexer, any_index, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    notes = folder / "notes.md"
    notes.write_text(long_markdown())
    first = indexer.index_folder(folder)
    assert first.chunks >= 12 and first.encoded == first.chunks
    before = vectors_by_text(any_index)
    notes.write_text(long_markdown() + "\nOne more line: an otter slid down the bank.\n")
    second = indexer.index_folder(folder)
    assert second.updated == 1 and second.chunks >= first.chunks
    assert 1 <= second.encoded <= 2, second.to_dict()
    after = vectors_by_text(any_index)
    kept = set(before) & set(after)
    assert len(kept) >= second.chunks - second.encoded
    for text in kept:  # the copied vectors are the stored ones, in every space
        for space in ("contextual", "static"):
            np.testing.assert_array_equal(after[text][space], before[text][space])
    assert any("One more line" in text for text in set(after) - set(before))


def test_a_copied_file_encodes_nothing_and_shares_the_vectors(indexer, any_index, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text(long_markdown())
    first = indexer.index_folder(folder)
    shutil.copy(folder / "a.md", folder / "b.md")
    copied = indexer.index_folder(folder)
    assert (copied.added, copied.chunks, copied.encoded) == (1, first.chunks, 0)
    assert copied.workers == 0  # nothing went to the encoder
    found = index_fingerprint(any_index)
    for space in ("contextual", "static"):
        vectors = found.vectors[space]
        for ordinal in range(first.chunks):
            np.testing.assert_array_equal(
                vectors[(str(folder / "a.md"), ordinal)], vectors[(str(folder / "b.md"), ordinal)]
            )


def test_a_passage_repeated_within_a_run_is_encoded_once(indexer, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("a.md", "b.md", "c.md"):  # one batch of 8 chunks holds less than a file
        (folder / name).write_text(long_markdown())
    summary = indexer.index_folder(folder)
    assert summary.added == 3 and summary.encoded * 3 == summary.chunks


def test_record_upserts_encode_only_text_the_index_lacks(indexer):
    text = long_markdown(10)
    first = indexer.upsert_records([{"id": "a", "text": text}])
    assert first.encoded == first.chunks >= 3
    unchanged = indexer.upsert_records([{"id": "a", "text": text, "metadata": {"k": 1}}])
    assert (unchanged.metadata_updated, unchanged.encoded) == (1, 0)
    same_text = indexer.upsert_records([{"id": "b", "text": text}])
    assert (same_text.added, same_text.chunks, same_text.encoded) == (1, first.chunks, 0)
    edited = indexer.upsert_records([{"id": "a", "text": text + "\nA heron, at last.\n"}])
    assert edited.updated == 1 and 1 <= edited.encoded <= 2


def test_other_encoding_settings_encode_everything(any_index, tiny_model_dir, tmp_path):
    """Vectors are reused only for the settings they were made with: another precision
    in the same index, or another pooling (a new index), encodes every passage."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text(long_markdown())
    fp32 = Indexer(any_index, model=str(tiny_model_dir), precision="fp32")
    first = fp32.index_folder(folder)
    (folder / "b.md").write_text(long_markdown())
    bf16 = Indexer(any_index, model=str(tiny_model_dir), precision="bf16")
    assert bf16.index_folder(folder).encoded == first.chunks
    cls = Indexer(tmp_path / "cls", model=str(tiny_model_dir), pooling="cls", precision="fp32")
    assert cls.index_folder(folder).encoded == first.chunks  # b.md repeats a.md: once


def test_repair_gives_chunks_from_before_content_keys_theirs(tmp_path, tiny_model_dir):
    """Chunks written before migration 0007 have no key (never reused); `repair`, which
    encodes every chunk with the manifest's settings, gives them theirs."""
    import sqlite3

    from indexer.runs.repair import repair_index
    from indexer.store.local.index_files import DATABASE_FILE

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text(long_markdown())
    index = tmp_path / "ix"
    indexer = Indexer(index, model=str(tiny_model_dir), precision="fp32")
    first = indexer.index_folder(folder)
    with sqlite3.connect(index / DATABASE_FILE) as connection:
        connection.execute("UPDATE chunks SET content_key = NULL")  # as 0007 left old rows
    connection.close()
    shutil.copy(folder / "a.md", folder / "b.md")
    assert indexer.index_folder(folder).encoded == first.chunks  # nothing to reuse
    (folder / "b.md").unlink()
    indexer.index_folder(folder)
    with sqlite3.connect(index / DATABASE_FILE) as connection:
        connection.execute("UPDATE chunks SET content_key = NULL")
    connection.close()
    assert repair_index(index)["chunks"] == first.chunks
    shutil.copy(folder / "a.md", folder / "c.md")
    assert indexer.index_folder(folder).encoded == 0


def test_a_passage_is_encoded_with_its_section_trail_in_front(tmp_path, fast_model):
    """The vectors of a passage are those of its trail, a blank line and its text (the
    stored text is the passage's own), and its content key hashes exactly that."""
    import sqlite3

    from indexer.encoders.for_index import encoders_for
    from indexer.store.backends import open_store
    from indexer.store.content_keys import content_key, encoding_settings
    from indexer.store.local.index_files import DATABASE_FILE

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "json.md").write_text(
        "# json\n\nThe module encodes and decodes JSON.\n\n"
        "## Command Line Interface\n\nRun it as a script from the shell.\n"
    )
    index = tmp_path / "ix"
    Indexer(index, model=fast_model).index_folder(folder)
    store = open_store(index)
    manifest = store.manifest
    store.close()
    with sqlite3.connect(index / DATABASE_FILE) as connection:
        rows = connection.execute("SELECT ordinal, text, section, content_key FROM chunks")
        stored = {ordinal: (text, section, key) for ordinal, text, section, key in rows}
    connection.close()
    ((text, section, key),) = stored.values()  # the two small sections, joined
    assert (section, text) == ("json", (folder / "json.md").read_text().strip())
    encoded = section + "\n\n" + text
    assert key == content_key(encoded, encoding_settings(manifest))
    vector = index_fingerprint(index).vectors["contextual"][(str(folder / "json.md"), 0)]
    expected = encoders_for(manifest)["contextual"].encode([encoded])[0]
    np.testing.assert_allclose(vector, expected, atol=1e-6)


def test_a_renamed_heading_encodes_the_passages_under_it_again(
    indexer, any_index, tmp_path, tiny_model_dir
):
    """A passage's text can stay while its trail, encoded in front of it, changes: the
    edited file's rows are kept by content key, so the key must be that of what is
    encoded, or the passage keeps the vectors of its old heading."""
    folder = tmp_path / "notes"
    folder.mkdir()
    body = long_markdown(12).split("\n", 2)[2]
    (folder / "guide.md").write_text(f"# Guide\n\n## Alpha\n\n{body}\n\n## Beta\n\n{body}\n")
    indexer.index_folder(folder)
    alpha = alpha_ids(any_index)
    (folder / "guide.md").write_text(f"# Guide\n\n## Alpha\n\n{body}\n\n## Gamma\n\n{body}\n")
    assert indexer.index_folder(folder).encoded >= 1
    assert alpha and alpha_ids(any_index) == alpha, "the Alpha passages keep their rows"
    fresh = tmp_path / "fresh"
    Indexer(fresh, model=str(tiny_model_dir), precision="fp32", batch_chunks=8).index_folder(folder)
    mine, expected = index_fingerprint(any_index).vectors, index_fingerprint(fresh).vectors
    for space, vectors in expected.items():
        assert mine[space].keys() == vectors.keys()
        for key, vector in vectors.items():
            np.testing.assert_allclose(mine[space][key], vector, atol=1e-5, err_msg=str(key))


def alpha_ids(target) -> list[int]:
    """The ids of the stored passages of the Alpha section, in order."""
    from sqlalchemy import create_engine, text

    from indexer.store.local.index_files import DATABASE_FILE
    from indexer.store.postgres.location import PostgresLocation

    if isinstance(target, str):
        location = PostgresLocation.parse(target)
        engine, table = create_engine(location.url), f'"{location.schema}".chunks'
    else:
        engine, table = create_engine(f"sqlite:///{target / DATABASE_FILE}"), "chunks"
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text(f"SELECT id FROM {table} WHERE section = :trail ORDER BY ordinal"),
                {"trail": f"Guide{SEPARATOR}Alpha"},
            )
            return [int(row[0]) for row in rows]
    finally:
        engine.dispose()

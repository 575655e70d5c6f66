"""Vector spaces of an index folder as a base plus delta segments with tombstones.

A run that changes a few passages publishes a small delta segment (its new vectors and
the ids it removed) beside the base; readers lay the deltas over the base; a run merges
them into a new base when they pile up. Synthetic vectors through the store API.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from indexer.reading.sources import Document
from indexer.splitting.chunking import Chunk
from indexer.store.backends import open_store
from indexer.store.base import NewDocument
from indexer.store.manifest import Manifest

DIM = 32
PER_DOCUMENT = 100


def manifest(index_type: str = "flat") -> Manifest:
    return Manifest(
        model="test/model",
        model_fingerprint="abc",
        pooling="mean",
        dim=DIM,
        max_tokens=16,
        chunk_tokens=14,
        chunk_overlap=2,
        version="test",
        index_type=index_type,
    )


def unit_vectors(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def document(path: str, passages: int, seed: int) -> NewDocument:
    texts = [f"passage {seed} {i}" for i in range(passages)]
    chunks = [Chunk(i, 0, len(t), t) for i, t in enumerate(texts)]
    vectors = unit_vectors(passages, seed)
    source = Document(path=Path(path), text=" ".join(texts), size=1, mtime_ns=1, sha256="0" * 64)
    return NewDocument(source, chunks, {"contextual": vectors, "static": vectors[:, ::-1].copy()})


def new_index(folder: Path, vectors: int, index_type: str = "flat"):
    """An index folder of `vectors` synthetic passages in documents of 100."""
    store = open_store(folder, create=True)
    with store.writer():
        store.initialise(manifest(index_type))
        with store.change() as change:
            change.add_documents(
                [document(f"/d/{n}.txt", PER_DOCUMENT, n) for n in range(vectors // PER_DOCUMENT)]
            )
    return store


def edit_one_passage(store, path: str, seed: int) -> None:
    """Replace a document of the index by a one-passage one: one passage changed."""
    with store.writer(), store.change() as change:
        found = store.documents_under(Path("/"))
        change.remove_documents([found[path].id])
        change.add_documents([document(path, 1, seed)])


def files(folder: Path) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in folder.iterdir() if path.is_file()}


def space_bytes_written(folder: Path, before: dict[str, int]) -> int:
    """The bytes of the vector space files a publish added (the database left out)."""
    after = files(folder)
    return sum(size for name, size in after.items() if name not in before and "sqlite" not in name)


def publish_bytes(folder: Path, vectors: int) -> int:
    store = new_index(folder, vectors)
    try:
        edit_one_passage(store, "/d/0.txt", 10_001)  # a first delta (the first run merged)
        before = files(folder)
        edit_one_passage(store, "/d/1.txt", 10_002)
        return space_bytes_written(folder, before)
    finally:
        store.close()


def test_a_one_passage_edit_writes_the_same_bytes_whatever_the_index_size(tmp_path):
    small = publish_bytes(tmp_path / "small", 1_000)
    large = publish_bytes(tmp_path / "large", 20_000)
    assert 0 < large <= small + 1024, (small, large)
    assert large < 20_000 * DIM * 4 / 10  # far less than one space written whole


def ranked(store, queries: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each space's (scores, ids) of the 10 nearest passages of every query."""
    with store.snapshot() as snapshot:
        return {name: space.search(queries, 10) for name, space in snapshot.spaces.items()}


def delta_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.delta.npz"))


@pytest.mark.parametrize("structure", ["flat", "hnsw"])
def test_a_space_read_from_its_deltas_answers_as_the_merged_space(tmp_path, structure):
    store = new_index(tmp_path / "ix", 2_000, structure)
    try:
        with store.writer():
            store.merge_segments()  # a base that holds the first run's vectors
        for n in range(5):
            edit_one_passage(store, f"/d/{n}.txt", 20_000 + n)  # removals and additions
        with store.writer(), store.change() as change:
            change.add_documents([document("/d/new.txt", 30, 30_000)])
        assert len(delta_files(tmp_path / "ix")) == 2 * 6
        queries = unit_vectors(50, seed=99)
        from_deltas = ranked(store, queries)
        with store.writer():
            store.merge_segments()
        assert delta_files(tmp_path / "ix") == []
        merged = ranked(store, queries)
        with store.snapshot() as snapshot:
            assert {space.structure for space in snapshot.spaces.values()} == {structure}
            assert len(snapshot.spaces["contextual"]) == 2_000 - 5 * 99 + 30
        for name in ("contextual", "static"):
            assert np.array_equal(from_deltas[name][1], merged[name][1]), name
            assert np.array_equal(from_deltas[name][0], merged[name][0]), name
        assert store.verify().consistent
    finally:
        store.close()


def test_deltas_are_folded_when_they_would_be_too_many_and_merged_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXSEARCH_MAX_DELTAS", "3")
    store = new_index(tmp_path / "ix", 1_000)
    bases = sorted(p.name for p in (tmp_path / "ix").glob("*.faiss"))
    try:
        for n in range(2):
            edit_one_passage(store, f"/d/{n}.txt", 40_000 + n)
        assert deltas_of(store) == [1, 2, 3]  # the first run's, and two
        edit_one_passage(store, "/d/2.txt", 40_002)  # a fourth would be one too many:
        # the three small ones folded into one, the first run's (larger) kept
        assert deltas_of(store) == [1, 4]
        assert len(delta_files(tmp_path / "ix")) == 2 * 2
        assert sorted(p.name for p in (tmp_path / "ix").glob("*.faiss")) == bases
        edit_one_passage(store, "/d/3.txt", 40_003)
        assert deltas_of(store) == [1, 4, 5]
        monkeypatch.setenv("CTXSEARCH_MAX_DELTAS", "0")  # every run writes whole spaces
        edit_one_passage(store, "/d/4.txt", 40_004)
        assert delta_files(tmp_path / "ix") == []
        assert sorted(p.name for p in (tmp_path / "ix").glob("*.faiss")) == [
            "contextual-000006.faiss",
            "static-000006.faiss",
        ]
        with store.snapshot() as snapshot:
            assert len(snapshot.spaces["static"]) == 1_000 - 5 * 99
        assert store.verify().consistent
    finally:
        store.close()


def test_many_small_runs_never_rewrite_the_base_while_their_deltas_weigh_little(
    tmp_path, monkeypatch
):
    """A contextual fill publishes every few hundred passages: each of its runs adds a
    delta, and the deltas are folded, never merged into the base every few runs (which
    rewrote the whole space each time: a cost growing with the square of the index)."""
    monkeypatch.setenv("CTXSEARCH_MAX_DELTAS", "4")
    store = new_index(tmp_path / "ix", 1_000)
    bases = sorted(p.name for p in (tmp_path / "ix").glob("*.faiss"))
    queries = unit_vectors(5, seed=11)
    try:
        for n in range(30):
            with store.writer(), store.change() as change:
                change.add_documents([document(f"/new/{n}.txt", 20, 50_000 + n)])
            assert len(deltas_of(store)) <= 4
        assert sorted(p.name for p in (tmp_path / "ix").glob("*.faiss")) == bases
        found = ranked(store, queries)
        with store.writer():
            store.merge_segments()
        merged = ranked(store, queries)
        for name in ("contextual", "static"):
            assert np.array_equal(found[name][1], merged[name][1]), name
            assert np.allclose(found[name][0], merged[name][0]), name
        with store.snapshot() as snapshot:
            assert len(snapshot.spaces["contextual"]) == 1_000 + 30 * 20
    finally:
        store.close()


def deltas_of(store, space: str = "contextual") -> list[int]:
    return store.read_manifest().segments[space]["deltas"]


def test_a_missing_delta_is_named_by_verify_and_repaired_by_a_rebuild(tmp_path):
    store = new_index(tmp_path / "ix", 1_000)
    try:
        edit_one_passage(store, "/d/0.txt", 50_000)
        (tmp_path / "ix" / "static-000002.delta.npz").unlink()
        report = store.verify()
        assert not report.consistent
        assert any(
            "static-000002.delta.npz is missing: run `ctxsearch repair`" in p
            for p in report.problems
        ), report.problems

        def encode(texts: list[str]) -> dict[str, np.ndarray]:
            vectors = unit_vectors(len(texts), seed=len(texts))
            return {"contextual": vectors, "static": vectors}

        with store.writer():
            store.rebuild(encode)
        report = store.verify()
        assert report.consistent, report.problems
        assert report.counts["static_deltas"] == 0 and report.counts["static_vectors"] == 901
        assert delta_files(tmp_path / "ix") == []
    finally:
        store.close()


def test_an_index_from_before_segments_reads_its_one_file_per_space(tmp_path):
    """A manifest that names no segments: its generation's file is each space's base."""
    store = new_index(tmp_path / "ix", 1_000)
    queries = unit_vectors(5, seed=3)
    try:
        with store.writer():
            store.merge_segments()
        expected = ranked(store, queries)
    finally:
        store.close()
    database = sqlite3.connect(tmp_path / "ix" / "ctxsearch.sqlite")
    with database:  # as a manifest written before segments: the key is absent
        database.execute("DELETE FROM manifest WHERE key = 'segments'")
    database.close()
    store = open_store(tmp_path / "ix")
    try:
        found = ranked(store, queries)
        assert np.array_equal(found["static"][1], expected["static"][1])
        edit_one_passage(store, "/d/0.txt", 60_000)  # merges once: the structure is unknown
        assert delta_files(tmp_path / "ix") == []
        edit_one_passage(store, "/d/1.txt", 60_001)  # then deltas
        assert len(delta_files(tmp_path / "ix")) == 2
        assert store.verify().consistent
        with store.snapshot() as snapshot:
            assert len(snapshot.spaces["static"]) == 1_000 - 2 * 99
    finally:
        store.close()


def test_a_run_reads_the_vectors_of_the_base_of_its_deltas_and_of_its_own_additions(tmp_path):
    """`vectors` (for reusing the vectors of unchanged passages) sees the space as it
    stands in the run: base, deltas replayed, and what the run itself added."""
    store = new_index(tmp_path / "ix", 1_000)
    try:
        with store.writer():
            store.merge_segments()
        edit_one_passage(store, "/d/0.txt", 70_000)  # a delta holding one new vector
        with store.snapshot() as snapshot:
            in_delta = int(snapshot.spaces["contextual"].ids().max())  # the newest passage
        in_base = 150  # the 50th passage of /d/1.txt (ids follow the first run's order)
        with store.writer(), store.change() as change:
            [[added]] = change.add_documents([document("/d/extra.txt", 1, 70_001)])
            found = change.spaces["contextual"].vectors([in_base, in_delta, added])
        assert np.allclose(found[in_base], unit_vectors(PER_DOCUMENT, 1)[in_base - 101])
        assert np.allclose(found[in_delta], unit_vectors(1, 70_000)[0])
        assert np.allclose(found[added], unit_vectors(1, 70_001)[0])
    finally:
        store.close()

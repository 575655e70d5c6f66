"""The store contract: what every backend promises, run against each one for real.

The same tests run on the embedded store (a folder: SQLite + FTS5 + FAISS) and on
PostgreSQL + pgvector (a real server started for the session; see postgres_server.py).
"""

from __future__ import annotations

import operator
import re
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.errors import IndexLocked, IndexNotFound
from indexer.reading.sources import Document
from indexer.records.record import value_text
from indexer.splitting.chunking import Chunk
from indexer.store.backends import open_store, store_exists
from indexer.store.base import CandidateSearch, NewDocument, Store
from indexer.store.manifest import Manifest
from tests.conftest import ROOT

DIM = 4


def manifest() -> Manifest:
    return Manifest(
        model="test/model",
        model_fingerprint="abc",
        pooling="mean",
        dim=DIM,
        max_tokens=16,
        chunk_tokens=14,
        chunk_overlap=2,
        version="test",
    )


def new_store(target) -> Store:
    store = open_store(target, create=True)
    with store.writer():
        store.initialise(manifest())
    return store


def unit(position: int) -> np.ndarray:
    return np.eye(DIM, dtype=np.float32)[position % DIM]


def new_document(path: str, texts: list[str], first_axis: int = 0) -> NewDocument:
    chunks = [Chunk(i, 0, len(t), t) for i, t in enumerate(texts)]
    matrix = (
        np.stack([unit(first_axis + i) for i in range(len(texts))])
        if texts
        else np.zeros((0, DIM), np.float32)
    )
    document = Document(
        path=Path(path),
        text=" ".join(texts),
        size=1,
        mtime_ns=1,
        sha256="0" * 64,
        ctime_ns=2,
        inode=-3,
    )
    return NewDocument(document, chunks, {"contextual": matrix, "static": matrix})


def add(store: Store, path: str, texts: list[str], first_axis: int = 0) -> list[int]:
    with store.writer(), store.change() as change:
        return change.add_documents([new_document(path, texts, first_axis)])[0]


def paths(store: Store) -> list[str]:
    return sorted(store.documents_under(Path("/")))


def test_a_new_store_round_trips_documents_chunks_and_vectors(any_index):
    store = new_store(any_index)
    ids = add(store, "/docs/a.txt", ["alpha otters", "beta herons"])
    store.close()
    assert store_exists(any_index)
    reopened = open_store(any_index)
    try:
        assert reopened.manifest.model == "test/model" and reopened.manifest.generation == 1
        assert reopened.manifest.index_id
        with reopened.snapshot() as snapshot:
            assert snapshot.counts() == {"documents": 1, "chunks": 2}
            for space in ("contextual", "static"):
                assert snapshot.space_size(space) == 2
                [found] = snapshot.vector_search(space, unit(1)[None, :], 1)
                assert found[0][0] == ids[1] and found[0][1] == pytest.approx(1.0)
            assert snapshot.lexical_search("herons", 5)[0][0] == ids[1]
            assert snapshot.lexical_search("the of", 5) == []
            chunks = snapshot.chunks(ids)
            assert [chunks[i].text for i in ids] == ["alpha otters", "beta herons"]
            assert chunks[ids[0]].path == "/docs/a.txt"
            document, stored = snapshot.document(chunks[ids[0]].document_id)
            assert document.path == "/docs/a.txt" and [c.id for c in stored] == ids
    finally:
        reopened.close()


def test_open_refuses_a_target_without_an_index(any_index):
    assert not store_exists(any_index)
    with pytest.raises(IndexNotFound, match="no index here"):
        open_store(any_index)


def test_update_and_delete_keep_rows_and_every_space_in_step(any_index):
    store = new_store(any_index)
    first = add(store, "/docs/a.txt", ["one", "two"])
    add(store, "/docs/b.txt", ["three"], first_axis=2)
    old = store.documents_under(Path("/docs"))["/docs/a.txt"]
    with store.writer(), store.change() as change:
        assert change.remove_documents([old.id]) == 2
        replaced = change.add_documents([new_document("/docs/a.txt", ["uno"], 3)])[0]
    assert min(replaced) > max(first), "chunk ids are never reused"
    with store.snapshot() as snapshot:
        assert snapshot.counts() == {"documents": 2, "chunks": 2}
        assert snapshot.chunks(first) == {}
        for space in ("contextual", "static"):
            assert snapshot.space_size(space) == 2
            hits = snapshot.vector_search(space, unit(0)[None, :], 5)[0]
            assert {chunk_id for chunk_id, _ in hits} == {replaced[0], max(first) + 1}
        assert snapshot.lexical_search("one", 5) == []
    assert store.verify().consistent
    store.close()


def test_a_document_keeps_what_identifies_its_file_and_touching_records_it(any_index):
    """Size, mtime, ctime and inode come back as stored (inodes use all 64 bits, kept
    signed); touching a document records the new mtime, ctime and inode."""
    store = new_store(any_index)
    add(store, "/docs/a.txt", ["one"])
    stored = store.documents_under(Path("/docs"))["/docs/a.txt"]
    assert (stored.size, stored.mtime_ns, stored.ctime_ns, stored.inode) == (1, 1, 2, -3)
    touched = replace(new_document("/docs/a.txt", ["one"]).document, mtime_ns=42, ctime_ns=43)
    with store.writer(), store.change() as change:
        change.touch_document(stored.id, replace(touched, inode=2**63 - 1))
    again = store.documents_under(Path("/docs"))["/docs/a.txt"]
    assert (again.mtime_ns, again.ctime_ns, again.inode) == (42, 43, 2**63 - 1)
    store.close()


def test_documents_under_is_a_case_sensitive_folder_prefix(any_index):
    store = new_store(any_index)
    for path in ("/docs/a.txt", "/docs2/b.txt", "/d_cs/c.txt", "/case/Notes/n.md", "/d%s/e.txt"):
        add(store, path, ["x"])
    assert list(store.documents_under(Path("/docs"))) == ["/docs/a.txt"]
    assert list(store.documents_under(Path("/d_cs"))) == ["/d_cs/c.txt"]
    assert list(store.documents_under(Path("/case/notes"))) == []
    assert list(store.documents_under(Path("/case/Notes"))) == ["/case/Notes/n.md"]
    assert list(store.documents_under(Path("/d%s"))) == ["/d%s/e.txt"]
    store.close()


def test_a_root_indexed_on_its_own_keeps_its_documents_from_a_parent(any_index):
    store = new_store(any_index)
    add(store, "/t/a.txt", ["a"])
    add(store, "/t/build/b.txt", ["b"])
    with store.writer(), store.change() as change:
        change.record_root(Path("/t/build"))
    assert store.roots_under(Path("/t")) == ["/t/build"]
    assert list(store.documents_under(Path("/t"))) == ["/t/a.txt"]
    assert list(store.documents_under(Path("/t/build"))) == ["/t/build/b.txt"]
    store.close()


def test_a_root_that_is_one_file_holds_its_document_and_counts_it(any_index):
    """A file indexed as a root of its own (`index notes/todo.md`): its root's documents
    are that file's, whatever the names beside it; `ls` counts it under its own root."""
    store = new_store(any_index)
    for path in ("/n/todo.md", "/n/todo.md.bak", "/n/todo.mdx", "/n/other.md"):
        add(store, path, ["x"])
    with store.writer(), store.change() as change:
        change.record_root(Path("/n/todo.md"), '{"file": true}')
    assert list(store.documents_under(Path("/n/todo.md"))) == ["/n/todo.md"]
    assert store.root_rules(Path("/n/todo.md")) == '{"file": true}'
    folders = {row["root"].split(":")[-1]: row["documents"] for row in store.describe()["folders"]}
    assert folders == {"/n/todo.md": 1, "(no root)": 3}  # a PostgreSQL root is host:path
    store.close()


def test_a_failed_change_publishes_nothing(any_index):
    store = new_store(any_index)
    kept = add(store, "/docs/a.txt", ["kept"])
    with pytest.raises(RuntimeError), store.writer(), store.change() as change:
        change.add_documents([new_document("/docs/b.txt", ["lost"])])
        change.remove_documents([store.documents_under(Path("/docs"))["/docs/a.txt"].id])
        raise RuntimeError("crash in the middle of a run")
    with store.snapshot() as snapshot:
        assert snapshot.counts() == {"documents": 1, "chunks": 1}
        assert snapshot.manifest.generation == 1
        assert set(snapshot.chunks(kept)) == set(kept)
        assert snapshot.space_size("static") == 1
    assert store.verify().consistent
    store.close()


def test_a_change_that_changes_nothing_publishes_nothing(any_index):
    store = new_store(any_index)
    add(store, "/docs/a.txt", ["one"])
    with store.writer(), store.change() as change:
        change.remove_documents([])
    assert open_store(any_index).manifest.generation == 1
    store.close()


def test_a_second_writer_is_refused_or_waits(any_index):
    store = new_store(any_index)
    other = open_store(any_index)
    with store.writer():
        with pytest.raises(IndexLocked, match="--wait"), other.writer():
            pass
        waited = threading.Event()

        def wait_then_write() -> None:
            with other.writer(wait=True):
                waited.set()

        waiter = threading.Thread(target=wait_then_write)
        waiter.start()
        assert not waited.wait(0.5), "the second writer must wait for the first"
    waiter.join(10)
    assert waited.is_set()
    other.close()
    store.close()


def test_a_snapshot_sees_one_state_while_a_writer_publishes(any_index):
    store = new_store(any_index)
    add(store, "/docs/a.txt", ["alpha"])
    reader = open_store(any_index)
    with reader.snapshot() as before:
        # the state is the one of the first read (PostgreSQL begins there; the folder
        # store at the snapshot's start): every later read sees it, whatever is published
        assert before.counts() == {"documents": 1, "chunks": 1}
        add(store, "/docs/b.txt", ["beta"], first_axis=1)
        assert before.counts() == {"documents": 1, "chunks": 1}
        assert before.lexical_search("beta", 5) == []
        assert len(before.vector_search("contextual", unit(1)[None, :], 5)[0]) == 1
    with reader.snapshot() as after:
        assert after.counts() == {"documents": 2, "chunks": 2}
        assert after.manifest.generation == 2
    reader.close()
    store.close()


def test_verify_names_a_space_that_lost_vectors_and_rebuild_restores_it(any_index):
    store = new_store(any_index)
    ids = add(store, "/docs/a.txt", ["one", "two"])
    damage(any_index, ids[0])
    damaged = open_store(any_index)
    generation = damaged.manifest.generation  # a folder's damage() merged its segments first
    damaged.close()
    report = store.verify()
    assert not report.consistent and any("contextual space" in p for p in report.problems)

    def encode(texts: list[str]) -> dict[str, np.ndarray]:
        matrix = np.stack([unit(len(t)) for t in texts])
        return {"contextual": matrix, "static": matrix}

    with store.writer():
        result = store.rebuild(encode)
    assert result == {"chunks": 2, "generation": generation + 1}
    assert store.verify().consistent
    with store.snapshot() as snapshot:
        assert snapshot.space_size("contextual") == 2
    store.close()


def damage(target, chunk_id: int) -> None:
    """Remove one chunk's contextual vector behind the store's back."""
    if isinstance(target, Path):
        import faiss

        store = open_store(target)
        with store.writer():
            store.merge_segments()  # the space whole in one base file
        store.close()
        [path] = sorted(target.glob("contextual-*.faiss"))
        index = faiss.read_index(str(path))
        index.remove_ids(np.asarray([chunk_id], dtype=np.int64))
        faiss.write_index(index, str(path))
        return
    from sqlalchemy import text

    store = open_store(target)
    with store.engine.begin() as connection:
        connection.execute(
            text("DELETE FROM space_contextual WHERE chunk_id = :i"), {"i": chunk_id}
        )
    store.close()


_KILLED_WRITER = """
import os, signal, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from tests.indexer.store.test_store_contract import new_document
from indexer.store.backends import open_store
store = open_store(sys.argv[1] if "://" in sys.argv[1] else Path(sys.argv[1]))
with store.writer(), store.change() as change:
    change.remove_documents([store.documents_under(Path("/docs"))["/docs/a.txt"].id])
    change.add_documents([new_document("/docs/b.txt", ["half written"])])
    print("in the middle", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_writer_killed_in_the_middle_of_a_change_leaves_the_old_state(any_index):
    store = new_store(any_index)
    kept = add(store, "/docs/a.txt", ["kept"])
    store.close()
    process = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER.format(root=str(ROOT)), str(any_index)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == -signal.SIGKILL, process.stderr
    assert "in the middle" in process.stdout
    store = open_store(any_index)
    assert store.verify().consistent
    assert paths(store) == ["/docs/a.txt"]
    with store.snapshot() as snapshot:
        assert set(snapshot.chunks(kept)) == set(kept) and snapshot.manifest.generation == 1
    with store.writer():  # the killed writer's lock is gone
        pass
    store.close()


def test_describe_reports_the_backend_counts_and_roots(any_index):
    store = new_store(any_index)
    add(store, "/docs/a.txt", ["one"])
    with store.writer(), store.change() as change:
        change.record_root(Path("/docs"))
    described = store.describe()
    assert described["documents"] == 1 and described["chunks"] == 1
    assert described["backend"] in ("sqlite+faiss", "postgresql+pgvector")
    assert described["roots"][0].endswith("/docs")
    assert described["manifest"]["generation"] == 2
    store.close()


def test_an_hnsw_structure_finds_what_exact_search_finds_and_can_be_dropped(any_index):
    store = new_store(any_index)
    ids = [add(store, f"/docs/{n:02d}.txt", [f"note {n}"], first_axis=n)[0] for n in range(30)]
    exact = {ids[n] for n in range(2, 30, DIM)}  # the vectors equal to the query
    for structure in ("hnsw", "flat"):
        with store.writer(), store.change() as change:
            change.set_index_type(structure)
        assert store.manifest.index_type == structure and store.verify().consistent
        with store.snapshot() as snapshot:
            hits = snapshot.vector_search("contextual", unit(2)[None, :], 10)[0]
        assert {chunk_id for chunk_id, score in hits if score > 0.99} == exact, structure
    store.close()


def test_stored_vectors_come_back_by_chunk_id_in_every_structure(any_index):
    store = new_store(any_index)
    ids = add(store, "/docs/a.txt", ["one", "two", "three"], first_axis=1)
    other = add(store, "/docs/b.txt", ["four"], first_axis=0)
    with store.writer(), store.change() as change:
        change.remove_documents([store.documents_under(Path("/docs"))["/docs/b.txt"].id])
    for structure in ("hnsw", "flat"):
        with store.writer(), store.change() as change:
            change.set_index_type(structure)
        with store.snapshot() as snapshot:
            for space in ("contextual", "static"):
                # a removed chunk and an id never given are left out, not zeros
                found = snapshot.vectors(space, [*ids, *other, 10**9])
                assert sorted(found) == sorted(ids), structure
                for n, chunk_id in enumerate(ids):
                    assert found[chunk_id].dtype == np.float32
                    np.testing.assert_array_equal(found[chunk_id], unit(1 + n))
                assert snapshot.vectors(space, []) == {}
            [document] = snapshot.documents_at("/docs/a.txt")
            assert document.path == "/docs/a.txt"
            assert snapshot.documents_at("/docs/b.txt") == []
            assert snapshot.documents_at("/docs") == []  # exact paths, not prefixes


def graph_present(target, store) -> bool:
    """Whether the contextual space is an HNSW graph now."""
    if isinstance(target, Path):
        with store.snapshot() as snapshot:
            return snapshot.spaces["contextual"].structure == "hnsw"
    from indexer.store.postgres.vectors import has_graph

    with store.engine.connect() as connection:
        return has_graph(connection, "contextual")


def test_auto_makes_a_graph_once_the_space_reaches_the_threshold(any_index, monkeypatch):
    """`auto` needs to know only whether a space reached the threshold: a folder counts
    the passages, PostgreSQL counts no further than the threshold (a publish's cost)."""
    monkeypatch.setattr("indexer.store.index_types.HNSW_FROM_VECTORS", 5)
    store = new_store(any_index)
    for n in range(4):
        add(store, f"/docs/{n}.txt", [f"note {n}"], first_axis=n)
    assert not graph_present(any_index, store)
    add(store, "/docs/4.txt", ["note 4"], first_axis=4)
    assert graph_present(any_index, store) and store.verify().consistent
    with store.writer(), store.change() as change:
        change.remove_documents([store.documents_under(Path("/"))["/docs/4.txt"].id])
    assert not graph_present(any_index, store) and store.verify().consistent
    store.close()


def test_filtered_searches_find_k_allowed_chunks_in_every_structure(any_index):
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        documents = [
            new_document(f"/docs/{'Far' if n < 12 else 'near'}/{n:02d}.txt", [f"otter {n}"], n)
            for n in range(40)
        ]
        change.add_documents(documents)
    far = make_filter(under=["/docs/Far"])
    lower = make_filter(under=["/docs/far"])  # paths compare case-sensitively
    for structure in ("hnsw", "flat"):
        with store.writer(), store.change() as change:
            change.set_index_type(structure)
        with store.snapshot() as snapshot:
            query = unit(1)[None, :]
            hits = snapshot.vector_search("contextual", query, 12, far)[0]
            chunks = snapshot.chunks(chunk_id for chunk_id, _ in hits)
            assert len(hits) == 12 and all("/docs/Far/" in c.path for c in chunks.values())
            assert snapshot.vector_search("contextual", query, 12, lower)[0] == []
            assert snapshot.chunk_count(far) == 12 and snapshot.chunk_count() == 40
            lexical = snapshot.lexical_search("otter", 40, far)
            assert len(lexical) == 12 and {i for i, _ in lexical} == {i for i, _ in hits}
            assert contextual_cosines(snapshot, unit(1), 12, far) == pytest.approx(dict(hits))
    store.close()


def contextual_cosines(snapshot, query: np.ndarray, k: int, where=None) -> dict[int, float]:
    """The contextual cosines `search` looks up for the `k` static hits of `query` (each
    chunk's two vectors are the same here, so they are its contextual search's scores)."""
    ask = CandidateSearch({"static": query}, None, k, where, cosine=("contextual", query))
    found = snapshot.search(ask)
    assert set(found.cosines) == {chunk_id for chunk_id, _ in found.vector["static"]}
    return found.cosines


def new_record(
    record_id: str, texts: list[str], metadata: dict, first_axis: int = 0
) -> NewDocument:
    item = new_document(f"record:{record_id}", texts, first_axis)
    return NewDocument(item.document, item.chunks, item.vectors, metadata)


def test_records_keep_their_metadata_and_where_filters_them_inside_every_search(any_index):
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents(
            [new_document(f"/docs/{n:02d}.txt", [f"otter {n}"], n) for n in range(6)]
        )
        change.add_documents(
            [
                new_record(
                    f"r{n}",
                    [f"otter record {n}"],
                    {"lang": "en" if n < 9 else "fr", "n": n, "ok": True},
                    n,
                )
                for n in range(30)
            ]
        )
    english, numbered = make_filter(where={"lang": "en"}), make_filter(where=["n=3", "ok=true"])
    for structure in ("hnsw", "flat"):
        with store.writer(), store.change() as change:
            change.set_index_type(structure)
        with store.snapshot() as snapshot:
            query = unit(1)[None, :]
            hits = snapshot.vector_search("contextual", query, 9, english)[0]
            chunks = snapshot.chunks(chunk_id for chunk_id, _ in hits)
            assert len(hits) == 9, structure
            assert all(
                c.path.startswith("record:r") and '"lang": "en"' in c.metadata_json
                for c in chunks.values()
            )
            assert snapshot.chunk_count(english) == 9 and snapshot.chunk_count() == 36
            lexical = snapshot.lexical_search("otter", 40, english)
            assert {i for i, _ in lexical} == {i for i, _ in hits}
            only = snapshot.vector_search("contextual", query, 5, numbered)[0]
            assert [snapshot.chunks([i])[i].path for i, _ in only] == ["record:r3"]
            assert (
                snapshot.vector_search("contextual", query, 5, make_filter(where={"n": 3.0}))[0]
                == only
            )
            assert (
                snapshot.vector_search("contextual", query, 5, make_filter(where={"lang": "EN"}))[0]
                == []
            )
    assert paths(store) == [f"/docs/{n:02d}.txt" for n in range(6)]  # a folder run sees no record
    with store.writer(), store.change() as change:
        found = change.find_records(["r3", "r4", "nope", "/docs/00.txt"])
        assert sorted(found) == ["r3", "r4"]
        change.set_record_metadata(found["r3"].document_id, {"lang": "fr"})
        change.remove_documents([found["r4"].document_id])
    with store.snapshot() as snapshot:
        assert snapshot.chunk_count(english) == 7  # r3 is French now, r4 is gone
        assert snapshot.chunk_count(make_filter(where={"n": 3})) == 0
    assert store.verify().consistent
    store.close()


def test_a_where_value_is_typed_one_way_from_text_and_from_json(any_index):
    """Numbers compare as numbers (2023 = 2023.0 = 2.023e3) whether the value came typed
    (JSON) or as text (`--where`, `where=`); a JSON string stays a string; text that
    spells a number also matches the string it spells."""
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    years = {"int": 2023, "float": 2023.0, "text": "2023.0", "other": 2024}
    codes = {"code-text": "007", "code-number": 7}
    with store.writer(), store.change() as change:
        change.add_documents(
            [
                new_record(name, [name], {"year": year}, n)
                for n, (name, year) in enumerate(years.items())
            ]
            + [new_record(name, [name], {"code": code}) for name, code in codes.items()]
        )

    def matching(where) -> set[str]:
        with store.snapshot() as snapshot:
            chunks = snapshot.chunks(snapshot.allowed_chunks(make_filter(where=where)).tolist())
        return {chunk.path.removeprefix("record:") for chunk in chunks.values()}

    numbers = {"int", "float"}
    assert matching(["year=2023.0"]) == numbers | {"text"}  # the number, or the same text
    assert matching(["year=2023"]) == matching(["year=2.023e3"]) == numbers
    assert matching({"year": 2023.0}) == matching({"year": 2023}) == numbers
    assert matching({"year": "2023.0"}) == {"text"}  # a JSON string is a string
    assert matching(["code=007"]) == matching({"code": "007"}) == {"code-text"}  # no number
    assert matching(["code=7.0"]) == {"code-number"}
    assert make_filter(where=["year=2023.0"]).to_dict()["where"] == {"year": "2023.0"}
    store.close()


@pytest.fixture
def neighbour_indexes(any_index, tmp_path) -> tuple[str | Path, str | Path]:
    """Two index targets side by side: two folders, or, on PostgreSQL, the `public` schema
    and the default schema of one new database whose pgvector lives in `public`."""
    if isinstance(any_index, Path):
        return tmp_path / "public", tmp_path / "default"
    import uuid

    from tests.support.postgres_server import create_database

    url = create_database(any_index.split("?")[0], f"neighbours_{uuid.uuid4().hex[:8]}")
    return f"{url}?index=public", url


@pytest.mark.parametrize("public_first", [True, False], ids=["public-first", "default-first"])
def test_two_indexes_in_one_database_never_see_each_other(neighbour_indexes, public_first):
    """Each index reads and writes only its own tables, whichever was made first."""
    from indexer.store.filters import make_filter

    public, default = neighbour_indexes
    first, second = (public, default) if public_first else (default, public)
    one = new_store(first)
    add(one, "/team/a/otters.txt", ["alpha otters", "river otters"])
    assert not store_exists(second)
    with pytest.raises(IndexNotFound, match="no index here"):
        open_store(second)
    two = new_store(second)
    add(two, "/team/b/herons.txt", ["beta herons"], first_axis=2)
    with one.writer(), one.change() as change:  # the first index changes after the second
        change.add_documents([new_document("/team/a/voles.txt", ["water voles"], 3)])
    expected = {
        first: (["/team/a/otters.txt", "/team/a/voles.txt"], "otters", "herons"),
        second: (["/team/b/herons.txt"], "herons", "otters"),
    }
    one.close()
    two.close()
    for target, (own_paths, own_word, other_word) in expected.items():
        store = open_store(target)
        try:
            assert paths(store) == own_paths, target
            assert store.verify().consistent, target
            assert store.describe()["documents"] == len(own_paths)
            with store.snapshot() as snapshot:
                chunks = 3 if len(own_paths) == 2 else 1
                assert snapshot.counts() == {"documents": len(own_paths), "chunks": chunks}
                assert snapshot.space_size("contextual") == chunks
                assert snapshot.lexical_search(own_word, 5) and not snapshot.lexical_search(
                    other_word, 5
                )
                everything = make_filter(paths="*.txt")
                for where in (None, everything):
                    [hits] = snapshot.vector_search("contextual", unit(0)[None, :], 10, where)
                    found = snapshot.chunks([chunk_id for chunk_id, _ in hits])
                    assert sorted({c.path for c in found.values()}) == own_paths, (target, where)
        finally:
            store.close()


def test_a_signal_inside_the_commit_is_the_error_and_keeps_what_was_committed(any_index):
    """A Ctrl-C rising inside `commit()` after the database committed: the caller gets
    the KeyboardInterrupt (not a rollback's complaint), and the index holds the run."""
    from sqlalchemy import event
    from sqlalchemy.orm import Session

    store = new_store(any_index)
    add(store, "/docs/a.txt", ["one"])

    def interrupt(_session: Session) -> None:
        raise KeyboardInterrupt

    event.listen(Session, "after_commit", interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            add(store, "/docs/b.txt", ["two"])
    finally:
        event.remove(Session, "after_commit", interrupt)
    store.close()
    assert_reopened_holds(any_index, ["/docs/a.txt", "/docs/b.txt"])


def test_a_change_a_signal_stopped_on_its_way_in_ends_with_the_writer_lock(any_index, monkeypatch):
    """A Ctrl-C landing between a change's enter and its body (inside contextlib's
    `__enter__`) leaves a change that no `with` will leave. It is rolled back when the
    writer lock is let go, and the garbage collector's clean-up later says nothing."""
    store = new_store(any_index)
    add(store, "/docs/a.txt", ["one"])
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with store.writer():
        entered = store.change()
        change = entered.__enter__()
        change.add_documents([new_document("/docs/b.txt", ["two"], first_axis=1)])
    del entered, change  # the last references: the change's generator is closed here
    assert unraisable == []
    assert paths(store) == ["/docs/a.txt"]
    add(store, "/docs/c.txt", ["three"], first_axis=2)
    store.close()
    assert_reopened_holds(any_index, ["/docs/a.txt", "/docs/c.txt"])


def assert_reopened_holds(target, documents: list[str]) -> None:
    """The index at `target`, opened anew, holds these documents and verifies."""
    reopened = open_store(target)
    try:
        assert paths(reopened) == documents
        assert reopened.verify().consistent, reopened.verify().problems
    finally:
        reopened.close()


def keyed_document(path: str, texts: list[str], axes: list[int]) -> NewDocument:
    """A document whose chunks have different vectors in the two spaces (static: the
    next axis), so that a space's vectors cannot pass for the other's."""
    document = new_document(path, texts)
    contextual = np.stack([unit(axis) for axis in axes])
    static = np.stack([unit(axis + 1) for axis in axes])
    return NewDocument(
        document.document, document.chunks, {"contextual": contextual, "static": static}
    )


def test_stored_vectors_are_found_by_content_key_in_every_space(any_index):
    """Item 2 of issue 26: a change finds the vectors of passages by content key,
    whichever document holds them, those added earlier in the same change included;
    keys no chunk has are left out."""
    from indexer.store.content_keys import content_keys

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents([keyed_document("/docs/a.txt", ["alpha", "beta"], [0, 1])])
    with store.writer(), store.change() as change:
        alpha, beta, gamma = content_keys(["alpha", "beta", "gamma"], change.manifest)
        found = change.vectors_for([alpha, gamma, beta, alpha])
        assert set(found) == {alpha, beta}
        for key, axis in ((alpha, 0), (beta, 1)):
            assert set(found[key]) == {"contextual", "static"}
            np.testing.assert_array_equal(found[key]["contextual"], unit(axis))
            np.testing.assert_array_equal(found[key]["static"], unit(axis + 1))
        change.add_documents([keyed_document("/docs/b.txt", ["gamma", "alpha"], [2, 3])])
        found = change.vectors_for([gamma])  # added in this very change
        np.testing.assert_array_equal(found[gamma]["contextual"], unit(2))
        np.testing.assert_array_equal(found[gamma]["static"], unit(3))
    store.close()


def test_a_search_reads_its_candidates_rows_and_content_keys(any_index):
    """`search` gives each candidate's row and its document's content key: one key for
    one text, records left out; and each space's size, or how many chunks a filter
    allows."""
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents(
            [
                new_document("/docs/a.txt", ["alpha"], 0),
                new_document("/docs/b.txt", ["beta"], 1),
                new_document("/docs/c.txt", ["alpha"], 2),
                new_record("r1", ["alpha"], {"lang": "en"}, 3),
            ]
        )
    texts = make_filter(types="txt")
    with store.snapshot() as snapshot:
        found = snapshot.search(CandidateSearch({"contextual": unit(0)}, "alpha", 4))
        [nearest] = snapshot.vector_search("contextual", unit(0)[None], 4)
        assert found.vector["contextual"] == nearest
        assert found.lexical == snapshot.lexical_search("alpha", 4)
        assert found.chunks == snapshot.chunks(found.chunks)
        assert found.sizes == {"contextual": 4}
        filtered = snapshot.search(CandidateSearch({"static": unit(0)}, None, 4, texts))
        assert filtered.sizes == {"static": 3} and filtered.lexical is None
    documents = {chunk.path: chunk.document_id for chunk in found.chunks.values()}
    assert sorted(documents) == ["/docs/a.txt", "/docs/b.txt", "/docs/c.txt", "record:r1"]
    keys = found.content_keys
    a, b, c = (keys[documents[f"/docs/{name}.txt"]] for name in "abc")
    assert a == c != b and documents["record:r1"] not in keys
    store.close()


@pytest.mark.parametrize("sides", ["both", "vectors", "text"])
def test_a_search_reads_how_many_passages_each_candidates_file_holds(any_index, sides):
    """`search` gives, for each candidate's file (records left out), how many passages
    it holds, and how many passages the search could return: all, or those a filter
    allows (its words too), whichever sides it searches."""
    from indexer.store.filters import make_filter
    from indexer.store.word_filter import WordFilter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents(
            [
                new_document("/docs/long.txt", [f"alpha {n}" for n in range(5)], 0),
                new_document("/docs/short.md", ["alpha beta"], 1),
                new_record("r1", ["alpha", "alpha gamma"], {"lang": "en"}, 2),
            ]
        )
    vectors = {} if sides == "text" else {"contextual": unit(0)}
    text = None if sides == "vectors" else "alpha"
    with store.snapshot() as snapshot:
        found = snapshot.search(CandidateSearch(vectors, text, 10))
        filtered = snapshot.search(CandidateSearch(vectors, text, 10, make_filter(types="txt")))
        worded = snapshot.search(
            CandidateSearch(vectors, text, 10, make_filter(words=WordFilter(("beta",))))
        )
    documents = {chunk.path: chunk.document_id for chunk in found.chunks.values()}
    assert found.passages == {documents["/docs/long.txt"]: 5, documents["/docs/short.md"]: 1}
    assert found.searched == 8
    assert filtered.passages == {documents["/docs/long.txt"]: 5} and filtered.searched == 5
    assert worded.passages == {documents["/docs/short.md"]: 1} and worded.searched == 1
    store.close()


def test_a_search_scores_each_candidate_on_the_side_that_missed_it_as_that_side_would(
    any_index,
):
    """A candidate only one side listed gets its exact score on the other: its cosine
    (as the contextual search scores it), its BM25 when it holds a query term (as the
    lexical search scores it); the BM25 only when the lexical list is full, since a
    shorter one holds every chunk with a query term."""
    store = new_store(any_index)
    ids = add(store, "/docs/a.txt", ["herons herons herons", "otters and herons", "otters"])
    deep = {"contextual": unit(1)}
    with store.snapshot() as snapshot:
        cosines = dict(snapshot.vector_search("contextual", unit(1)[None], 3)[0])
        bm25 = dict(snapshot.lexical_search("herons", 3))
        ask = CandidateSearch(deep, "herons", 1, cosine=("contextual", unit(1)))
        found = snapshot.search(replace(ask, complete_lexical=True))
        assert found.vector["contextual"] == [(ids[1], pytest.approx(1.0))]
        assert found.lexical == [(ids[0], pytest.approx(bm25[ids[0]]))]
        assert found.cosines == {ids[0]: pytest.approx(cosines[ids[0]])}
        assert found.bm25 == {ids[1]: pytest.approx(bm25[ids[1]])}
        assert set(found.chunks) == {ids[0], ids[1]}
        assert snapshot.search(ask).bm25 == {}  # not asked
        short = snapshot.search(replace(ask, text="otters", depth=3, complete_lexical=True))
        assert len(short.lexical) == 2 and short.bm25 == {}
        assert snapshot.search(CandidateSearch(deep, "the of", 3)).lexical == []
    store.close()


def test_shown_names_each_hits_copies_in_path_order_with_the_first_ones_passage(any_index):
    """`shown` lists the files with a hit's text that the filter allows, in path order,
    and the first one's passage at the hit's place when it has the hit's text (a copy
    cut otherwise has none there); records have no copies."""
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents(
            [
                new_document("/docs/b.txt", ["alpha", "beta"]),
                new_document("/docs/a.md", ["alpha", "beta"]),
                new_document("/docs/c.txt", ["alpha", "gamma"]),
                new_document("/docs/0.txt", ["alpha beta"]),  # the same text, cut otherwise
                new_record("r1", ["alpha", "beta"], {"lang": "en"}),
            ]
        )
    with store.snapshot() as snapshot:
        rows = snapshot.chunks(range(1, 20)).values()
        chunk = {(c.path, c.ordinal): c for c in rows}
        b_alpha, b_beta = chunk["/docs/b.txt", 0], chunk["/docs/b.txt", 1]
        a_beta, record = chunk["/docs/a.md", 1], chunk["record:r1", 0]
        shown = snapshot.shown([b_beta.id, b_alpha.id, record.id], [])
        in_markdown = snapshot.shown([b_beta.id], [], make_filter(types="md"))
        c_gamma = chunk["/docs/c.txt", 1]
        in_texts = snapshot.shown([b_beta.id, c_gamma.id], [], make_filter(types="txt"))
    names = {c.document_id: c.path for c in rows}
    assert [names[d] for d, _ in shown.copies[b_beta.id].files] == [
        "/docs/0.txt", "/docs/a.md", "/docs/b.txt"
    ]  # fmt: skip
    assert all(names[d] == path for d, path in shown.copies[b_beta.id].files)
    assert shown.copies[b_beta.id].first_passage is None  # 0.txt has no second passage
    assert shown.copies[b_alpha.id].first_passage is None  # its first says "alpha beta"
    assert record.id not in shown.copies
    assert in_markdown.copies[b_beta.id].files == [(a_beta.document_id, "/docs/a.md")]
    assert in_markdown.copies[b_beta.id].first_passage == a_beta
    found = in_texts.copies[b_beta.id]
    assert [path for _, path in found.files] == ["/docs/0.txt", "/docs/b.txt"]
    assert [path for _, path in in_texts.copies[c_gamma.id].files] == ["/docs/c.txt"]
    store.close()


def test_vectors_of_chunks_removed_in_the_change_are_still_found(any_index):
    """An edited file's old rows are replaced in the same transaction that encodes its new
    passages: the vectors of the removed chunks stay findable until the change ends."""
    from indexer.store.content_keys import content_keys

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents([keyed_document("/docs/a.txt", ["alpha", "beta"], [0, 1])])
    old = store.documents_under(Path("/docs"))["/docs/a.txt"]
    with store.writer(), store.change() as change:
        assert change.remove_documents([old.id]) == 2
        alpha, beta = content_keys(["alpha", "beta"], change.manifest)
        found = change.vectors_for([beta, alpha])
        assert set(found) == {alpha, beta}
        np.testing.assert_array_equal(found[beta]["contextual"], unit(1))
        np.testing.assert_array_equal(found[beta]["static"], unit(2))
    with store.writer(), store.change() as change:  # gone once that change published
        assert change.vectors_for(content_keys(["alpha", "beta"], change.manifest)) == {}
    store.close()


def test_a_content_key_depends_on_the_settings_the_vectors_were_made_with(any_index):
    """Vectors made in another precision (or with another model, pooling or static
    space) are not those of this change's key: they are not found."""
    from indexer.store.content_keys import content_keys

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents([keyed_document("/docs/a.txt", ["alpha"], [0])])
    with store.writer(), store.change() as change:
        [fp32] = content_keys(["alpha"], change.manifest)
        change.set_precision("bf16")
        [bf16] = content_keys(["alpha"], change.manifest)
        assert bf16 != fp32
        assert change.vectors_for([bf16]) == {} and set(change.vectors_for([fp32])) == {fp32}


def test_the_reads_behind_hints_answer_alike_on_every_backend(any_index):
    """`search.hints` asks whether a filter meets any document, the roots, the metadata
    keys and a value's stored spellings but for case."""
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.record_root(Path("/docs"))
        change.add_documents([new_document("/docs/a.md", ["otters"])])
    with store.snapshot() as snapshot:
        assert snapshot.metadata_keys() == []
    with store.writer(), store.change() as change:
        change.add_documents(
            [
                new_record("r1", ["herons"], {"lang": "en", "public": True}),
                new_record("r2", ["kettles"], {"lang": "EN"}),
            ]
        )
    with store.snapshot() as snapshot:
        assert snapshot.roots() == ["/docs"]
        assert snapshot.has_documents(make_filter(under="/docs"))
        assert not snapshot.has_documents(make_filter(under="/nope"))
        assert snapshot.has_documents(make_filter(types="md"))
        assert not snapshot.has_documents(make_filter(types="pdf"))
        assert not snapshot.has_documents(make_filter(where=["public=True"]))
        assert snapshot.metadata_keys() == ["lang", "public"]
        assert snapshot.metadata_values_ignoring_case("public", "True") == ["true"]
        assert snapshot.metadata_values_ignoring_case("lang", "En") == ["EN", "en"]
        assert snapshot.metadata_values_ignoring_case("lang", "de") == []
    store.close()


def test_shown_term_evidence_holders_are_the_chunks_each_term_scores_on_every_backend(
    any_index,
):
    """The match signal's coverage asks, for all a query's terms at once, how many chunks
    hold each and which hits do: the chunks a lexical search for that term alone finds,
    stems and phrases alike."""
    store = new_store(any_index)
    texts = ["Otters float while sleeping", "a snake_case name", "the otter sleeps", "kettles"]
    with store.writer(), store.change() as change:
        change.add_documents([new_document("/docs/a.md", texts)])
    terms = ["otters", "sleep", "snake_case", "the", "absent"]
    with store.snapshot() as snapshot:
        ids = sorted(snapshot.chunks(range(1, 10)))
        evidence = snapshot.shown(ids, terms).terms
        alone = {
            term: {chunk_id for chunk_id, _ in snapshot.lexical_search(term, 10)} & set(ids)
            for term in terms
        }
        assert snapshot.shown([], terms).terms.counts == {}
        assert snapshot.shown(ids[:1], []).terms.counts == {}
        total = snapshot.chunk_count()
    store.close()
    assert evidence.holders == alone and evidence.chunks == total == 4
    held = evidence.holders
    assert len(held["otters"]) == 2 and len(held["sleep"]) == 2 and len(held["snake_case"]) == 1
    assert held["absent"] == set()
    counts = evidence.counts
    assert [counts[term] for term in ("otters", "sleep", "snake_case", "absent")] == [2, 2, 1, 0]


def test_replacing_a_document_keeps_the_rows_and_vectors_of_its_unchanged_passages(any_index):
    """An edited file is written in place: its passages whose text is unchanged keep their
    ids (so their vectors and lexical entries stay), moved to their new places; only the
    others are removed and added, in every space and in the lexical space."""
    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents([keyed_document("/docs/a.txt", ["alpha", "beta", "gamma"], [0, 1, 2])])
        change.add_documents([keyed_document("/docs/b.txt", ["other"], [3])])
    old = store.documents_under(Path("/docs"))["/docs/a.txt"]
    with store.snapshot() as snapshot:
        before = {chunk.text: chunk.id for chunk in snapshot.document(old.id)[1]}
    edited = keyed_document("/docs/a.txt", ["prologue", "alpha", "beta"], [3, 0, 1])
    texts = [chunk.text for chunk in edited.chunks]
    starts = [len(" ".join(texts[:n])) + (1 if n else 0) for n in range(len(texts))]
    chunks = [
        Chunk(n, start, start + len(t), t, line=n + 1, heading="H")
        for n, (start, t) in enumerate(zip(starts, texts, strict=True))
    ]
    document = Document(
        path=Path("/docs/a.txt"), text=" ".join(texts), size=2, mtime_ns=7, sha256="1" * 64
    )
    with store.writer(), store.change() as change:
        ids = change.replace_document(old.id, NewDocument(document, chunks, edited.vectors))
    assert ids[1:] == [before["alpha"], before["beta"]]
    assert ids[0] not in before.values()
    assert store.documents_under(Path("/docs"))["/docs/a.txt"].mtime_ns == 7
    with store.snapshot() as snapshot:
        stored = snapshot.document(old.id)[1]
        assert [(c.id, c.ordinal, c.start, c.text, c.line, c.heading) for c in stored] == [
            (ids[n], n, starts[n], texts[n], n + 1, "H") for n in range(3)
        ]
        assert snapshot.counts() == {"documents": 2, "chunks": 4}
        for space, shift in (("contextual", 0), ("static", 1)):
            assert snapshot.space_size(space) == 4
            found = snapshot.vectors(space, ids)
            for chunk_id, axis in zip(ids, [3, 0, 1], strict=True):
                np.testing.assert_array_equal(found[chunk_id], unit(axis + shift))
        assert snapshot.lexical_search("gamma", 5) == []
        assert [chunk_id for chunk_id, _ in snapshot.lexical_search("prologue", 5)] == [ids[0]]
        assert [chunk_id for chunk_id, _ in snapshot.lexical_search("alpha", 5)] == [ids[1]]
    assert store.verify().consistent
    store.close()


def quantized_forms(target) -> tuple[str, ...]:
    """The quantized forms a backend has (`index --quantize`): FAISS's codes, pgvector's."""
    return ("int8", "binary") if isinstance(target, Path) else ("halfvec", "binary")


def test_every_quantized_form_finds_what_exact_search_finds_with_float32_cosines(any_index):
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents(
            [new_document(f"/docs/{'a' if n < 12 else 'b'}/{n:02d}.txt", [f"otter {n}"], n)
             for n in range(40)]
        )  # fmt: skip
    near = make_filter(under=["/docs/a"])
    for form in (*quantized_forms(any_index), "none"):
        with store.writer(), store.change() as change:
            change.set_index_type("hnsw")
            change.set_quantize(form)
        assert store.manifest.quantize == form and store.verify().consistent
        assert store.describe()["quantization"] == form
        with store.snapshot() as snapshot:
            hits = snapshot.vector_search("contextual", unit(1)[None, :], 10)[0]
            assert {i for i, s in hits if s > 0.99} == {i for i, _ in hits}, form
            allowed = snapshot.vector_search("contextual", unit(1)[None, :], 3, near)[0]
            paths = {c.path for c in snapshot.chunks(i for i, _ in allowed).values()}
            assert len(allowed) == 3 and all(p.startswith("/docs/a/") for p in paths), form
            assert dict(hits) == pytest.approx(contextual_cosines(snapshot, unit(1), 10)), form
    store.close()


# What records may hold where float64 and the texts of numbers disagree: whole numbers
# around 2**53 and 2**63, floats that are whole past 2**53, tiny and huge floats, and
# strings, some spelling numbers (one with an exponent too long to be read as one).
STORED_NUMBERS = [
    0, -1, 7, 2020, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63), 10**16,
    1714521600000000000, 1714521600000000001, 123456789012345678,
    2020.0, 1e16, 2.0**60, 0.1, 0.30000000000000004, 1e-05, -1.5e-07, 5e-324,
    1.7976931348623157e308, "2020", "10000000000000000", "1e16", "1e+16",
    "0.10000000000000001", "99999999999999999999999", "-0", "2.5e-400", "1e1000", "soon",
]  # fmt: skip
# A text spells a number in a `where`: JSON's grammar, at most 3 exponent digits.
SPELT_NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]{1,3})?"
COMPARED = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def exact_number(value: object) -> Decimal | None:
    """The exact number of a metadata value: an int itself, a float the decimal its
    JSON text shows (`repr`), a string the decimal it spells."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(value) if re.fullmatch(SPELT_NUMBER, str(value)) else None


def respelt(value: int | float, shift: int) -> str:
    """Another text of the same number: positional, with the exponent moved by `shift`."""
    moved = exact_number(value).scaleb(-shift)  # type: ignore[union-attr]
    return f"{moved:f}e{shift}"


def spelt(digits: int, point: int, exponent: int) -> str:
    """The text `digits` with `point` decimals and an exponent (`-1234`, 2, 5: -12.34e5)."""
    sign, whole = "-" if digits < 0 else "", str(abs(digits)).rjust(point + 1, "0")
    fraction = f".{whole[len(whole) - point :]}" if point else ""
    return f"{sign}{whole[: len(whole) - point]}{fraction}e{exponent}"


WHERE_NUMBERS = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([v for v in STORED_NUMBERS if not isinstance(v, str)]),
    st.builds(
        respelt,
        st.sampled_from([v for v in STORED_NUMBERS if not isinstance(v, str)]),
        st.integers(-3, 3),
    ),
    st.builds(spelt, st.integers(-(10**25), 10**25), st.integers(0, 30), st.integers(-400, 400)),
)


def test_numbers_in_where_compare_exactly_on_every_backend(any_index):
    """Equal numbers match and comparisons are exact (no float64 on the way), the same on
    every store: each condition finds exactly the records Python's exact decimals say."""
    from indexer.store.filters import make_filter

    store = new_store(any_index)
    held = {f"r{n}": value for n, value in enumerate(STORED_NUMBERS)}
    with store.writer(), store.change() as change:
        change.add_documents(
            [
                new_record(name, [name], {"n": value}, n)
                for n, (name, value) in enumerate(held.items())
            ]
        )
    numbers = {name for name, value in held.items() if not isinstance(value, str)}

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(value=WHERE_NUMBERS, compare=st.sampled_from(sorted(COMPARED)), as_text=st.booleans())
    def exact(value: int | float | str, compare: str, as_text: bool) -> None:
        given = value_text(value) if not isinstance(value, str) else value
        where = (
            [f"n{compare}{given}"] if as_text or isinstance(value, str) else {"n": {compare: value}}
        )
        with store.snapshot() as snapshot:
            chunks = snapshot.chunks(snapshot.allowed_chunks(make_filter(where=where)).tolist())
        found = {chunk.path.removeprefix("record:") for chunk in chunks.values()}
        wanted = exact_number(value)
        expected = {
            name
            for name, stored in held.items()
            if (number := exact_number(stored)) is not None and COMPARED[compare](number, wanted)
        }
        if compare in ("=", "!="):  # a string is equal to a text, not to a number
            found, expected = found & numbers, expected & numbers
        assert found == expected, (where, sorted(found ^ expected))

    try:
        exact()
    finally:
        store.close()


# Texts whose words a phrase may or may not hold, as the lexical tokenizer reads them:
# stems, punctuation between words, hyphens and underscores inside them, accents, case.
WORDED = {
    "adjacent": "Hinted handoff keeps writes available",
    "apart": "the handoff was hinted at",
    "punctuated": "hinted, handoff! then sloppy quorums",
    "stemmed": "hint handoffs later",
    "hyphens": "send an e-mail about co-cultured cells",
    "underscores": "set snake_case names",
    "accents": "Crème brûlée for dessert",
}


@pytest.mark.parametrize(
    ("phrases", "excluded", "expected"),
    [
        (("hinted handoff",), (), {"adjacent", "punctuated", "stemmed"}),
        (("handoff hinted",), (), set()),
        (("hinted handoff", "sloppy"), (), {"punctuated"}),
        (("e-mail",), (), {"hyphens"}),
        (("e mail about co cultured",), (), {"hyphens"}),
        (("snake_case",), (), {"underscores"}),
        (("creme brulee",), (), {"accents"}),
        (("CRÈME",), (), {"accents"}),
        ((), ("handoff",), {"hyphens", "underscores", "accents"}),
        ((), ("handoff", "snake case"), {"hyphens", "accents"}),
        (("hinted handoff",), ("available", "later"), {"punctuated"}),
    ],
)
def test_a_filters_words_choose_passages_alike_in_every_space_on_every_backend(
    any_index, phrases, excluded, expected
):
    """A query's phrases and exclusions (`WordFilter`) are one condition on passages,
    applied inside every vector space and the full text, tokenized as the lexical space
    tokenizes (FTS5's unicode61 and Porter, and their replica on PostgreSQL)."""
    from indexer.store.filters import make_filter
    from indexer.store.word_filter import WordFilter

    store = new_store(any_index)
    with store.writer(), store.change() as change:
        ids = change.add_documents(
            [
                new_document(f"/docs/{name}.txt", [text], n)
                for n, (name, text) in enumerate(WORDED.items())
            ]
        )
    named = {chunk_ids[0]: name for chunk_ids, name in zip(ids, WORDED, strict=True)}
    where = make_filter(words=WordFilter(phrases, excluded))
    with store.snapshot() as snapshot:
        allowed = {named[i] for i in snapshot.allowed_chunks(where).tolist()}
        counted = snapshot.chunk_count(where)
        found = snapshot.search(
            CandidateSearch({"contextual": unit(0)}, "handoff cells names dessert", 10, where)
        )
        dense = {named[i] for i, _ in found.vector["contextual"]}
        lexical = {named[i] for i, _ in found.lexical or []}
        unfiltered = dict(snapshot.lexical_search("handoff cells names dessert", 10))
    store.close()
    assert allowed == dense == expected and counted == len(expected)
    assert lexical == expected  # every text holds one of the query's words
    # the words choose passages; they never change a passage's score
    assert all(unfiltered[i] == score for i, score in found.lexical or [])


def test_passages_added_without_their_contextual_vectors_are_filled_later(any_index):
    """A change may add passages whose contextual vectors it leaves to later changes (the
    fill): the store names them, searches the contextual space without them and every
    other space with them, verifies, and takes their vectors lowest first; when the
    last is stored, nothing is named any more."""
    store = new_store(any_index)
    try:
        add(store, "/docs/kept.txt", ["kept passage"], first_axis=0)
        waiting = replace(
            new_document("/docs/new.txt", ["one", "two", "three"], first_axis=1),
            unfilled=np.array([True, False, True]),
        )
        with store.writer(), store.change() as change:
            ids = change.add_documents([waiting])[0]
        with store.snapshot() as snapshot:
            assert snapshot.completeness().to_dict() == {
                "passages": 4,
                "contextual_passages": 2,
                "contextual_complete": False,
            }
            assert set(snapshot.vectors("contextual", ids)) == {ids[1]}
            assert set(snapshot.vectors("static", ids)) == set(ids)
            [found] = snapshot.vector_search("contextual", unit(1)[None, :], 10)
            assert ids[0] not in dict(found) and ids[2] not in dict(found)
        report = store.verify()
        assert report.consistent, report.problems
        assert report.counts["unfilled"] == 2
        assert any("the fill is incomplete" in note for note in report.notes)
        with store.writer(), store.change() as change:
            assert [row[0] for row in change.unfilled_chunks(10)] == [ids[0], ids[2]]
            change.fill_contextual(np.array([ids[0]]), unit(1)[None, :])
        [(_, filled_key), (_, unfilled_key)] = keyed_chunks(store, [ids[0], ids[2]])
        with store.writer(), store.change() as change:
            assert change.unfilled_count() == 1
            copies = change.filled_vectors_for([filled_key, unfilled_key])
            assert copies.keys() == {filled_key} and copies[filled_key] @ unit(1) > 0.999
            change.fill_contextual(np.array([ids[2]]), unit(3)[None, :])
        assert store.manifest is not None and store.manifest.unfilled == []
        with store.snapshot() as snapshot:
            assert snapshot.completeness().contextual_complete
            assert set(snapshot.vectors("contextual", ids)) == set(ids)
        assert store.verify().consistent
    finally:
        store.close()


def keyed_chunks(store: Store, chunk_ids: list[int]) -> list[tuple[int, str]]:
    """(id, content key) of these chunks, as the store holds them."""
    with store.snapshot() as snapshot:
        rows = snapshot.rows(  # type: ignore[attr-defined]
            f"SELECT id, content_key FROM chunks WHERE id IN ({', '.join(map(str, chunk_ids))})"
            " ORDER BY id",
            {},
        )
    return [(int(chunk_id), key) for chunk_id, key in rows]

"""Vector spaces of an index folder as a base plus delta segments with tombstones.

A run that changes a few passages publishes a small delta segment (its new vectors and
the ids it removed) beside the base; readers replay the deltas on the base; a run merges
them into a new base when they pile up. Synthetic vectors through the store API.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

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

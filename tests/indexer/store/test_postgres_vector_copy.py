"""A change's vectors go into PostgreSQL by one binary COPY (`vector_copy.py`): the index
it makes equals the one the INSERT it replaced made (the same rows, vectors bit for bit,
BM25 statistics and search results), and the COPY is part of the change's transaction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import insert

from indexer.reading.sources import Document
from indexer.splitting.chunking import Chunk
from indexer.store.backends import open_store
from indexer.store.base import NewDocument
from indexer.store.manifest import Manifest
from indexer.store.postgres import store as postgres_store
from indexer.store.postgres import vectors
from indexer.store.postgres.vector_copy import copy_rows

pytestmark = pytest.mark.postgres

DIM = 8
WORDS = ["river", "bank", "stone", "crane", "tower", "bridge", "market", "fish", "boat"]


def manifest() -> Manifest:
    return Manifest(
        model="copy-test", model_fingerprint="copy-test", pooling="mean", dim=DIM,
        max_tokens=256, chunk_tokens=254, chunk_overlap=0, version="test", spaces=["static"],
        index_type="flat",
    )  # fmt: skip


def awkward_vectors(count: int) -> np.ndarray:
    """Float32 values whose text form is easy to get wrong: -0.0, a subnormal, the
    largest finite float32, and random values with all nine significant digits."""
    matrix = np.random.default_rng(7).standard_normal((count, DIM)).astype(np.float32)
    matrix[0, :4] = [-0.0, np.float32(1e-45), np.finfo(np.float32).max, -np.finfo(np.float32).tiny]
    return matrix


def documents(matrix: np.ndarray) -> list[NewDocument]:
    """Documents of 5 chunks each, over `matrix`'s rows, with a few words of text each."""
    rng = np.random.default_rng(3)
    made = []
    for first in range(0, len(matrix), 5):
        block = matrix[first : first + 5]
        chunks = [Chunk(i, 0, 1, " ".join(rng.choice(WORDS, 6))) for i in range(len(block))]
        document = Document(Path(f"/copy/{first:04d}.txt"), "", 0, 0, "0" * 64)
        made.append(NewDocument(document, chunks, {"static": block}))
    return made


def fill(url: str, items: list[NewDocument]) -> None:
    store = open_store(url, create=True)
    try:
        with store.writer():
            store.initialise(manifest())
            with store.change() as change:
                change.add_documents(items)
    finally:
        store.close()


def inserted_as_before(connection, space: str, ids: np.ndarray, matrix: np.ndarray) -> None:
    """The statement `add_vectors` ran before the COPY: an INSERT of pgvector's text."""
    table = vectors.space_table(space, matrix.shape[1])
    rows = [{"chunk_id": int(i), "embedding": v} for i, v in zip(ids, matrix, strict=True)]
    connection.execute(insert(table), rows)


def contents(url: str) -> dict:
    """Everything a search reads: the rows, the vectors' bytes, the BM25 counts, and the
    answers of a vector search and a lexical search."""
    store = open_store(url)
    try:
        with store.snapshot() as snapshot:
            stored = snapshot.vectors("static", list(range(1, 41)))
            probe = np.random.default_rng(1).standard_normal((1, DIM)).astype(np.float32)
            return {
                "chunks": snapshot.rows(
                    "SELECT id, document_id, text, lexical_length FROM chunks ORDER BY id", {}
                ),
                "vectors": {i: v.tobytes() for i, v in stored.items()},
                "as_text": snapshot.rows(
                    "SELECT chunk_id, CAST(embedding AS text) FROM space_static ORDER BY 1", {}
                ),
                "terms": snapshot.rows("SELECT term, chunks FROM lexical_terms ORDER BY 1", {}),
                "totals": snapshot.rows("SELECT chunks, tokens FROM lexical_totals", {}),
                "nearest": snapshot.vector_search("static", probe, 10),
                "lexical": snapshot.lexical_search("stone crane", 10),
            }
    finally:
        store.close()


def test_an_index_filled_by_copy_equals_one_filled_by_the_insert_it_replaced(
    postgres_server, monkeypatch
):
    matrix = awkward_vectors(40)
    copied, inserted = (f"{postgres_server}?index=copy_{name}" for name in ("new", "old"))
    fill(copied, documents(matrix))
    monkeypatch.setattr(postgres_store.vectors, "add_vectors", inserted_as_before)
    fill(inserted, documents(matrix))
    ours, theirs = contents(copied), contents(inserted)
    assert ours == theirs
    assert ours["vectors"] == {i + 1: row.tobytes() for i, row in enumerate(matrix)}
    assert len(ours["nearest"][0]) == 10 and ours["lexical"]


def test_the_copied_vectors_roll_back_with_a_failed_change(postgres_index):
    matrix = awkward_vectors(10)
    store = open_store(postgres_index, create=True)
    try:
        with store.writer():
            store.initialise(manifest())
            with pytest.raises(RuntimeError, match="stop"), store.change() as change:
                change.add_documents(documents(matrix))
                raise RuntimeError("stop")
        with store.snapshot() as snapshot:
            assert snapshot.rows("SELECT count(*) FROM space_static", {}) == [(0,)]
            assert snapshot.rows("SELECT count(*) FROM chunks", {}) == [(0,)]
    finally:
        store.close()


def test_the_copy_stream_is_postgresql_binary_rows_of_an_id_and_a_vector():
    stream = copy_rows(np.asarray([5]), np.asarray([[1.0, -2.0]], np.float32))
    assert stream == (
        b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, header extension
        + b"\x00\x02"  # two fields
        + b"\x00\x00\x00\x08" + (5).to_bytes(8, "big")  # the chunk id
        + b"\x00\x00\x00\x0c" + b"\x00\x02\x00\x00"  # vector: 12 bytes, dim 2, unused
        + b"\x3f\x80\x00\x00" + b"\xc0\x00\x00\x00"  # 1.0, -2.0 big-endian
        + b"\xff\xff"  # trailer
    )  # fmt: skip


@pytest.mark.slow  # a graph of 30,000 vectors: 30 s to minutes
def test_the_graph_build_is_given_the_memory_pgvector_builds_it_in(postgres_server):
    """pgvector builds an HNSW graph fast only while it fits in maintenance_work_mem, and
    says so (a NOTICE) when it stops fitting: the memory `restructure` sets must hold a
    float32 graph of real width (30,000 384-d vectors, m 32: about 82 MB)."""
    import psycopg
    from sqlalchemy.engine import make_url

    count, dim = 30_000, 384
    url = make_url(postgres_server)
    notices: list[str] = []
    with psycopg.connect(
        host=url.host, port=url.port, user=url.username, dbname=url.database
    ) as connection:
        connection.add_notice_handler(lambda notice: notices.append(notice.message_primary))
        connection.execute("CREATE TEMPORARY TABLE graph_memory (embedding vector(384))")
        matrix = np.random.default_rng(5).standard_normal((count, dim)).astype(np.float32)
        with connection.cursor().copy("COPY graph_memory (embedding) FROM STDIN") as copy:
            for row in matrix:
                copy.write_row(["[" + ",".join(map(str, row)) + "]"])
        memory = vectors.graph_build_megabytes(count, dim)
        connection.execute(f"SET maintenance_work_mem TO '{memory}MB'")
        connection.execute(
            "CREATE INDEX ON graph_memory USING hnsw (embedding vector_ip_ops) "
            f"WITH (m = {vectors.HNSW_NEIGHBOURS}, ef_construction = {2 * vectors.HNSW_NEIGHBOURS})"
        )
    assert not [notice for notice in notices if "maintenance_work_mem" in notice], memory

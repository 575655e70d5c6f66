"""A change that fills an empty PostgreSQL index counts its BM25 terms once, before it
commits, instead of at every statement (`term_counts.defer_term_counts`): the index it
makes equals the one per-statement counting makes, and later changes count as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from indexer.reading.sources import Document
from indexer.splitting.chunking import Chunk
from indexer.store.backends import open_store
from indexer.store.base import NewDocument
from indexer.store.manifest import Manifest
from indexer.store.postgres.store import PostgresChange

pytestmark = pytest.mark.postgres

DIM = 8
WORDS = ["the", "river", "bank", "of", "stone", "and", "crane", "over", "tower", "bridge",
         "market", "fish", "boats", "land", "at", "dawn", "nets", "dry", "in", "sun"]  # fmt: skip


def manifest() -> Manifest:
    return Manifest(
        model="fill-test", model_fingerprint="fill-test", pooling="mean", dim=DIM,
        max_tokens=256, chunk_tokens=254, chunk_overlap=0, version="test", spaces=["static"],
        index_type="flat",
    )  # fmt: skip


def documents(count: int, seed: int = 0, folder: str = "/fill") -> list[NewDocument]:
    """`count` documents of 5 chunks of 12 words, common words among them (so the same
    terms are counted by every statement)."""
    rng = np.random.default_rng(seed)
    made = []
    for number in range(count):
        chunks = [Chunk(i, 0, 1, " ".join(rng.choice(WORDS, 12))) for i in range(5)]
        vectors = rng.standard_normal((5, DIM)).astype(np.float32)
        document = Document(Path(f"{folder}/{number:03d}.txt"), "", 0, 0, "0" * 64)
        made.append(NewDocument(document, chunks, {"static": vectors}))
    return made


def fill(url: str, items: list[NewDocument]) -> int:
    """A new index of `items`, one statement per document; the term rows the change's
    own statements updated."""
    store = open_store(url, create=True)
    try:
        with store.writer():
            store.initialise(manifest())
            with store.change() as change:
                for item in items:
                    change.add_documents([item])
                updated = "pg_stat_get_xact_tuples_updated(CAST('lexical_terms' AS regclass))"
                return change.session.execute(text(f"SELECT {updated}")).scalar_one()
    finally:
        store.close()


def add(url: str, items: list[NewDocument]) -> None:
    store = open_store(url)
    try:
        with store.writer(), store.change() as change:
            for item in items:
                change.add_documents([item])
    finally:
        store.close()


def contents(url: str) -> dict:
    store = open_store(url)
    try:
        assert store.verify().consistent, store.verify()
        with store.snapshot() as snapshot:
            probe = np.random.default_rng(1).standard_normal((1, DIM)).astype(np.float32)
            return {
                "chunks": snapshot.rows(
                    "SELECT id, document_id, text, lexical_length FROM chunks ORDER BY id", {}
                ),
                "terms": snapshot.rows("SELECT term, chunks FROM lexical_terms ORDER BY 1", {}),
                "totals": snapshot.rows("SELECT chunks, tokens FROM lexical_totals", {}),
                "lexical": snapshot.lexical_search("crane over the bridge", 20),
                "nearest": snapshot.vector_search("static", probe, 10),
            }
    finally:
        store.close()


def test_a_first_fill_updates_no_term_row_statement_by_statement(postgres_index):
    assert fill(postgres_index, documents(30)) == 0


def test_a_first_fill_makes_the_index_per_statement_counting_makes(postgres_server, monkeypatch):
    deferred, counted = (f"{postgres_server}?index=fill_{name}" for name in ("once", "each"))
    fill(deferred, documents(30))
    monkeypatch.setattr(PostgresChange, "_holds_no_chunks", lambda self: False)
    assert fill(counted, documents(30)) > 0  # the ordinary path: counted at each statement
    assert contents(deferred) == contents(counted)
    monkeypatch.undo()
    # a later change into the filled index counts at each statement, as before
    for url in (deferred, counted):
        add(url, documents(10, seed=5, folder="/more"))
    ours = contents(deferred)
    assert ours == contents(counted)
    assert ours["totals"] == [(200, 200 * 12)]

"""What a PostgreSQL query sends: one statement finds the nearest chunks and reads their
rows, so hydrating the hits needs no other; and psycopg prepares the statements a
connection runs again and again."""

from __future__ import annotations

import pytest
from sqlalchemy import event, text

from indexer import Indexer
from indexer.store.backends import open_store

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(postgres_index, notes, fast_model):
    Indexer(postgres_index, model=fast_model).index_folder(notes)
    opened = open_store(postgres_index)
    yield opened
    opened.close()


def statements_of(store) -> list[str]:
    """A list that fills with every statement the store's connections send from now on."""
    sent: list[str] = []
    event.listen(
        store.engine,
        "before_cursor_execute",
        lambda _conn, _cursor, statement, *_: sent.append(statement),
    )
    return sent


def test_a_vector_query_and_its_hydration_are_one_statement(store):
    with store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()
        sent = statements_of(store)
        [hits] = snapshot.vector_search("contextual", query[None], 3)
        chunks = snapshot.chunks([chunk_id for chunk_id, _ in hits])
    assert len(hits) == 3 and sorted(chunks) == sorted(chunk_id for chunk_id, _ in hits)
    assert chunks[hits[0][0]].text
    assert len(sent) == 1, sent


def test_repeated_queries_run_as_prepared_statements(store):
    with store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()
    for _ in range(8):
        with store.snapshot() as snapshot:
            snapshot.vector_search("contextual", query[None], 3)
    with store.snapshot() as snapshot:
        prepared = snapshot.connection.execute(
            text("SELECT statement FROM pg_prepared_statements")
        ).scalars()
        assert any("space_contextual" in statement for statement in prepared)


def test_term_counts_are_one_statement_that_agrees_with_counting_the_chunks(store):
    terms = ["roses", "bank", "river", "snake_case", "nowhere"]
    with store.snapshot() as snapshot:
        counted = {
            term: snapshot.rows(
                "SELECT count(*) FROM chunks "
                "WHERE tsv @@ plainto_tsquery('ctxsearch_porter', :term)",
                {"term": term},
            )[0][0]
            for term in terms
        }
        sent = statements_of(store)
        held = snapshot.term_counts(terms)
    assert held == counted and held["roses"] >= 1 and held["nowhere"] == 0
    assert len(sent) == 1, sent

"""What a PostgreSQL query sends: one statement finds the nearest chunks and reads their
rows and content keys, so hydrating the hits needs no other; and psycopg prepares the
statements a connection runs again and again."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import event, text

from indexer import Indexer
from indexer.store.backends import open_store
from lab.bench_queries import server_waits

pytestmark = pytest.mark.postgres


def statements_of(store) -> list[str]:
    """A list that fills with every statement the store's connections send from now on."""
    sent: list[str] = []
    event.listen(
        store.engine,
        "before_cursor_execute",
        lambda _conn, _cursor, statement, *_: sent.append(statement),
    )
    return sent


def test_a_vector_query_and_its_hydration_are_one_statement(notes_store):
    with notes_store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()
        sent = statements_of(notes_store)
        [hits] = snapshot.vector_search("contextual", query[None], 3)
        chunks = snapshot.chunks([chunk_id for chunk_id, _ in hits])
        keys = snapshot.content_keys({chunk.document_id for chunk in chunks.values()})
        searched = list(sent)  # the commit left out
    assert len(hits) == 3 and sorted(chunks) == sorted(chunk_id for chunk_id, _ in hits)
    assert chunks[hits[0][0]].text
    assert len(searched) == 1, searched
    with notes_store.snapshot() as fresh:  # read on their own, as they were before
        assert keys and fresh.content_keys(keys) == keys


def test_repeated_searches_run_as_one_prepared_statement_with_one_generic_plan(notes_store):
    """The search's text is fixed by its shape (the vector and filter values are
    parameters), so psycopg prepares it and PostgreSQL plans it once instead of at every
    query."""
    with notes_store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()
    # psycopg prepares a text at its 5th run; PostgreSQL plans its first 5 runs each
    for _ in range(15):
        with notes_store.snapshot() as snapshot:
            snapshot.vector_search("contextual", query[None], 3)
    with notes_store.snapshot() as snapshot:
        prepared = snapshot.connection.execute(
            text("SELECT statement, generic_plans FROM pg_prepared_statements")
        ).all()
    assert any("space_contextual" in statement for statement, _ in prepared)
    searches = ("SELECT nearest.distance", "space_contextual")
    plans = [
        generic
        for statement, generic in prepared
        if statement.startswith(searches[0]) and searches[1] in statement
    ]
    assert plans and max(plans) >= 1, prepared


def test_term_counts_and_the_match_signals_evidence_are_one_statement_each(notes_store):
    terms = ["roses", "bank", "river", "snake_case", "nowhere"]
    with notes_store.snapshot() as snapshot:
        counted = {
            term: snapshot.rows(
                "SELECT count(*) FROM chunks "
                "WHERE tsv @@ phraseto_tsquery('ctxsearch_fts5', lexical_text(:term))",
                {"term": term},
            )[0][0]
            for term in terms
        }
        sent = statements_of(notes_store)
        held = snapshot.term_counts(terms)
        counting = list(sent)  # the commit left out
        ids = sorted(snapshot.chunks(range(1, 40)))
        sent.clear()
        evidence = snapshot.term_evidence(terms, ids)
        both = list(sent)
        holders = {term: set(snapshot.lexical_scores(term, ids)) for term in terms}
    assert held == counted and held["roses"] >= 1 and held["nowhere"] == 0
    assert len(counting) == 1, counting
    assert evidence == (held, holders) and holders["roses"]
    assert len(both) == 1, both  # the match signal's two reads: one wait for the server


@pytest.mark.parametrize("k", [3, 200])  # 200: a search's default depth, past ef_search
def test_a_vector_query_waits_for_the_server_once(notes_store, k):
    with notes_store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()

    def search() -> None:
        with notes_store.snapshot() as snapshot:
            [hits] = snapshot.vector_search("contextual", query[None], k)
            snapshot.chunks([chunk_id for chunk_id, _ in hits])

    for _ in range(6):  # past psycopg's prepare threshold
        search()
    # the transaction's start, the manifest, the graph's setting (k 200) and the search
    # with its hydration; the COMMIT is sent, its answer read by the next snapshot
    assert server_waits(notes_store, search) == ["Sync"]


def test_a_lexical_query_and_its_hydration_wait_for_the_server_once(notes_store):
    """The BM25 statement reads its hits' rows, and a snapshot's first goes with the BEGIN."""

    def search() -> None:
        with notes_store.snapshot() as snapshot:
            hits = snapshot.lexical_search("roses by the river bank", 5)
            chunks = snapshot.chunks([chunk_id for chunk_id, _ in hits])
            keys = snapshot.content_keys({chunk.document_id for chunk in chunks.values()})
        assert hits and sorted(chunks) == sorted(chunk_id for chunk_id, _ in hits) and keys

    for _ in range(6):  # past psycopg's prepare threshold
        search()
    assert server_waits(notes_store, search) == ["Sync"]


def test_a_snapshot_that_reads_nothing_sends_nothing(notes_store):
    with notes_store.snapshot() as snapshot:
        snapshot.vectors("contextual", [1])

    def nothing() -> None:
        with notes_store.snapshot():
            pass

    assert server_waits(notes_store, nothing) == []


def test_a_first_search_built_from_an_older_manifest_is_made_again(
    notes_store, postgres_index, notes, fast_model
):
    """The search sent with the BEGIN is built from the manifest the store saw last; a
    publish since (here: a new file, a new generation) makes it run again in the state's
    own terms, and it finds what the publish added."""
    with notes_store.snapshot() as snapshot:
        before = snapshot.manifest.generation
    (notes / "otters.txt").write_text("Otters float on their backs and hold paws asleep.\n")
    Indexer(postgres_index, model=fast_model).index_folder(notes)
    added = open_store(postgres_index)
    try:
        with added.snapshot() as snapshot:
            [otters] = [c for c in snapshot.chunks(range(1, 100)).values() if "Otters" in c.text]
            [vector] = snapshot.vectors("contextual", [otters.id]).values()
    finally:
        added.close()
    sent = statements_of(notes_store)  # what goes through SQLAlchemy: the search made again
    with notes_store.snapshot() as snapshot:
        [hits] = snapshot.vector_search("contextual", vector[None], 1)
        assert snapshot.manifest.generation > before
    assert hits[0][0] == otters.id
    assert len([s for s in sent if s.startswith("SELECT nearest.distance")]) == 1, sent


def test_the_chunks_are_counted_once_per_published_state(
    notes_store, postgres_index, notes, fast_model
):
    """Every query's match signal needs the chunk count (a term's IDF): a whole-table
    count, read once per state, not per query; a publish counts again."""
    with notes_store.snapshot() as snapshot:
        counted = snapshot.rows("SELECT count(*) FROM chunks", {})[0][0]
        assert snapshot.chunk_count() == counted
    sent = statements_of(notes_store)
    with notes_store.snapshot() as snapshot:
        assert snapshot.chunk_count() == counted
    assert not [statement for statement in sent if "count(*)" in statement], sent
    (notes / "otters.txt").write_text("Otters float on their backs and hold paws asleep.\n")
    Indexer(postgres_index, model=fast_model).index_folder(notes)
    with notes_store.snapshot() as snapshot:
        assert snapshot.chunk_count() == counted + 1


def test_a_snapshot_whose_connection_the_server_ended_still_answers(notes_store):
    with notes_store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()
        pid = snapshot.rows("SELECT pg_backend_pid()", {})[0][0]
    url = notes_store.engine.url
    with psycopg.connect(
        host=url.host, port=url.port, user=url.username, dbname=url.database, autocommit=True
    ) as other:
        assert other.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone()[0]
    with notes_store.snapshot() as snapshot:
        [hits] = snapshot.vector_search("contextual", query[None], 3)
        assert snapshot.rows("SELECT pg_backend_pid()", {})[0][0] != pid
    assert len(hits) == 3

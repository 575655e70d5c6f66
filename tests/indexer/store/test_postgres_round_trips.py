"""What a PostgreSQL query sends: a search's statements find the nearest chunks and read
their rows and content keys, sent with the snapshot's BEGIN; what the hits show is one
more round; and psycopg prepares the statements a connection runs again and again."""

from __future__ import annotations

from dataclasses import replace

import psycopg
import pytest
from sqlalchemy import event, text

from indexer import Indexer
from indexer.store.backends import open_store
from indexer.store.base import CandidateSearch
from indexer.store.postgres.server_waits import server_waits
from search.engine import Searcher

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


def test_a_vector_search_reads_its_rows_and_content_keys_in_one_wait(notes_store):
    with notes_store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()
    found = []

    def search() -> None:
        with notes_store.snapshot() as snapshot:
            found.append(snapshot.search(CandidateSearch({"contextual": query}, None, 3)))

    for _ in range(6):  # past psycopg's prepare threshold
        search()
    assert server_waits(notes_store, search) == ["Sync"]
    hits = found[-1].vector["contextual"]
    assert len(hits) == 3 and sorted(found[-1].chunks) == sorted(i for i, _ in hits)
    assert found[-1].chunks[hits[0][0]].text and found[-1].content_keys


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
    searches = ("WITH nearest", "space_contextual")
    plans = [
        generic
        for statement, generic in prepared
        if statement.startswith(searches[0]) and searches[1] in statement
    ]
    assert plans and max(plans) >= 1, prepared


def test_what_hits_show_is_one_wait_for_the_server(notes_store):
    """Their copies, the terms' counts and holders, and the chunk count (once per state)
    are sent together, with the BEGIN when the snapshot has not begun."""
    terms = ["roses", "bank", "river", "snake_case", "nowhere"]
    with notes_store.snapshot() as snapshot:
        ids = sorted(snapshot.chunks(range(1, 40)))
        counted = {
            term: snapshot.rows(
                "SELECT count(*) FROM chunks "
                "WHERE tsv @@ phraseto_tsquery('ctxsearch_fts5', lexical_text(:term))",
                {"term": term},
            )[0][0]
            for term in terms
        }
    shown = []

    def show() -> None:
        with notes_store.snapshot() as snapshot:
            shown.append(snapshot.shown(ids, terms))

    for _ in range(6):  # past psycopg's prepare threshold
        show()
    assert server_waits(notes_store, show) == ["Sync"]
    evidence = shown[-1].terms
    assert evidence.counts == counted and counted["roses"] >= 1 and counted["nowhere"] == 0
    assert evidence.holders["roses"] and evidence.chunks == len(ids)
    assert set(shown[-1].copies) == set(ids)


def test_showing_no_hits_sends_nothing(notes_store):
    with notes_store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()

    def search() -> None:
        with notes_store.snapshot() as snapshot:
            snapshot.search(CandidateSearch({"contextual": query}, None, 3))
            assert snapshot.shown([], ["roses"]).copies == {}

    assert server_waits(notes_store, search) == ["Sync"]


@pytest.mark.parametrize(
    ("mode", "depth", "waits"),
    [("contextual", None, 2), ("lexical", None, 3), ("hybrid", None, 2), ("hybrid", 2, 3)],
)
def test_a_query_waits_for_its_candidates_their_missing_scores_and_what_its_hits_show(
    notes_store, postgres_index, mode, depth, waits
):
    """The searches go with the BEGIN; then the exact scores a side did not give, when
    some are missing (each lexical hit's cosine; in hybrid, where each side lists every
    chunk of these notes, none unless the lists are cut at `depth`); then what the hits
    show."""
    with Searcher(postgres_index) as searcher:
        if depth is not None:
            searcher.hybrid = replace(searcher.hybrid, depth=depth)

        def search() -> None:
            searcher.search("roses by the river bank", mode=mode, k=2, all_chunks=True)

        for _ in range(6):  # past psycopg's prepare threshold
            search()
        sent = server_waits(searcher.store, search)
    assert sent == ["Sync"] * waits


def test_the_first_query_of_a_process_sends_its_searches_with_the_begin(
    notes_store, postgres_index
):
    """A store opened for one query (`ctxsearch query`) read the manifest on opening: its
    first snapshot's searches are built from it and go with the BEGIN, as later ones do."""
    with Searcher(postgres_index) as searcher:
        search = lambda: searcher.search("river bank", mode="contextual")  # noqa: E731
        assert server_waits(searcher.store, search) == ["Sync", "Sync"]


@pytest.mark.parametrize("k", [3, 200])  # 200: a search's default depth, past ef_search
def test_a_vector_query_waits_for_the_server_once(notes_store, k):
    with notes_store.snapshot() as snapshot:
        [query] = snapshot.vectors("contextual", [1]).values()

    def search() -> None:
        with notes_store.snapshot() as snapshot:
            snapshot.search(CandidateSearch({"contextual": query}, None, k))

    for _ in range(6):  # past psycopg's prepare threshold
        search()
    # the transaction's start, the manifest, the graph's setting (k 200) and the search
    # with its rows; the COMMIT is sent, its answer read by the next snapshot
    assert server_waits(notes_store, search) == ["Sync"]


def test_a_lexical_search_and_its_rows_wait_for_the_server_once(notes_store):
    """The BM25 statement reads its hits' rows and goes with the BEGIN."""

    def search() -> None:
        with notes_store.snapshot() as snapshot:
            found = snapshot.search(CandidateSearch({}, "roses by the river bank", 5))
        hits = found.lexical
        assert hits and sorted(found.chunks) == sorted(i for i, _ in hits) and found.content_keys

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
    found = []

    def search() -> None:
        with notes_store.snapshot() as snapshot:
            found.append(snapshot.vector_search("contextual", vector[None], 1)[0])
            assert snapshot.manifest.generation > before

    # sent with the BEGIN, then made again in the state's terms (its space counted)
    assert server_waits(notes_store, search) == ["Sync", "Sync"]
    assert found[0][0][0] == otters.id


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

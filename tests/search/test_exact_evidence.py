"""Hybrid search keeps the lexical side's clear exact match among its first hits
(search.exact_evidence), on both stores."""

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.store.base import StoredChunk
from search.cli import cli
from search.engine import Searcher
from search.exact_evidence import (
    PLACES,
    RARE_PASSAGES,
    ExactMatch,
    exact_match,
    holds_query,
    keep_in_view,
    query_words,
)
from tests.search.cli.test_watch import found, start_watch


def chunk(chunk_id: int, text: str) -> StoredChunk:
    return StoredChunk(chunk_id, chunk_id, f"/d/{chunk_id}.md", 0, 0, len(text), text)


@pytest.mark.parametrize(
    ("text", "terms", "held"),
    [
        ("Hinted handoffs keep writes going.", ["hinted", "handoff"], True),  # stems
        ("the handoff was hinted at", ["hinted", "handoff"], True),  # words, not a phrase
        ("a handoff alone", ["hinted", "handoff"], False),
        ("Both studies agree.", ["study"], True),  # a stem that rewrites a last letter
        ("app.config['SEND_FILE_MAX_AGE_DEFAULT'] = 0", ["send_file_max_age_default"], True),
        ("send the file; the max age is the default", ["send_file_max_age_default"], False),
        ("wrap the app in ProxyFix", ["proxyfix"], True),
        ("a proxy fix", ["proxyfix"], False),
    ],
)
def test_a_passage_holds_the_query_when_it_holds_every_term(text, terms, held):
    assert holds_query(text, query_words(terms)) is held


def test_the_exact_match_is_the_lexical_best_when_it_holds_the_query_and_few_do():
    chunks = {1: chunk(1, "hinted handoff"), 2: chunk(2, "handoff"), 3: chunk(3, "hinted handoff")}
    found = exact_match(["hinted", "handoff"], [(1, 9.0), (2, 5.0), (3, 4.0)], chunks)
    assert found == ExactMatch(1, frozenset({1, 3}))
    # no margin: the lexical side's best holds only part of the query
    assert exact_match(["hinted", "handoff"], [(2, 9.0), (1, 5.0)], chunks) is None
    # not rare: more passages than RARE_PASSAGES hold it
    many = {n: chunk(n, "hinted handoff") for n in range(RARE_PASSAGES + 1)}
    assert exact_match(["hinted", "handoff"], [(n, 1.0) for n in many], many) is None


def _unit(chunk_id: int) -> int:
    return chunk_id // 10  # chunks 10, 11 are one document's


def test_the_exact_match_passes_the_hits_the_dense_side_sees_no_match_in():
    ranked = [(10, 5.0), (11, 4.5), (20, 4.0), (30, 3.0), (40, 2.0), (50, 1.0)]
    exact = ExactMatch(50, frozenset({50}))
    seen = {10: 0.6, 11: 0.6, 20: 0.5, 30: 0.4}
    # the dense side sees a match in the first three hits: place PLACES, the rest in order
    assert keep_in_view(ranked, exact, _unit, seen) == [
        (10, 5.0), (11, 4.5), (20, 4.0), (50, 3.0), (30, 3.0), (40, 2.0)
    ]  # fmt: skip
    assert PLACES == 3
    # it sees none in the second and third: the exact match passes them
    unseen = {10: 0.6, 11: 0.6, 20: 0.1, 30: 0.2}
    assert [c for c, _ in keep_in_view(ranked, exact, _unit, unseen)][:4] == [10, 11, 50, 20]
    # every chunk a hit of its own: chunk 11 is the second place
    assert [c for c, _ in keep_in_view(ranked, exact, lambda c: c, seen)][:4] == [10, 11, 50, 20]


def test_a_document_in_view_is_shown_by_its_passage_holding_the_query():
    ranked = [(10, 5.0), (20, 4.0), (30, 3.0), (21, 2.0)]
    moved = keep_in_view(ranked, ExactMatch(21, frozenset({21})), _unit, {})
    assert moved == [(10, 5.0), (21, 4.0), (20, 4.0), (30, 3.0)]


def test_nothing_moves_when_a_hit_holding_the_query_is_already_in_view():
    ranked = [(10, 5.0), (20, 4.0), (30, 3.0), (40, 2.0)]
    assert keep_in_view(ranked, ExactMatch(40, frozenset({40, 20})), _unit, {}) == ranked
    assert keep_in_view(ranked, ExactMatch(30, frozenset({30})), _unit, {}) == ranked


# Generated documents where a bag-of-words dense side, leaning on it for a question,
# buries the one passage holding both query words below short pages that share the
# question's other words and the common one.
QUERY = "what is hinted handoff?"


def _exact_passage(word: str = "hinted") -> str:
    return f"When a replica is down, Dynamo keeps the write by {word} handoff to another node.\n"


def _write_documents(folder, exact: bool = True):
    folder.mkdir()
    if exact:
        (folder / "dynamo.txt").write_text(_exact_passage())
    for n in range(8):
        (folder / f"relay-{n}.txt").write_text(f"What is the handoff? handoff relay {n}.\n")
    for n in range(20):
        (folder / f"other-{n}.txt").write_text(f"Gardens, rivers and bread {n}.\n")


def _names(hits) -> list[str]:
    return [hit.path.rsplit("/", 1)[-1] for hit in hits]


@pytest.mark.parametrize("all_chunks", [False, True])
def test_hybrid_keeps_the_passage_holding_the_query_in_its_top_3(
    any_index, tmp_path, fast_model, all_chunks
):
    _write_documents(tmp_path / "docs")
    Indexer(any_index, model=fast_model).index_folder(tmp_path / "docs")
    with Searcher(any_index) as searcher:
        hybrid = searcher.search(QUERY, k=3, all_chunks=all_chunks).results
        lexical = searcher.search(QUERY, k=3, mode="lexical").results
        searcher.hybrid = replace(searcher.hybrid, keeps_exact=False)
        fused_only = searcher.search(QUERY, k=10, all_chunks=all_chunks).results
    assert "dynamo.txt" in _names(hybrid)
    assert _names(lexical)[0] == "dynamo.txt"
    assert "dynamo.txt" not in _names(fused_only)[:PLACES]  # fusion alone buries it
    # the dense side still orders the rest: the first two are fusion's
    assert _names(hybrid)[:2] == _names(fused_only)[:2]
    scores = [hit.score for hit in hybrid]
    assert scores == sorted(scores, reverse=True)


def test_a_word_just_added_under_watch_is_in_the_hybrid_top_3(tmp_path, fast_model):
    """A made-up word in a file added while `ctxsearch watch` runs: once the watch has
    indexed it, hybrid shows the passage holding it among its first three hits."""
    docs, index = tmp_path / "docs", tmp_path / "ix"
    _write_documents(docs, exact=False)
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: len(found(index, "handoff")) == 8, "the first run")
        (docs / "dynamo.txt").write_text(_exact_passage("zorblax"))
        watched.until(lambda: found(index, "zorblax") == ["dynamo.txt"], "the new file")
        for extra in ([], ["--all-chunks"]):
            shown = CliRunner().invoke(
                cli, ["query", "what is zorblax handoff?", "--index", str(index), "-k", "3",
                      "--json", *extra],
            )  # fmt: skip
            assert shown.exit_code == 0, shown.output
            hits = json.loads(shown.stdout)["results"]
            assert "dynamo.txt" in [hit["path"].rsplit("/", 1)[-1] for hit in hits], extra
    finally:
        watched.stop()

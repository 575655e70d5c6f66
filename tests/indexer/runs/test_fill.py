"""Searchable before the vectors are done: a run publishes the cheap sides, then fills.

A run commits documents, passages, the lexical space and the static space in one
publish, then the contextual vectors in published batches (`indexer.runs.fill`). These
tests look at the index between those publishes (from the run's own progress reports,
or after killing the run between two batches) on both stores, with real SQLite, FAISS
and PostgreSQL and the `hashed-words` test encoder.
"""

from __future__ import annotations

import json
import signal
from itertools import pairwise
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.runs.progress import Progress
from indexer.store.backends import open_store, verify_target
from search import Searcher
from search.cli import cli
from tests.support.crash_harness import BATCH_CHUNKS, run_indexer_process, write_corpus
from tests.support.mcp_client import stdio_session
from tests.support.oracle import differences, index_fingerprint
from tests.support.serving import running_server

FILL_BATCH = BATCH_CHUNKS  # what the crash harness's indexer process fills a batch at a time
MODES = ("lexical", "static", "contextual", "hybrid")


def generations(target) -> int:
    store = open_store(target)
    try:
        assert store.manifest is not None
        return store.manifest.generation
    finally:
        store.close()


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_corpus(tmp_path / "docs", files=12)


def test_the_cheap_sides_answer_before_the_contextual_vectors_are_filled(
    any_index, fast_model, folder
):
    """At the fill's start the run has published every passage to the lexical and static
    spaces and none to the contextual one; each batch then adds its vectors, published."""
    seen: list[tuple[int, dict, dict]] = []

    def look(event: Progress) -> None:
        if event.stage != "fill":
            return
        with Searcher(any_index) as searcher:
            found = {
                mode: searcher.search("river bank", k=50, mode=mode, all_chunks=True)
                for mode in MODES
            }
            completeness = searcher.completeness()
        seen.append((event.done, completeness.to_dict(), found))

    indexer = Indexer(any_index, model=fast_model, fill_batch_chunks=FILL_BATCH)
    summary = indexer.index_folder(folder, progress=look)

    first_done, first, found = seen[0]
    assert first_done == 0
    assert first["contextual_passages"] == 0 and first["passages"] == summary.chunks
    assert first["contextual_complete"] is False
    assert found["lexical"].results and found["static"].results
    assert found["contextual"].results == []  # no contextual vector yet: no ghost hits
    # hybrid fuses what there is: the lexical side's hits, none without a passage behind
    chunk_ids = {hit.chunk_id for hit in found["lexical"].results}
    assert {hit.chunk_id for hit in found["hybrid"].results} <= chunk_ids
    assert all(hit.similarity is None for hit in found["hybrid"].results)
    assert found["hybrid"].to_dict()["completeness"] == first

    filled = [state["contextual_passages"] for _, state, _ in seen[1:]]
    assert filled == sorted(filled) and filled[-1] == summary.chunks
    assert all(later - earlier <= FILL_BATCH for earlier, later in pairwise(filled))
    batches = -(-summary.chunks // FILL_BATCH)
    assert generations(any_index) == 1 + batches  # the cheap sides' publish, then each batch
    assert summary.encoded == summary.chunks
    report = verify_target(any_index)
    assert report.consistent and report.counts["unfilled"] == 0


def test_hybrid_during_the_fill_ranks_passages_with_and_without_contextual_vectors(
    any_index, fast_model, folder
):
    """Half-way through the fill, every mode answers from one state: the contextual mode
    only passages with a vector, hybrid both kinds, each hit a stored passage."""
    answers: dict[str, list] = {}

    def look(event: Progress) -> None:
        if event.stage == "fill" and not answers and 0 < event.done < event.total:
            with Searcher(any_index) as searcher:
                for mode in MODES:
                    answers[mode] = searcher.search(
                        "river bank money", k=60, mode=mode, all_chunks=True
                    ).results

    Indexer(any_index, model=fast_model, fill_batch_chunks=FILL_BATCH).index_folder(
        folder, progress=look
    )
    contextual = {hit.chunk_id for hit in answers["contextual"]}
    assert 0 < len(contextual) < len({hit.chunk_id for hit in answers["lexical"]})
    hybrid = answers["hybrid"]
    assert {hit.chunk_id for hit in hybrid} <= contextual | {
        hit.chunk_id for hit in answers["lexical"]
    }
    assert any(hit.similarity is None for hit in hybrid)
    assert any(hit.similarity is not None for hit in hybrid)
    assert all(hit.chunk_id in contextual for hit in hybrid if hit.similarity is not None)


def test_a_fill_killed_between_batches_resumes_without_encoding_again(
    any_index, fast_model, folder, tmp_path
):
    """Killed after its second fill batch, the run leaves that published state: verify
    accepts it and says the fill is incomplete; the next run encodes only the rest, and
    the index is then what a one-shot run makes."""
    killed = run_indexer_process(
        any_index,
        folder,
        fast_model,
        env={"CTXSEARCH_KILL_AT": "after-fill-batch:2"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    report = verify_target(any_index)
    assert report.consistent, report.problems
    with Searcher(any_index) as searcher:
        state = searcher.completeness()
    assert state.contextual_passages == 2 * FILL_BATCH < state.passages
    assert report.counts["unfilled"] == state.passages - state.contextual_passages
    assert any("the fill is incomplete" in note for note in report.notes)

    resumed = Indexer(any_index, model=fast_model, fill_batch_chunks=FILL_BATCH).index_folder(
        folder
    )
    assert resumed.added == resumed.chunks == 0  # nothing new to read
    assert resumed.encoded == state.passages - state.contextual_passages
    one_shot = tmp_path / "one-shot"
    Indexer(one_shot, model=fast_model, fill_batch_chunks=0).index_folder(folder)
    assert differences(index_fingerprint(any_index), index_fingerprint(one_shot)) == []


def test_with_a_fill_batch_of_zero_a_run_publishes_everything_at_once(
    any_index, fast_model, folder
):
    """`fill_batch_chunks=0` indexes the old way: one publish holding every space."""
    seen: list[str] = []
    summary = Indexer(any_index, model=fast_model, fill_batch_chunks=0).index_folder(
        folder, progress=lambda event: seen.append(event.stage)
    )
    assert "fill" not in seen
    assert generations(any_index) == 1
    with Searcher(any_index) as searcher:
        assert searcher.completeness().contextual_passages == summary.chunks


def test_records_are_filled_after_their_upsert_publishes(any_index, fast_model):
    """An upsert publishes its records' rows, lexical entries and static vectors at once,
    then their contextual vectors; a record whose text another has reuses its vector."""
    records = [{"id": f"r{n}", "text": f"Otters dive for fish {n} times."} for n in range(10)]
    records.append({"id": "copy", "text": records[0]["text"]})
    indexer = Indexer(any_index, model=fast_model, fill_batch_chunks=4)
    summary = indexer.upsert_records(records)
    assert summary.chunks == 11 and summary.encoded == 10
    with Searcher(any_index) as searcher:
        assert searcher.completeness().contextual_complete
    assert verify_target(any_index).consistent


@pytest.fixture
def filling_index(tmp_path, fast_model) -> Path:
    """A folder index whose run was killed after its first fill batch."""
    index = tmp_path / "ix"
    folder = write_corpus(tmp_path / "notes", files=12)
    killed = run_indexer_process(
        index, folder, fast_model, env={"CTXSEARCH_KILL_AT": "after-fill-batch"}
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    return index


def test_every_surface_says_how_complete_the_index_is(filling_index, tmp_path):
    """`info`, `ls`, `query`, `verify`, HTTP (a real `serve`) and MCP (a real `mcp` over
    stdio) each say, with the same keys, that the fill is under way."""
    with Searcher(filling_index) as searcher:
        expected = searcher.completeness().to_dict()
    assert expected["contextual_passages"] == FILL_BATCH < expected["passages"]
    assert expected["contextual_complete"] is False
    runner = CliRunner()

    info = runner.invoke(cli, ["info", "--index", str(filling_index), "--json"])
    assert json.loads(info.stdout)["completeness"] == expected
    text = runner.invoke(cli, ["info", "--index", str(filling_index)]).stdout
    assert f"contextual vectors: filling: {FILL_BATCH} of {expected['passages']} passages" in text

    listed = json.loads(runner.invoke(cli, ["ls", "--index", str(filling_index), "--json"]).stdout)
    assert [folder["contextual_passages"] for folder in listed] == [FILL_BATCH]
    assert (
        "The index is filling" in runner.invoke(cli, ["ls", "--index", str(filling_index)]).stdout
    )

    asked = ["query", "river bank", "--index", str(filling_index)]
    answer = runner.invoke(cli, [*asked, "--json"])
    assert answer.exit_code == 0 and json.loads(answer.stdout)["completeness"] == expected
    shown = runner.invoke(cli, asked)
    assert shown.exit_code == 0 and "note: the index is filling" in shown.stderr

    checked = runner.invoke(cli, ["verify", "--index", str(filling_index)])
    assert checked.exit_code == 0, checked.output
    assert "consistent" in checked.stdout and "the fill is incomplete" in checked.output

    with running_server(filling_index, tmp_path / "serve.log") as server:
        found = httpx.get(f"{server.url}/search", params={"q": "river bank"}).json()
        assert found["completeness"] == expected
        assert httpx.get(f"{server.url}/info").json()["completeness"] == expected

    async def over_mcp() -> None:
        async with stdio_session(filling_index) as session:
            compact = (
                await session.call_tool("search", {"query": "river bank"})
            ).structured_content
            assert compact["completeness"] == expected
            folders = (await session.call_tool("folders", {})).structured_content
            assert folders["completeness"] == expected

    anyio.run(over_mcp)


def test_hybrid_ranks_a_passage_without_its_contextual_vector_by_the_side_that_has_it(
    filling_index,
):
    """Mid-fill, the newest passages have no contextual score: each takes, on that side,
    the score at its lexical rank (`search.stand_in`), not the side's lowest (which sank
    the lexical side's best passage below passages with a vector): so the passage the
    lexical side ranks first, not filled yet, comes first in hybrid too."""
    with Searcher(filling_index) as searcher:
        [best] = searcher.search("river bank", k=1, mode="lexical", all_chunks=True).results
        assert best.similarity is None  # its contextual vector is not stored yet
        found = searcher.search("river bank", k=5, mode="hybrid", all_chunks=True)
    assert found.completeness is not None and not found.completeness.contextual_complete
    assert found.results[0].chunk_id == best.chunk_id


def test_similar_of_a_file_not_filled_yet_says_so_in_one_line(filling_index):
    """More like a file whose contextual vectors are not stored yet: one line, exit 2
    (it blamed the index before: `run ctxsearch verify`)."""
    with Searcher(filling_index) as searcher:
        found = searcher.search("river", k=50, mode="lexical").results
    latest = max(found, key=lambda hit: hit.path)  # read last, so filled last
    assert latest.similarity is None
    shown = CliRunner().invoke(cli, ["similar", latest.path, "--index", str(filling_index)])
    assert shown.exit_code == 2 and "Traceback" not in shown.output
    assert "its contextual vectors are not stored yet" in shown.stderr

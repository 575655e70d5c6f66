"""SIGKILL or SIGINT the indexer at many points: the index always opens, verifies, recovers.

Each crash starts from the same index (a first corpus, indexed) while the folder has
changed (five files edited, five deleted, five added). After the kill the index must
open and verify consistent, hold exactly the old state (runs are atomic) or, past the
commit, the new one, and a new run must reach the same state as an uninterrupted run:
same documents, same chunk count, identical results in every search mode. A SIGINT runs
every clean-up on the way (a SIGKILL none), so both are tried at every point of publishing,
both when the run adds a delta segment to each space and when it merges them into new bases
(`CTXSEARCH_MAX_DELTAS=0`).
"""

import json
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.faults import KILL_POINTS, PUBLISH_POINTS
from indexer.store.backends import verify_target as verify_index
from search.cli import cli
from tests.search.cli.test_watch import found
from tests.support.crash_harness import (
    copy_index,
    filling_to,
    index_in_process,
    mutate_corpus,
    run_indexer_process,
    start_indexer_process,
    state,
    write_corpus,
)
from tests.support.watching import PATIENCE_SECONDS, Watched

# Every kill runs under `make eval` (-m slow); the default suite runs six of them.
slow = pytest.mark.slow
KILLS = [
    pytest.param("after-scan", marks=slow),
    "after-delete",
    pytest.param("after-batch", marks=slow),
    pytest.param("after-batch:2", marks=slow),
    "after-fill-batch",
    pytest.param("after-fill-batch:2", marks=slow),
    pytest.param("before-space-save", marks=slow),
    "mid-delta-save",
    pytest.param("mid-delta-save:2", marks=slow),
    "mid-space-save",
    pytest.param("mid-space-save:2", marks=slow),
    "before-publish",
    pytest.param("after-commit", marks=slow),
    "after-publish",
    pytest.param("mid-sweep", marks=slow),
]


# Reached only when a run merges the spaces into new bases (a run that adds deltas leaves
# no file to sweep): those runs are told to merge.
MERGE_POINTS = ("mid-space-save", "mid-sweep")
MERGING = {"CTXSEARCH_MAX_DELTAS": "0"}


def environment_for(point: str, variable: str, merging: bool = False) -> dict[str, str]:
    """Stop at `point` by `variable`, in a run that merges where the point needs one."""
    merge = merging or point.split(":")[0] in MERGE_POINTS
    return {variable: point, **(MERGING if merge else {})}


def test_every_kill_point_of_the_indexer_is_in_the_matrix():
    named = {(k.values[0] if hasattr(k, "values") else k).split(":")[0] for k in KILLS}
    assert named == set(KILL_POINTS)


def crash_scenario(root, model_dir: str, quantize: str | None = None) -> dict:
    """The index before the change (quantized as asked), the changed folder, and the state
    after a clean run; for a quantized index the states are its float32 vectors'."""
    folder = write_corpus(root / "docs")
    before = root / "before"
    index_in_process(before, folder, model_dir, quantize=quantize)
    old_state = state(before)
    mutate_corpus(folder)
    reference = copy_index(before, root / "reference")
    index_in_process(reference, folder, model_dir)
    return {
        "root": root,
        "folder": folder,
        "before": before,
        "old": old_state,
        "new": state(reference),
    }


@pytest.fixture(scope="module")
def scenario(tmp_path_factory, fast_model):
    """The crash scenario on a float32 index."""
    return crash_scenario(tmp_path_factory.mktemp("crash"), fast_model)


@pytest.fixture(scope="module")
def quantized_scenario(tmp_path_factory, fast_model):
    """The crash scenario on an index whose spaces are int8-quantized (codes, and float32
    vectors in a file beside each base)."""
    return crash_scenario(tmp_path_factory.mktemp("crash-int8"), fast_model, quantize="int8")


def recover_and_compare(index_dir, scenario, model_dir, allow_new: bool) -> None:
    report = verify_index(index_dir)
    assert report.consistent, report.problems
    observed = state(index_dir)
    assert observed == scenario["old"] or (
        allow_new and (observed == scenario["new"] or filling_to(observed, scenario["new"]))
    )
    index_in_process(index_dir, scenario["folder"], model_dir)
    assert verify_index(index_dir).consistent
    assert state(index_dir) == scenario["new"]


def killed_then_recovered(scenario, model_dir: str, kill_at: str, allow_new: bool) -> Path:
    """Kill an indexer process of `scenario`'s change at `kill_at`, then check that it left
    the old (or, with `allow_new`, the new) state and that the next run recovers."""
    index_dir = copy_index(scenario["before"], scenario["root"] / f"kill-{kill_at}")
    result = run_indexer_process(
        index_dir,
        scenario["folder"],
        model_dir,
        env=environment_for(kill_at, "CTXSEARCH_KILL_AT"),
    )
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    recover_and_compare(index_dir, scenario, model_dir, allow_new=allow_new)
    return index_dir


@pytest.mark.parametrize("kill_at", KILLS)
def test_killed_at_a_named_point_then_recovered(scenario, fast_model, kill_at):
    # Killed after its commit, the run has published (perhaps not all its contextual
    # vectors yet); before it, nothing is visible.
    committed = kill_at.startswith(("after-commit", "after-publish", "mid-sweep", "after-fill"))
    killed_then_recovered(scenario, fast_model, kill_at, allow_new=committed)


# Every point of publishing, in a run that writes deltas and in one that merges (the
# points a merge shares with a delta run are slow; a merge never passes `mid-delta-save`).
INTERRUPTIONS = [
    *[(point, False) for point in PUBLISH_POINTS if point not in MERGE_POINTS],
    *[(point, True) for point in MERGE_POINTS],
    *[
        pytest.param(point, True, marks=slow)
        for point in PUBLISH_POINTS
        if point not in (*MERGE_POINTS, "mid-delta-save")
    ],
]


@pytest.mark.parametrize(("point", "merging"), INTERRUPTIONS)
def test_interrupted_at_a_point_of_publishing_then_recovered(scenario, fast_model, point, merging):
    """A Ctrl-C (SIGINT, so every clean-up on the way runs) anywhere in publishing leaves
    the old state before the commit and the new one after it (its fill under way), never
    a broken index."""
    index_dir = copy_index(
        scenario["before"], scenario["root"] / f"sigint-{point}-{'merge' if merging else 'delta'}"
    )
    result = run_indexer_process(
        index_dir,
        scenario["folder"],
        fast_model,
        env=environment_for(point, "CTXSEARCH_SIGINT_AT", merging),
    )
    assert result.returncode != 0 and "KeyboardInterrupt" in result.stderr, result.stderr[-2000:]
    report = verify_index(index_dir)
    assert report.consistent, report.problems
    committed = PUBLISH_POINTS.index(point) >= PUBLISH_POINTS.index("after-commit")
    observed = state(index_dir)
    if committed:  # the run's first publish: its contextual vectors are the fill's to add
        assert observed == scenario["new"] or filling_to(observed, scenario["new"])
    else:
        assert observed == scenario["old"]
    assert not list(index_dir.glob(".*.tmp-*"))  # no half-saved space is left behind
    index_in_process(index_dir, scenario["folder"], fast_model)
    assert verify_index(index_dir).consistent
    assert state(index_dir) == scenario["new"]


def test_watch_aborted_right_after_its_commit_keeps_what_it_published(tmp_path, fast_model):
    """`watch`'s second signal raises inside the run: landing just after the commit, it
    used to sweep the generation just published (issue 24, item 3)."""
    docs = write_corpus(tmp_path / "docs", files=3)
    index = tmp_path / "ix"
    index_in_process(index, docs, fast_model)
    args = [str(docs), "--index", str(index), "--model", fast_model, "--debounce", "100"]
    pause = {"CTXSEARCH_PAUSE_AT": f"after-commit:{PATIENCE_SECONDS}"}
    watched = Watched(args, tmp_path, env=pause)
    try:
        watched.until(lambda: "watching" in watched.stderr(), "the start")
        (docs / "avocets.md").write_text("Avocets sweep their upturned bills through mud.")
        watched.until(lambda: "paused at after-commit" in watched.stderr(), "the commit")
        watched.process.send_signal(signal.SIGTERM)
        watched.until(lambda: "stopping after" in watched.stderr(), "the first signal")
        watched.process.send_signal(signal.SIGTERM)
        status = watched.process.wait(timeout=PATIENCE_SECONDS)
    finally:
        watched.stop()
    log = watched.stderr()
    assert status == 130 and "Traceback" not in log, log
    report = verify_index(index)
    assert report.consistent, report.problems
    assert found(index, "avocets") == ["avocets.md"]  # committed, so published
    shown = json.loads(CliRunner().invoke(cli, ["info", "--index", str(index), "--json"]).stdout)
    assert shown["documents"] == 4


@pytest.mark.parametrize(
    "kill_at",
    ["mid-delta-save", "mid-space-save", "mid-space-save:2", "before-publish", "after-commit"],
)
def test_a_quantized_index_killed_at_a_named_point_then_recovered(
    quantized_scenario, fast_model, kill_at
):
    """Merging, a quantized base saves its float32 vectors file first, then its codes (the
    first and second `mid-space-save`): a kill at either leaves the old state."""
    index_dir = killed_then_recovered(
        quantized_scenario, fast_model, kill_at, allow_new=kill_at == "after-commit"
    )
    assert {path.name.split("-")[0] for path in index_dir.glob("*.exact.npy")} == {
        "contextual",
        "static",
    }


@pytest.fixture(scope="module")
def run_seconds(scenario, fast_model) -> float:
    """How long an uninterrupted indexer process takes, start-up included."""
    started = time.monotonic()
    run_indexer_process(
        copy_index(scenario["before"], scenario["root"] / "timing"),
        scenario["folder"],
        fast_model,
    )
    return time.monotonic() - started


FRACTIONS = [
    pytest.param(0.3, marks=slow),
    pytest.param(0.6, marks=slow),
    pytest.param(0.8, marks=slow),
    0.9,
    pytest.param(0.95, marks=slow),
    pytest.param(1.0, marks=slow),
]


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_killed_at_an_arbitrary_instant_then_recovered(scenario, fast_model, run_seconds, fraction):
    """Kills by the clock land anywhere, the SQL commit included."""
    index_dir = copy_index(scenario["before"], scenario["root"] / f"timed-{fraction}")
    process = start_indexer_process(index_dir, scenario["folder"], fast_model)
    time.sleep(run_seconds * fraction)  # the instant is the point (any one must recover)
    process.send_signal(signal.SIGKILL)
    process.wait()
    recover_and_compare(index_dir, scenario, fast_model, allow_new=True)


def test_killed_during_the_very_first_run_then_recovered(tmp_path, fast_model):
    folder = write_corpus(tmp_path / "docs", files=6)
    index_dir = tmp_path / "ix"
    result = run_indexer_process(
        index_dir, folder, fast_model, env={"CTXSEARCH_KILL_AT": "before-publish"}
    )
    assert result.returncode == -signal.SIGKILL
    assert verify_index(index_dir).consistent
    summary = index_in_process(index_dir, folder, fast_model)
    assert summary.added == 6 and verify_index(index_dir).consistent


@pytest.mark.parametrize("point", ["mid-space-save:1", "mid-space-save:2", "before-publish:1"])
def test_a_new_index_killed_in_its_first_run_is_made_by_the_next(tmp_path, fast_model, point):
    """A new index killed while it saves its first (empty) spaces or before its first
    publish: the next run makes the index, and it equals an uninterrupted one (found by
    the oracle machine: a .faiss.tmp file left behind made the folder 'not empty')."""
    folder = write_corpus(tmp_path / "docs", files=6)
    index = tmp_path / "ix"
    killed = run_indexer_process(index, folder, fast_model, env={"CTXSEARCH_KILL_AT": point})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    again = run_indexer_process(index, folder, fast_model)
    assert again.returncode == 0, again.stderr
    reference = tmp_path / "reference"
    assert run_indexer_process(reference, folder, fast_model).returncode == 0
    assert state(index) == state(reference)
    assert verify_index(index).consistent

"""Readers during a run, a second writer, and a lock left behind by a killed writer."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from search import Searcher
from search.cli import cli
from tests.conftest import ROOT
from tests.support.crash_harness import (
    QUERIES,
    index_before_and_after_a_change,
    index_in_process,
    start_indexer_process,
    wait_for_hold,
)
from tests.support.processes import until_open

HOLD_LOCK = """
import os, signal, sys
from indexer.store.local.lock import WriterLock
lock = WriterLock(sys.argv[1]).acquire()
print("locked", flush=True)
if sys.argv[2] == "die":
    os.kill(os.getpid(), signal.SIGKILL)
sys.stdin.read()  # held until the test closes our stdin (or kills us)
"""


def hold_lock(index_dir, how: str = "hold") -> subprocess.Popen:
    """A process holding the index's writer lock until its stdin is closed (`hold`), or
    dying with it (`die`)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(index_dir), how],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "locked"
    return process


@pytest.fixture
def small_index(tmp_path, notes, tiny_model_dir):
    index_in_process(tmp_path / "ix", notes, tiny_model_dir)
    return tmp_path / "ix"


def files_of(index_dir):
    return {p.name: p.read_bytes() for p in index_dir.iterdir() if p.suffix in (".faiss", ".npz")}


def test_a_second_writer_is_refused_with_exit_3_and_changes_nothing(small_index, notes):
    (notes / "extra.md").write_text("A brand new note about herons.")
    before = files_of(small_index)
    holder = hold_lock(small_index)
    try:
        result = CliRunner().invoke(cli, ["index", str(notes), "--index", str(small_index)])
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 3
    assert f"another ctxsearch process (pid {holder.pid}) is writing this index" in result.stderr
    assert "--wait" in result.stderr
    assert files_of(small_index) == before


def test_a_second_writer_with_wait_runs_when_the_first_is_done(small_index, notes):
    """`index --wait` waits while another process holds the lock (it has the lock file
    open and has written nothing), and runs as soon as the lock is let go."""
    (notes / "extra.md").write_text("A brand new note about herons.")
    before = files_of(small_index)
    holder = hold_lock(small_index)
    command = [sys.executable, "-m", "search", "index", str(notes), "--index", str(small_index)]
    waiter = subprocess.Popen(
        [*command, "--wait", "--json"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert until_open(waiter, small_index / "write.lock")  # it is in the lock's wait
        assert waiter.poll() is None and files_of(small_index) == before
    finally:
        holder.stdin.close()  # the first writer is done
        holder.wait()
    output, _ = waiter.communicate(timeout=300)
    assert waiter.returncode == 0
    assert '"added": 1' in output


def test_a_lock_left_by_a_killed_writer_is_recovered(small_index, notes):
    holder = hold_lock(small_index, "die")
    assert holder.wait() == -signal.SIGKILL
    assert (small_index / "write.lock").read_text().strip() == str(holder.pid)
    (notes / "extra.md").write_text("A brand new note about herons.")
    result = CliRunner().invoke(cli, ["index", str(notes), "--index", str(small_index), "--json"])
    assert result.exit_code == 0 and '"added": 1' in result.stdout


def test_readers_see_the_old_state_or_the_new_never_a_mix(tmp_path, tiny_model_dir, any_index):
    """Readers, long-lived and new, from the writer's first change to after its commit,
    and through the fill after it (each of its states a published one, saying so).
    They start once the writer has scanned the folder (it changes nothing before): read
    while it starts up, they would only take its processor and see the old state."""
    reference = tmp_path / "reference" if isinstance(any_index, Path) else f"{any_index}_ref"
    folder, index_dir, old, new = index_before_and_after_a_change(
        tmp_path, tiny_model_dir, any_index, reference
    )

    scanned = tmp_path / "scanned"
    os.mkfifo(scanned)
    holds = {"CTXSEARCH_HOLD_AT": f"after-scan:{scanned}", "CTXSEARCH_PAUSE_AT": "after-batch:0.5"}
    writer = start_indexer_process(index_dir, folder, tiny_model_dir, env=holds)
    wait_for_hold(writer, "after-scan")
    scanned.open("wb").close()  # the writer goes on
    seen = {"old": 0, "new": 0, "filling": 0}
    with Searcher(index_dir) as long_lived:
        while True:
            finished = writer.poll() is not None
            # a new reader each round (opening one per search would mostly take the
            # writer's processor), and the long-lived one
            with Searcher(index_dir) as new_reader:
                for query in QUERIES:
                    for mode in ("lexical", "static", "contextual", "hybrid"):
                        for searcher in (long_lived, new_reader):
                            found = searcher.search(query, k=5, mode=mode)
                            hits = found.results
                            observed = [(h.path, h.start, h.end, round(h.score, 4)) for h in hits]
                            if observed == old[(query, mode)]:
                                seen["old"] += 1
                            elif found.completeness is not None:  # not complete
                                # a state the fill publishes on the way: every new passage
                                # in the lexical and static spaces, some in the contextual one
                                if mode in ("lexical", "static"):
                                    assert observed == new[(query, mode)], (query, mode)
                                seen["filling"] += 1
                            else:
                                assert observed == new[(query, mode)], (query, mode)
                                seen["new"] += 1
            if finished:
                break
    assert writer.returncode == 0, writer.stderr.read()
    assert seen["old"] > 0 and seen["new"] > 0, seen

"""Distributed encoding with Ray Data, against a real Ray cluster on this machine.

The cluster is a head node and a worker node (one CPU each, two `ray start` processes),
so a run's two encoding actors live under two raylets, as on two machines. The worker
node's actors pause a moment in every batch (`CTXSEARCH_PAUSE_AT=worker-batch`), so the
two workers finish out of step and a test can kill one in the middle of a batch.
Where the model is not the point, the tiny seeded BERT encodes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.store.backends import open_index
from indexer.store.base import Target
from search.cli import cli
from tests.conftest import ROOT, SHARED_EVAL
from tests.support.crash_harness import mutate_corpus, state, write_corpus

pytest.importorskip("ray", reason="needs the ray extra: pip install 'ctxsearch[ray]'")
# Ray Data's own context copies read its deprecated settings.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")

BATCH_CHUNKS = 8
WORKER_PAUSE = 0.3  # seconds each worker-node actor waits in every batch


@pytest.fixture(scope="module")
def ray_cluster():
    from tests.support.ray_cluster import running_cluster

    with running_cluster({"CTXSEARCH_PAUSE_AT": f"worker-batch:{WORKER_PAUSE}"}) as cluster:
        yield cluster


def vectors_by_chunk(target: Target) -> dict[tuple[str, int, int], dict[str, np.ndarray]]:
    """Every chunk's vectors, read back through the store: the scores of the unit axes."""
    store = open_index(target)
    try:
        manifest = store.manifest
        with store.snapshot() as snapshot:
            total = snapshot.counts()["chunks"]
            axes = np.eye(manifest.dim, dtype=np.float32)
            found: dict[int, dict[str, np.ndarray]] = {}
            for space in manifest.spaces:
                for axis, ranked in enumerate(snapshot.vector_search(space, axes, total)):
                    for chunk_id, score in ranked:
                        vector = found.setdefault(chunk_id, {}).setdefault(
                            space, np.zeros(manifest.dim, dtype=np.float32)
                        )
                        vector[axis] = score
            chunks = snapshot.chunks(found)
        return {(c.path, c.start, c.end): found[c.id] for c in chunks.values()}
    finally:
        store.close()


def assert_same_vectors(reference: Target, candidate: Target) -> int:
    """Same chunks, and every vector of every space at cosine >= 0.99999; the count."""
    expected, actual = vectors_by_chunk(reference), vectors_by_chunk(candidate)
    assert sorted(actual) == sorted(expected)
    worst = 1.0
    for key, spaces in expected.items():
        for space, vector in spaces.items():
            other = actual[key][space]
            norms = np.linalg.norm(vector) * np.linalg.norm(other)
            cosine = float(vector @ other / norms) if norms else 1.0
            worst = min(worst, cosine)
    assert worst >= 0.99999, f"a chunk's vectors differ: cosine {worst}"
    return len(expected)


def _beside(target: Target, tmp_path: Path) -> Target:
    """A second new index on the same backend as `target`, for a local reference run."""
    if isinstance(target, Path):
        return tmp_path / "reference"
    return f"{target}_ref"


def same_summary(local: dict, distributed: dict) -> None:
    """The same JSON keys and counts, whichever encodes (time and workers aside)."""
    assert set(local) == set(distributed)
    for key in ("seconds", "workers"):
        local.pop(key), distributed.pop(key)
    assert distributed == local


def test_a_ray_run_writes_the_same_index_as_a_local_one(
    ray_cluster, any_index, tmp_path, tiny_model_dir
):
    """Both stores: a new index, then an update (changed, deleted, new files) on two workers."""
    folder = write_corpus(tmp_path / "docs", files=40)
    reference = _beside(any_index, tmp_path)
    local = Indexer(reference, model=str(tiny_model_dir), batch_chunks=BATCH_CHUNKS)
    distributed = Indexer(
        any_index,
        model=str(tiny_model_dir),
        batch_chunks=BATCH_CHUNKS,
        ray=ray_cluster.address,
        ray_workers=2,
    )
    for step in ("new", "update"):
        if step == "update":
            mutate_corpus(folder)
        expected = local.index_folder(folder).to_dict()
        events = []
        summary = distributed.index_folder(folder, progress=events.append).to_dict()
        assert expected["workers"] == 1 and summary["workers"] in (1, 2)
        same_summary(expected, summary)
        assert events[-1].chunks == summary["chunks"]
        assert assert_same_vectors(reference, any_index) == expected["total_chunks"]
        assert state(any_index) == state(reference)


def test_a_ray_run_encodes_a_repeated_passage_once_like_a_local_one(
    ray_cluster, tmp_path, tiny_model_dir
):
    """Batches in flight on the cluster: a passage that an earlier batch, not stored yet,
    encodes is taken from the store once that batch is, never encoded twice (issue 26)."""
    from tests.indexer.runs.test_reuse import long_markdown

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (folder / name).write_text(long_markdown())
    local = Indexer(tmp_path / "local", model=str(tiny_model_dir), batch_chunks=BATCH_CHUNKS)
    distributed = Indexer(
        tmp_path / "ray",
        model=str(tiny_model_dir),
        batch_chunks=BATCH_CHUNKS,
        ray=ray_cluster.address,
        ray_workers=2,
    )
    expected = local.index_folder(folder).to_dict()
    summary = distributed.index_folder(folder).to_dict()
    assert summary["encoded"] * 3 == summary["chunks"]
    same_summary(expected, summary)
    assert_same_vectors(tmp_path / "local", tmp_path / "ray")


def test_cli_index_on_ray_reports_its_workers_in_json(ray_cluster, tmp_path, tiny_model_dir):
    folder = write_corpus(tmp_path / "docs", files=12)
    runner = CliRunner()
    # A layer pooling recorded in the manifest is what the actors pool with, too.
    common = ["index", str(folder), "--model", str(tiny_model_dir), "--json"]
    common += ["--pooling", "mean-last2"]
    local = runner.invoke(cli, [*common, "--index", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    result = runner.invoke(
        cli,
        [*common, "--index", str(tmp_path / "ray")],
        env={"CTXSEARCH_RAY": ray_cluster.address},
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["workers"] in (1, 2)  # those that encoded: one may get every batch
    same_summary(json.loads(local.stdout), summary)
    assert_same_vectors(tmp_path / "local", tmp_path / "ray")


def test_without_ray_installed_ray_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    write_corpus(tmp_path / "docs", files=2)
    result = CliRunner().invoke(
        cli, ["index", str(tmp_path / "docs"), "--index", str(tmp_path / "ix"), "--ray", "auto"]
    )
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "pip install 'ctxsearch[ray]'" in result.stderr
    assert not (tmp_path / "ix").exists()


def test_a_worker_that_refuses_to_encode_fails_the_run_in_one_line_and_writes_nothing(
    ray_cluster, tmp_path, tiny_model_dir, monkeypatch
):
    """A worker's own error (here: another ctxsearch version) reaches the CLI as one line."""
    import indexer.runs.ray

    monkeypatch.setattr(indexer.runs.ray, "__version__", "0.0.0-driver")
    folder = write_corpus(tmp_path / "docs", files=3)
    result = CliRunner().invoke(
        cli,
        ["index", str(folder), "--index", str(tmp_path / "ix"), "--model", str(tiny_model_dir),
         "--ray", ray_cluster.address, "--ray-workers", "1", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "install the same version on the cluster" in result.stderr
    assert "Traceback" not in result.stderr
    if (tmp_path / "ix").exists():  # created empty before the run, and left so
        store = open_index(tmp_path / "ix")
        try:
            with store.snapshot() as snapshot:
                assert snapshot.counts()["chunks"] == 0
        finally:
            store.close()


def _paused_workers(cluster) -> dict[int, int]:
    """Worker pid -> how many times its log says it paused in a batch (Ray's log files)."""
    counts = {}
    for log in Path(cluster.temp_dir).glob("session_latest/logs/worker-*.err"):
        try:
            paused = log.read_text(errors="replace").count("paused at worker-batch")
        except FileNotFoundError:  # Ray removed an idle worker's log between glob and read
            continue
        if paused:
            counts[int(log.stem.rsplit("-", 1)[1])] = paused
    return counts


def test_a_worker_killed_mid_batch_is_replaced_and_the_run_finishes_the_same(
    ray_cluster, tmp_path, tiny_model_dir
):
    """SIGKILL an encoding actor while it holds a batch: Ray restarts it and retries."""
    folder = write_corpus(tmp_path / "docs", files=60)
    Indexer(tmp_path / "reference", model=str(tiny_model_dir), batch_chunks=BATCH_CHUNKS)\
        .index_folder(folder)  # fmt: skip
    command = [
        sys.executable, "-m", "search", "index", str(folder), "--index", str(tmp_path / "ray"),
        "--model", str(tiny_model_dir), "--batch-chunks", str(BATCH_CHUNKS),
        "--ray", ray_cluster.address, "--ray-workers", "2", "--json",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CTXSEARCH_PAUSE_AT", None)
    before = _paused_workers(ray_cluster)
    run = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    victim = None
    try:
        deadline = time.monotonic() + 240
        while victim is None and run.poll() is None and time.monotonic() < deadline:
            now = _paused_workers(ray_cluster)
            busy = [pid for pid, count in now.items() if count > before.get(pid, 0)]
            if busy:
                victim = busy[0]  # a worker-node actor, in the pause inside a batch
                os.kill(victim, signal.SIGKILL)
            time.sleep(0.05)
        out, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert victim is not None, "no worker-node actor took a batch"
    assert run.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "Ray reported" in err  # its notes, in one line
    assert not Path(f"/proc/{victim}").exists()
    summary = json.loads(out)  # stdout is the summary alone, even with a worker killed
    assert summary["workers"] >= 2  # the head's actor, the killed one's replacement
    assert assert_same_vectors(tmp_path / "reference", tmp_path / "ray") == summary["chunks"]
    assert state(tmp_path / "ray") == state(tmp_path / "reference")


def test_a_driver_killed_during_a_ray_run_leaves_the_index_as_it_was(
    ray_cluster, tmp_path, tiny_model_dir
):
    folder = write_corpus(tmp_path / "docs", files=30)
    target = tmp_path / "ix"
    Indexer(target, model=str(tiny_model_dir), batch_chunks=BATCH_CHUNKS).index_folder(folder)
    before = state(target)
    mutate_corpus(folder)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "CTXSEARCH_KILL_AT": "after-batch:2",
    }
    run = subprocess.run(
        [sys.executable, "-m", "search", "index", str(folder), "--index", str(target),
         "--batch-chunks", str(BATCH_CHUNKS), "--ray", ray_cluster.address, "--quiet"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == -signal.SIGKILL, run.stderr[-3000:]
    assert state(target) == before


def _scifact_folder(destination: Path, count: int) -> Path:
    """The first `count` SciFact abstracts, one text file each (title, then abstract)."""
    corpus = SHARED_EVAL / "scifact" / "corpus.jsonl"
    destination.mkdir(parents=True)
    with corpus.open() as lines:
        for number, line in zip(range(count), lines, strict=False):
            record = json.loads(line)
            path = destination / f"{number:05d}-{record['_id']}.txt"
            path.write_text(f"{record['title']}\n\n{record['text']}\n")
    return destination


def _actor_pids(node) -> list[int]:
    """The encoding actors (`ray::MapWorker...`) whose raylet belongs to this node."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(status.parent.name))
    found, todo = [], [node.pid]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            try:
                title = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if title.startswith(b"ray::MapWorker"):
                found.append(child)
    return found


@pytest.mark.slow
@pytest.mark.ray  # its own cluster (running_cluster), not the module's fixture
@pytest.mark.skipif(not (SHARED_EVAL / "scifact").is_dir(), reason="needs ../shared/eval")
def test_1000_scifact_files_on_two_workers_with_one_killed_match_a_single_process(tmp_path, model):
    """The real model: same vectors and the same top-10 for 20 queries, a worker killed."""
    from search import Searcher
    from tests.support.ray_cluster import running_cluster

    folder = _scifact_folder(tmp_path / "scifact", 1000)
    Indexer(tmp_path / "local").index_folder(folder)
    with running_cluster() as cluster:
        command = [
            sys.executable, "-m", "search", "index", str(folder),
            "--index", str(tmp_path / "ray"), "--ray", cluster.address,
            "--ray-workers", "2", "--batch-chunks", "64", "--json",
        ]  # fmt: skip
        run = subprocess.Popen(
            command, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        victim = None
        try:
            time.sleep(5)
            deadline = time.monotonic() + 300
            while victim is None and run.poll() is None and time.monotonic() < deadline:
                actors = _actor_pids(cluster.nodes[1])  # the worker node's actor
                if actors:
                    time.sleep(20)  # well into the run: it has encoded batches by now
                    victim = actors[0]
                    os.kill(victim, signal.SIGKILL)
                time.sleep(1)
            out, err = run.communicate(timeout=1800)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    assert victim is not None and run.returncode == 0, err[-3000:]
    summary = json.loads(out)
    assert summary["added"] == 1000 and summary["workers"] >= 2
    assert assert_same_vectors(tmp_path / "local", tmp_path / "ray") == summary["chunks"]
    queries = [
        json.loads(line)["text"]
        for line in (SHARED_EVAL / "scifact" / "queries.jsonl").read_text().splitlines()[:20]
    ]
    with Searcher(tmp_path / "local") as local, Searcher(tmp_path / "ray") as distributed:
        for query in queries:
            for mode in ("contextual", "static", "hybrid"):
                expected = [hit.path for hit in local.search(query, k=10, mode=mode).results]
                actual = [hit.path for hit in distributed.search(query, k=10, mode=mode).results]
                assert actual == expected, (query, mode)

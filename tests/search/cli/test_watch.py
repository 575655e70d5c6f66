"""`ctxsearch watch` as a real process: edits, additions and deletions reach the index;
another writer is waited for; SIGTERM in the middle of a burst stops it cleanly."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from search.cli import cli
from search.cli.watch import _Relevant
from tests.conftest import ROOT
from tests.indexer.store.test_concurrency import hold_lock

PATIENCE_SECONDS = 120.0  # generous: the machine is shared; the polls end as soon as it shows


def eventually(condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` until it holds, failing with `what` after PATIENCE_SECONDS."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


def found(index: Path, query: str) -> list[str]:
    """The file names a lexical query finds (no model is loaded); [] while no index."""
    result = CliRunner().invoke(
        cli, ["query", query, "--index", str(index), "--mode", "lexical", "--json", "-k", "50"]
    )
    if result.exit_code != 0:
        return []
    return sorted(Path(hit["path"]).name for hit in json.loads(result.stdout)["results"])


def start_watch(folder: Path, index: Path, tiny_model_dir: Path, log: Path) -> subprocess.Popen:
    """`ctxsearch watch folder --index index` (tiny model, 200 ms debounce); its stderr in
    `log`, its stdout beside it in watch.out."""
    command = [sys.executable, "-m", "search", "watch", str(folder), "--index", str(index)]
    command += ["--model", str(tiny_model_dir), "--debounce", "200"]
    with open(log.parent / "watch.out", "w") as out, open(log, "w") as err:
        return subprocess.Popen(
            command, cwd=ROOT, stdout=out, stderr=err, env={**os.environ, "HF_HUB_OFFLINE": "1"}
        )


@pytest.fixture
def watching(tmp_path, tiny_model_dir) -> Iterator[tuple[Path, Path, subprocess.Popen, Path]]:
    """A `ctxsearch watch` process on a temp folder: (folder, index, process, stderr file)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    index = tmp_path / "ix"
    stderr = tmp_path / "watch.err"
    process = start_watch(docs, index, tiny_model_dir, stderr)
    try:
        eventually(lambda: found(index, "herons") == ["herons.md"], "the first run")
        yield docs, index, process, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_change_made_while_the_first_run_reads_is_indexed(tmp_path, tiny_model_dir, monkeypatch):
    """The watcher is armed before the first run scans: a file edited while that run is
    held (after it read and stored the old text) comes in a later run. Before, the
    watcher started after the first run, and such an edit was never indexed."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    monkeypatch.setenv("CTXSEARCH_HOLD_AT", f"after-batch:{gate}")
    stderr = tmp_path / "watch.err"
    process = start_watch(docs, tmp_path / "ix", tiny_model_dir, stderr)
    try:
        eventually(lambda: "held at after-batch" in stderr.read_text(), "the first run's read")
        (docs / "herons.md").write_text("Herons and flamingos wade in shallow water.")
        with open(gate, "wb"):  # let the first run go on
            pass
        eventually(lambda: found(tmp_path / "ix", "flamingos") == ["herons.md"], "the edit")
    finally:
        process.kill()
        process.wait()


def test_an_edit_an_addition_and_a_deletion_reach_the_index(watching):
    docs, index, _, _ = watching
    (docs / "herons.md").write_text("Herons and flamingos wade in shallow water.")
    eventually(lambda: found(index, "flamingos") == ["herons.md"], "the edit")
    (docs / "kingfishers.md").write_text("Kingfishers dive for fish from a branch.")
    eventually(lambda: found(index, "kingfishers") == ["kingfishers.md"], "the addition")
    (docs / "kingfishers.md").unlink()
    eventually(lambda: found(index, "kingfishers") == [], "the deletion")
    # A file that appears and vanishes at once, and a folder made then removed.
    (docs / "fleeting.md").write_text("Here for an instant.")
    (docs / "fleeting.md").unlink()
    (docs / "sub").mkdir()
    (docs / "sub" / "deep.md").write_text("Grebes nest on floating platforms.")
    eventually(lambda: found(index, "grebes") == ["deep.md"], "a new folder's file")
    (docs / "sub" / "deep.md").unlink()
    (docs / "sub").rmdir()
    eventually(lambda: found(index, "grebes") == [], "a removed folder")
    assert found(index, "instant") == []


def test_the_log_line_says_how_many_passages_were_encoded(watching):
    """A copied file is written without encoding: watch's line says `(0 encoded)`."""
    docs, index, _, stderr = watching
    out = stderr.parent / "watch.out"
    shutil.copy(docs / "herons.md", docs / "herons-copy.md")
    eventually(lambda: "herons-copy.md" in found(index, "herons"), "the copy")
    added = lambda: [line for line in out.read_text().splitlines() if "1 added" in line]  # noqa: E731
    eventually(lambda: len(added()) == 2, "the copy's line (after the first run's)")
    assert "; 1 chunks (0 encoded) in " in added()[-1], added()


def test_a_folder_deleted_and_made_again_is_watched_again(watching, tmp_path):
    """`rm -rf docs && make docs`, then a folder swap: the deleted files leave the index
    while the folder is gone, and what comes back is indexed, edits included."""
    docs, index, process, stderr = watching
    shutil.rmtree(docs)
    eventually(lambda: found(index, "herons") == [], "the deleted files leave the index")
    eventually(lambda: "docs: the folder is gone" in stderr.read_text(), "the note")
    docs.mkdir()
    (docs / "avocets.md").write_text("Avocets sweep their bills through the mud.")
    eventually(lambda: found(index, "avocets") == ["avocets.md"], "the new folder's file")
    (docs / "avocets.md").write_text("Avocets and stilts sweep the mud.")
    eventually(lambda: found(index, "stilts") == ["avocets.md"], "an edit in the new folder")
    swap = tmp_path / "docs.new"
    swap.mkdir()
    (swap / "plovers.md").write_text("Plovers run and stop on the sand.")
    docs.rename(tmp_path / "docs.old")
    swap.rename(docs)
    eventually(lambda: found(index, "plovers") == ["plovers.md"], "the swapped-in folder")
    eventually(lambda: found(index, "stilts") == [], "the swapped-out folder's files gone")
    (docs / "plovers.md").write_text("Plovers and lapwings run on the sand.")
    eventually(lambda: found(index, "lapwings") == ["plovers.md"], "an edit after the swap")
    assert process.poll() is None and "Traceback" not in stderr.read_text()


def test_a_root_of_its_own_inside_the_watched_folder_is_kept_in_step(tmp_path, tiny_model_dir):
    """`index docs/sub --exclude 'draft*'` and `index docs/.journal`, then `watch docs`:
    changes under them are indexed too, each with its own rules, and the watcher says so."""
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    (docs / "sub" / "egrets.md").write_text("Egrets follow cattle across the field.")
    index = tmp_path / "ix"
    command = ["index", str(docs / "sub"), "--index", str(index), "--exclude", "draft*"]
    indexed = CliRunner().invoke(cli, [*command, "--model", str(tiny_model_dir)])
    assert indexed.exit_code == 0, indexed.output
    (docs / ".journal").mkdir()  # hidden, so only a root of its own
    (docs / ".journal" / "monday.md").write_text("Monday: coots at the pond.")
    journal = CliRunner().invoke(cli, ["index", str(docs / ".journal"), "--index", str(index)])
    assert journal.exit_code == 0, journal.output
    stderr = tmp_path / "watch.err"
    process = start_watch(docs, index, tiny_model_dir, stderr)
    try:
        eventually(lambda: found(index, "herons") == ["herons.md"], "the first run")
        note = f"{docs / 'sub'} is a root of its own"
        eventually(lambda: note in stderr.read_text(), "the note on the nested root")
        (docs / "sub" / "draft.md").write_text("Grebes, a draft that sub leaves out.")
        (docs / "sub" / "grebes.md").write_text("Grebes nest on floating platforms.")
        eventually(lambda: found(index, "grebes") == ["grebes.md"], "a nested root's new file")
        (docs / "sub" / "egrets.md").write_text("Egrets and avocets follow cattle.")
        eventually(lambda: found(index, "avocets") == ["egrets.md"], "a nested root's edit")
        (docs / ".journal" / "tuesday.md").write_text("Tuesday: spoonbills at the pond.")
        eventually(lambda: found(index, "spoonbills") == ["tuesday.md"], "a hidden root's file")
    finally:
        process.kill()
        process.wait()


def test_another_writer_is_waited_for_and_said_so_in_one_line(watching):
    docs, index, process, stderr = watching
    holder = hold_lock(index, "30")
    try:
        (docs / "egrets.md").write_text("Egrets follow cattle across the field.")
        eventually(lambda: "waiting for it" in stderr.read_text(), "the busy note")
        assert found(index, "egrets") == []
    finally:
        holder.kill()
        holder.wait()
    eventually(lambda: found(index, "egrets") == ["egrets.md"], "the run after the wait")
    busy = [line for line in stderr.read_text().splitlines() if "another process" in line]
    assert len(busy) == 1 and process.poll() is None


def test_sigterm_in_a_burst_of_writes_stops_cleanly(watching):
    docs, index, process, stderr = watching
    stop_writing = threading.Event()
    written: list[Path] = []

    def burst() -> None:
        for number in range(400):
            if stop_writing.is_set():
                return
            path = docs / f"burst-{number:03d}.md"
            path.write_text(f"Note {number} about wading birds. " * 40)
            written.append(path)
            time.sleep(0.01)

    writer = threading.Thread(target=burst)
    writer.start()
    try:
        eventually(lambda: len(written) >= 60, "the burst under way")
        runs = index.parent / "watch.out"
        eventually(lambda: len(runs.read_text().splitlines()) >= 2, "a run during the burst")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=PATIENCE_SECONDS) == 0, stderr.read_text()
    finally:
        stop_writing.set()
        writer.join()
    log = stderr.read_text()
    assert "Traceback" not in log and log.splitlines()[-1] == "ctxsearch: stopped"
    verified = CliRunner().invoke(cli, ["verify", "--index", str(index), "--json"])
    assert verified.exit_code == 0 and json.loads(verified.stdout)["consistent"] is True
    partial = [p.name for p in index.iterdir() if ".tmp-" in p.name or "-journal" in p.name]
    assert partial == []


def test_a_second_sigterm_aborts_the_run_in_progress_and_the_index_stays_whole(
    tmp_path, tiny_model_dir
):
    """The first run has 1,500 new files to read: two SIGTERMs in it roll it back."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    index = tmp_path / "ix"
    model = ["--model", str(tiny_model_dir)]
    first = CliRunner().invoke(cli, ["index", str(docs), "--index", str(index), *model])
    assert first.exit_code == 0, first.output
    for number in range(1500):
        (docs / f"bulk-{number:04d}.md").write_text(f"Bulk note {number} on avocets. " * 30)
    stderr = tmp_path / "watch.err"
    command = [sys.executable, "-m", "search", "watch", str(docs), "--index", str(index), *model]
    with open(stderr, "w") as err:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )  # fmt: skip
    try:
        eventually(lambda: "watching" in stderr.read_text(), "the start")
        process.send_signal(signal.SIGTERM)
        eventually(
            lambda: "stopping after" in stderr.read_text() or process.poll() is not None,
            "the first signal acknowledged",
        )
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=PATIENCE_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    log = stderr.read_text()
    assert "Traceback" not in log
    # 130: aborted, nothing of the run published; 0: the run ended before the second signal.
    assert status in (0, 130), log
    if status == 130:
        assert "was aborted (SIGTERM)" in log.splitlines()[-1]
    # All of the run or none of it: never a part.
    shown = CliRunner().invoke(cli, ["info", "--index", str(index), "--json"])
    assert json.loads(shown.stdout)["documents"] in (1, 1501)
    verified = CliRunner().invoke(cli, ["verify", "--index", str(index), "--json"])
    assert verified.exit_code == 0 and json.loads(verified.stdout)["consistent"] is True
    assert found(index, "herons") == ["herons.md"]
    assert [p.name for p in index.iterdir() if ".tmp-" in p.name] == []


def test_the_filter_skips_hidden_paths_and_an_index_inside_the_folder(tmp_path):
    from watchfiles import Change

    relevant = _Relevant([tmp_path], tmp_path / "ix")
    assert relevant(Change.modified, str(tmp_path / "a.md"))
    assert relevant(Change.deleted, str(tmp_path / "gone-folder"))
    assert relevant(Change.added, str(tmp_path / ".ctxsearchignore"))
    assert not relevant(Change.modified, str(tmp_path / "ix" / "ctxsearch.sqlite"))
    assert not relevant(Change.modified, str(tmp_path / ".git" / "a.md"))
    assert not relevant(Change.modified, str(tmp_path / "photo.png"))
    assert not relevant(Change.modified, "/elsewhere/a.md")
    nested = _Relevant([tmp_path], None, {str(tmp_path / ".journal")})
    assert nested(Change.added, str(tmp_path / ".journal" / "day.md"))
    assert nested(Change.added, str(tmp_path / ".journal" / ".ctxsearchignore"))
    assert not nested(Change.added, str(tmp_path / ".other" / "day.md"))


def test_a_name_that_is_not_utf8_neither_stops_watch_nor_is_missed(watching):
    """watchfiles cannot decode a name that is not UTF-8 and raises from its watcher: the
    watcher is armed again and the folders caught up, so that file and later edits are
    indexed, and watch goes on without a traceback."""
    docs, index, process, stderr = watching
    odd = os.fsencode(docs) + b"/caf\xe9-egrets.md"
    with open(odd, "w") as file:
        file.write("Egrets follow cattle across the wet field.")
    shown = "caf\\xe9-egrets.md"  # its odd byte shown as an escape (see indexer.reading.sources)
    eventually(lambda: found(index, "egrets") == [shown], "the file")
    (docs / "herons.md").write_text("Herons and spoonbills wade in shallow water.")
    eventually(lambda: found(index, "spoonbills") == ["herons.md"], "a later edit")
    assert process.poll() is None and "Traceback" not in stderr.read_text()

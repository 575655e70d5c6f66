"""`ctxsearch watch` as a real process: edits, additions and deletions reach the index;
another writer is waited for; SIGTERM in the middle of a burst stops it cleanly."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.runs.indexer import WARM_SPLIT_BYTES
from indexer.watching.changes import RelevantChanges
from indexer.watching.polling import POLL_MS
from search.cli import cli
from tests.conftest import ROOT
from tests.indexer.store.test_concurrency import hold_lock
from tests.support.watching import PATIENCE_SECONDS, Watched


def found(index: Path, query: str) -> list[str]:
    """The file names a lexical query finds (no model is loaded); [] while no index."""
    result = CliRunner().invoke(
        cli, ["query", query, "--index", str(index), "--mode", "lexical", "--json", "-k", "50"]
    )
    if result.exit_code != 0:
        return []
    return sorted(Path(hit["path"]).name for hit in json.loads(result.stdout)["results"])


def start_watch(folder: Path, index: Path, model: str) -> Watched:
    """`ctxsearch watch folder --index index --json` (200 ms debounce), its output in
    watch.out and watch.err beside the index."""
    args = [str(folder), "--index", str(index), "--model", model, "--debounce", "200"]
    return Watched(args, index.parent)


@pytest.fixture
def watching(tmp_path, fast_model) -> Iterator[tuple[Path, Path, Watched]]:
    """A `ctxsearch watch` process (the test encoder) on a temp folder, its first run
    done: (folder, index, the watched process)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    index = tmp_path / "ix"
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: found(index, "herons") == ["herons.md"], "the first run")
        yield docs, index, watched
    finally:
        watched.stop()


def test_a_change_made_while_the_first_run_reads_is_indexed(tmp_path, fast_model, monkeypatch):
    """The watcher is armed before the first run scans: a file edited while that run is
    held (after it read and stored the old text) comes in a later run. Before, the
    watcher started after the first run, and such an edit was never indexed."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    monkeypatch.setenv("CTXSEARCH_HOLD_AT", f"after-batch:{gate}")
    watched = start_watch(docs, tmp_path / "ix", fast_model)
    try:
        watched.until(lambda: "held at after-batch" in watched.stderr(), "the first run's read")
        (docs / "herons.md").write_text("Herons and flamingos wade in shallow water.")
        with open(gate, "wb"):  # let the first run go on
            pass
        watched.until(lambda: found(tmp_path / "ix", "flamingos") == ["herons.md"], "the edit")
    finally:
        watched.stop()


def test_an_edit_an_addition_and_a_deletion_reach_the_index(watching):
    docs, index, watched = watching
    (docs / "herons.md").write_text("Herons and flamingos wade in shallow water.")
    watched.until(lambda: found(index, "flamingos") == ["herons.md"], "the edit")
    (docs / "kingfishers.md").write_text("Kingfishers dive for fish from a branch.")
    watched.until(lambda: found(index, "kingfishers") == ["kingfishers.md"], "the addition")
    (docs / "kingfishers.md").unlink()
    watched.until(lambda: found(index, "kingfishers") == [], "the deletion")
    # A file that appears and vanishes at once, and a folder made then removed.
    (docs / "fleeting.md").write_text("Here for an instant.")
    (docs / "fleeting.md").unlink()
    (docs / "sub").mkdir()
    (docs / "sub" / "deep.md").write_text("Grebes nest on floating platforms.")
    watched.until(lambda: found(index, "grebes") == ["deep.md"], "a new folder's file")
    (docs / "sub" / "deep.md").unlink()
    (docs / "sub").rmdir()
    watched.until(lambda: found(index, "grebes") == [], "a removed folder")
    assert found(index, "instant") == []


def test_the_log_line_says_how_many_passages_were_encoded(watching):
    """A copied file is written without encoding: watch's JSON line says `encoded` 0."""
    docs, _index, watched = watching
    shutil.copy(docs / "herons.md", docs / "herons-copy.md")
    watched.until(lambda: watched.runs() >= 2, "the copy's run")
    line = json.loads(watched.out.read_text().splitlines()[-1])
    assert (line["added"], line["chunks"], line["encoded"]) == (1, 1, 0), line


def test_a_folder_deleted_and_made_again_is_watched_again(watching, tmp_path):
    """`rm -rf docs && make docs`, then a folder swap: the deleted files leave the index
    while the folder is gone, and what comes back is indexed, edits included."""
    docs, index, watched = watching
    shutil.rmtree(docs)
    watched.until(lambda: found(index, "herons") == [], "the deleted files leave the index")
    watched.until(lambda: "docs: the folder is gone" in watched.stderr(), "the note")
    docs.mkdir()
    (docs / "avocets.md").write_text("Avocets sweep their bills through the mud.")
    watched.until(lambda: found(index, "avocets") == ["avocets.md"], "the new folder's file")
    (docs / "avocets.md").write_text("Avocets and stilts sweep the mud.")
    watched.until(lambda: found(index, "stilts") == ["avocets.md"], "an edit in the new folder")
    swap = tmp_path / "docs.new"
    swap.mkdir()
    (swap / "plovers.md").write_text("Plovers run and stop on the sand.")
    docs.rename(tmp_path / "docs.old")
    swap.rename(docs)
    watched.until(lambda: found(index, "plovers") == ["plovers.md"], "the swapped-in folder")
    watched.until(lambda: found(index, "stilts") == [], "the swapped-out folder's files gone")
    (docs / "plovers.md").write_text("Plovers and lapwings run on the sand.")
    watched.until(lambda: found(index, "lapwings") == ["plovers.md"], "an edit after the swap")
    assert watched.process.poll() is None and "Traceback" not in watched.stderr()


def test_a_folder_made_again_after_the_watch_found_it_gone_is_watched_again(tmp_path, fast_model):
    """`rm -rf docs`, and `docs` made again just after the watch looked and found it gone
    (held there), before it arms its file watcher: the watch watches the new folder, so a
    rename in it reaches the index. Before, the catch-up run took the new folder's identity
    for the one watched, and the watch, watching no folder at all, missed every later
    change (the oracle machine's soak: `again.md` renamed, never indexed)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    index = tmp_path / "ix"
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    args = [str(docs), "--index", str(index), "--model", fast_model, "--debounce", "200"]
    # the second look: the first is the watch's start
    watched = Watched(args, tmp_path, env={"CTXSEARCH_HOLD_AT": f"watch-look:2:{gate}"})
    try:
        watched.until(lambda: found(index, "herons") == ["herons.md"], "the first run")
        shutil.rmtree(docs)
        watched.until(lambda: "held at watch-look" in watched.stderr(), "the look, held")
        docs.mkdir()
        (docs / "again.md").write_text("Avocets sweep their bills through the mud.")
        with open(gate, "wb"):  # let the watch go on (once it has the pipe open to read)
            pass
        watched.until(lambda: found(index, "avocets") == ["again.md"], "the new folder's file")
        (docs / "again.md").rename(docs / "moved-again.md")
        watched.until(lambda: found(index, "avocets") == ["moved-again.md"], "the rename")
        assert watched.process.poll() is None and "Traceback" not in watched.stderr()
    finally:
        watched.stop()


def test_a_root_of_its_own_inside_the_watched_folder_is_kept_in_step(tmp_path, fast_model):
    """`index docs/sub --exclude 'draft*'` and `index docs/.journal`, then `watch docs`:
    changes under them are indexed too, each with its own rules, and the watcher says so."""
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    (docs / "sub" / "egrets.md").write_text("Egrets follow cattle across the field.")
    index = tmp_path / "ix"
    command = ["index", str(docs / "sub"), "--index", str(index), "--exclude", "draft*"]
    indexed = CliRunner().invoke(cli, [*command, "--model", fast_model])
    assert indexed.exit_code == 0, indexed.output
    (docs / ".journal").mkdir()  # hidden, so only a root of its own
    (docs / ".journal" / "monday.md").write_text("Monday: coots at the pond.")
    journal = CliRunner().invoke(cli, ["index", str(docs / ".journal"), "--index", str(index)])
    assert journal.exit_code == 0, journal.output
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: found(index, "herons") == ["herons.md"], "the first run")
        note = f"{docs / 'sub'} is a root of its own"
        watched.until(lambda: note in watched.stderr(), "the note on the nested root")
        (docs / "sub" / "draft.md").write_text("Grebes, a draft that sub leaves out.")
        (docs / "sub" / "grebes.md").write_text("Grebes nest on floating platforms.")
        watched.until(lambda: found(index, "grebes") == ["grebes.md"], "a nested root's new file")
        (docs / "sub" / "egrets.md").write_text("Egrets and avocets follow cattle.")
        watched.until(lambda: found(index, "avocets") == ["egrets.md"], "a nested root's edit")
        (docs / ".journal" / "tuesday.md").write_text("Tuesday: spoonbills at the pond.")
        watched.until(lambda: found(index, "spoonbills") == ["tuesday.md"], "a hidden root's file")
    finally:
        watched.stop()


def test_another_writer_is_waited_for_and_said_so_in_one_line(watching):
    docs, index, watched = watching
    holder = hold_lock(index)
    try:
        (docs / "egrets.md").write_text("Egrets follow cattle across the field.")
        watched.until(lambda: "waiting for it" in watched.stderr(), "the busy note")
        assert found(index, "egrets") == []
    finally:
        holder.stdin.close()  # the holder lets the lock go
        holder.wait()
    watched.until(lambda: found(index, "egrets") == ["egrets.md"], "the run after the wait")
    busy = [line for line in watched.stderr().splitlines() if "another process" in line]
    assert len(busy) == 1 and watched.process.poll() is None


def test_sigterm_in_a_burst_of_writes_stops_cleanly(watching):
    docs, index, watched = watching
    stop_writing = threading.Event()
    under_way = threading.Event()

    def burst() -> None:
        for number in range(400):
            path = docs / f"burst-{number:03d}.md"
            path.write_text(f"Note {number} about wading birds. " * 40)
            if number == 60:
                under_way.set()
            if stop_writing.wait(0.01):  # paced, so that runs happen while it writes
                return

    writer = threading.Thread(target=burst)
    writer.start()
    try:
        assert under_way.wait(PATIENCE_SECONDS), "the burst never got under way"
        watched.until(lambda: watched.runs() >= 2, "a run during the burst")
        watched.process.send_signal(signal.SIGTERM)
        assert watched.process.wait(timeout=PATIENCE_SECONDS) == 0, watched.stderr()
    finally:
        stop_writing.set()
        writer.join()
        watched.stop()
    log = watched.stderr()
    assert "Traceback" not in log and log.splitlines()[-1] == "ctxsearch: stopped"
    verified = CliRunner().invoke(cli, ["verify", "--index", str(index), "--json"])
    assert verified.exit_code == 0 and json.loads(verified.stdout)["consistent"] is True
    partial = [p.name for p in index.iterdir() if ".tmp-" in p.name or "-journal" in p.name]
    assert partial == []


def test_a_second_sigterm_aborts_the_run_in_progress_and_the_index_stays_whole(
    tmp_path, tiny_model_dir
):
    """The first run has 1,500 new files to read: two SIGTERMs in it roll it back. (The
    tiny BERT, not the test encoder: its encoding keeps the run going long enough.)"""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    index = tmp_path / "ix"
    model = ["--model", str(tiny_model_dir)]
    first = CliRunner().invoke(cli, ["index", str(docs), "--index", str(index), *model])
    assert first.exit_code == 0, first.output
    for number in range(1500):
        (docs / f"bulk-{number:04d}.md").write_text(f"Bulk note {number} on avocets. " * 30)
    watched = start_watch(docs, index, str(tiny_model_dir))
    try:
        watched.until(lambda: "watching" in watched.stderr(), "the start")
        watched.process.send_signal(signal.SIGTERM)
        watched.until(
            lambda: "stopping after" in watched.stderr() or watched.process.poll() is not None,
            "the first signal acknowledged",
        )
        if watched.process.poll() is None:
            watched.process.send_signal(signal.SIGTERM)
        status = watched.process.wait(timeout=PATIENCE_SECONDS)
    finally:
        watched.stop()
    log = watched.stderr()
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

    relevant = RelevantChanges([tmp_path], [tmp_path / "ix"])
    assert relevant(Change.modified, str(tmp_path / "a.md"))
    assert relevant(Change.deleted, str(tmp_path / "gone-folder"))
    assert relevant(Change.added, str(tmp_path / ".ctxsearchignore"))
    assert not relevant(Change.modified, str(tmp_path / "ix" / "ctxsearch.sqlite"))
    assert not relevant(Change.modified, str(tmp_path / ".git" / "a.md"))
    assert not relevant(Change.modified, str(tmp_path / "photo.png"))
    assert not relevant(Change.modified, "/elsewhere/a.md")
    nested = RelevantChanges([tmp_path], [], {str(tmp_path / ".journal")})
    assert nested(Change.added, str(tmp_path / ".journal" / "day.md"))
    assert nested(Change.added, str(tmp_path / ".journal" / ".ctxsearchignore"))
    assert not nested(Change.added, str(tmp_path / ".other" / "day.md"))


def test_a_name_that_is_not_utf8_neither_stops_watch_nor_is_missed(watching):
    """watchfiles cannot decode a name that is not UTF-8 and raises from its watcher: the
    watcher is armed again and the folders caught up, so that file and later edits are
    indexed, and watch goes on without a traceback."""
    docs, index, watched = watching
    odd = os.fsencode(docs) + b"/caf\xe9-egrets.md"
    with open(odd, "w") as file:
        file.write("Egrets follow cattle across the wet field.")
    shown = "caf\\xe9-egrets.md"  # its odd byte shown as an escape (see indexer.reading.sources)
    watched.until(lambda: found(index, "egrets") == [shown], "the file")
    (docs / "herons.md").write_text("Herons and spoonbills wade in shallow water.")
    watched.until(lambda: found(index, "spoonbills") == ["herons.md"], "a later edit")
    assert watched.process.poll() is None and "Traceback" not in watched.stderr()


def test_a_folder_whose_name_is_not_utf8_is_watched_from_the_start(tmp_path, fast_model):
    """A folder of such a name stops watchfiles' watcher as it arms: the watch polls
    instead, so the files in it and later edits anywhere are indexed. Before, the watcher
    failed at every arming and no run was ever made: the index stayed empty."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    odd = os.fsencode(docs) + b"/caf\xe9"
    os.mkdir(odd)
    with open(odd + b"/egrets.md", "w") as file:
        file.write("Egrets follow cattle across the wet field.")
    index = tmp_path / "ix"
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: found(index, "egrets") == ["egrets.md"], "the odd folder's file")
        watched.until(lambda: "looked at every 1 s" in watched.stderr(), "the note")
        (docs / "herons.md").write_text("Herons and spoonbills wade in shallow water.")
        watched.until(lambda: found(index, "spoonbills") == ["herons.md"], "a later edit")
        with open(odd + b"/egrets.md", "w") as file:
            file.write("Egrets and ibises follow cattle across the wet field.")
        watched.until(lambda: found(index, "ibises") == ["egrets.md"], "an edit in the folder")
        assert watched.process.poll() is None and "Traceback" not in watched.stderr()
    finally:
        watched.stop()


def test_a_watch_that_polls_goes_on_past_symlink_loops(tmp_path, fast_model):
    """A folder that polls (a name that is not UTF-8 is in it) and holds a link to itself,
    a link to the folder that holds it and a link to the folder above: edits are indexed,
    and the watch goes on. Before, watchfiles' poller followed the links, met the loops
    and stopped the watch with a traceback ('Too many levels of symbolic links', 'File
    system loop found')."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    odd = os.fsencode(docs) + b"/caf\xe9"
    os.mkdir(odd)
    with open(odd + b"/egrets.md", "w") as file:
        file.write("Egrets follow cattle across the wet field.")
    (docs / "loop").symlink_to("loop")
    (docs / "again").symlink_to(".")
    (docs / "up").symlink_to("..")
    index = tmp_path / "ix"
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: found(index, "egrets") == ["egrets.md"], "the first run")
        watched.until(lambda: "looked at every 1 s" in watched.stderr(), "the note")
        (docs / "herons.md").write_text("Herons and spoonbills wade in shallow water.")
        watched.until(lambda: found(index, "spoonbills") == ["herons.md"], "an edit")
        with open(odd + b"/egrets.md", "w") as file:
            file.write("Egrets and ibises follow cattle across the wet field.")
        watched.until(lambda: found(index, "ibises") == ["egrets.md"], "an edit in the odd folder")
        assert watched.process.poll() is None and "Traceback" not in watched.stderr()
    finally:
        watched.stop()


def test_a_folder_whose_own_path_is_not_utf8_is_refused_in_one_line(tmp_path):
    """The watcher takes only UTF-8 paths: such a folder is an error of one line (exit 2),
    where it was a traceback (`UnicodeEncodeError ... while processing 'watch_paths'`)."""
    odd = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(odd)
    result = CliRunner().invoke(cli, ["watch", os.fsdecode(odd), "--index", str(tmp_path / "ix")])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: ") and "caf\\xe9: the file watcher cannot watch" in line
    assert not (tmp_path / "ix").exists()


def test_a_file_whose_name_is_not_utf8_and_fails_to_index_is_not_read_over_and_over(
    watching,
):
    """Each run reads a file that failed again, and the watcher stopped at that read of a
    name it cannot pass on: a run, a read, a stop, a catch-up run, every second, for as
    long as the file was there. Polling sees writes only: the file fails once, in the
    run its arrival makes, and the watch is quiet until the next change."""
    docs, index, watched = watching
    (docs / ".broken.tmp").write_bytes(b"not a pdf at all\n")
    os.rename(docs / ".broken.tmp", os.fsencode(docs) + b"/caf\xe9.pdf")  # whole at once

    def failures() -> int:
        return watched.stderr().count("caf\\xe9.pdf: ")

    def failed_runs() -> int:  # a run's JSON line comes after the failures it names
        return sum(json.loads(line)["failed"] for line in watched.out.read_text().splitlines())

    watched.until(lambda: failed_runs() >= 1, "the run the file failed in")
    runs = watched.runs()
    time.sleep(5 * POLL_MS / 1000)  # quiet time in which a loop would have run again
    assert (watched.runs(), failures()) == (runs, 1), watched.stderr()
    (docs / "herons.md").write_text("Herons and spoonbills wade in shallow water.")
    watched.until(lambda: found(index, "spoonbills") == ["herons.md"], "a later edit")


def an_index_whose_model_is_gone(tmp_path, tiny_model_dir) -> tuple[Path, Path]:
    """A folder of one file and its index, made with a copy of the tiny model that is then
    deleted: a watch on it fails to load its model (and says so)."""
    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    index = tmp_path / "ix"
    first = CliRunner().invoke(
        cli, ["index", str(docs), "--index", str(index), "--model", str(model)]
    )
    assert first.exit_code == 0, first.output
    shutil.rmtree(model)
    return docs, index


def test_the_model_is_loaded_after_the_catch_up_so_that_the_first_edit_does_not_wait(
    tmp_path, tiny_model_dir
):
    """A catch-up run with nothing to encode loads no model; the watch loads it right after,
    before any edit comes, and says so in one line when it cannot (here: the model's
    folder is gone), still watching."""
    docs, index = an_index_whose_model_is_gone(tmp_path, tiny_model_dir)
    watched = Watched([str(docs), "--index", str(index), "--debounce", "200"], tmp_path)
    try:
        watched.until(lambda: "could not be loaded" in watched.stderr(), "the model's load")
        assert watched.process.poll() is None
    finally:
        watched.stop()
    note = [line for line in watched.stderr().splitlines() if "could not be loaded" in line]
    assert len(note) == 1 and "Traceback" not in watched.stderr()


def test_the_model_of_an_existing_index_loads_while_the_catch_up_runs(tmp_path, tiny_model_dir):
    """The model's load begins when the watch starts, beside the catch-up run (which
    needs no model when nothing changed), not after it: with the catch-up held after its
    scan, the load has been tried already (here it fails, the model's folder being gone,
    and says so), and the catch-up, let go, ends as before."""
    docs, index = an_index_whose_model_is_gone(tmp_path, tiny_model_dir)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    args = [str(docs), "--index", str(index), "--debounce", "200"]
    watched = Watched(args, tmp_path, env={"CTXSEARCH_HOLD_AT": f"after-scan:{gate}"})
    try:
        try:
            watched.until(lambda: "held at after-scan" in watched.stderr(), "the catch-up")
            watched.until(lambda: "could not be loaded" in watched.stderr(), "the load, beside")
        finally:
            with contextlib.suppress(OSError):
                os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))
        watched.until(lambda: watched.out.read_text().strip(), "the catch-up's line")
        assert watched.process.poll() is None and "Traceback" not in watched.stderr()
    finally:
        watched.stop()


def test_an_edit_made_while_the_watch_splits_large_files_ahead_is_indexed_without_waiting(
    tmp_path, fast_model
):
    """The start-up work (the model's load, then the large files split ahead) goes on
    beside the runs: with it held before its first file, an edit of that very file is
    indexed all the same, and the work, let go, gives way and the watch stays well."""
    docs = tmp_path / "docs"
    docs.mkdir()
    big = docs / "changelog.md"
    sections = [
        f"## Release {n}\n\nFixed the parser for case {n} of the loader.\n" for n in range(6000)
    ]
    big.write_text("# Changelog\n\n" + "\n".join(sections))
    assert big.stat().st_size >= WARM_SPLIT_BYTES
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    index = tmp_path / "ix"
    args = [str(docs), "--index", str(index), "--model", fast_model, "--debounce", "200"]
    watched = Watched(args, tmp_path, env={"CTXSEARCH_HOLD_AT": f"warm-split:{gate}"})
    try:
        try:
            watched.until(lambda: "held at warm-split" in watched.stderr(), "the start-up work")
            with big.open("a") as file:
                file.write("\n## Release next\n\nThe egrets flag is documented.\n")
            watched.until(lambda: found(index, "egrets") == ["changelog.md"], "the edit, held")
        finally:
            with contextlib.suppress(OSError):  # no reader: the watch never reached the hold
                os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))
        (docs / "herons.md").write_text("Herons wade in shallow water.")
        watched.until(lambda: found(index, "herons") == ["herons.md"], "a later edit")
        assert watched.process.poll() is None and "Traceback" not in watched.stderr()
    finally:
        watched.stop()


def test_a_watched_file_root_sees_its_edits_its_replacement_and_its_removal(tmp_path, fast_model):
    """`watch docs loose/todo.md`: the file is a root of its own (a JSON line names it);
    an edit in place, an editor's save (a new file renamed over it), its deletion and
    its return reach the index, and the file beside it never does."""
    docs, loose = tmp_path / "docs", tmp_path / "loose"
    docs.mkdir()
    loose.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    todo = loose / "todo.md"
    todo.write_text("Buy bread and feed the cat.")
    (loose / "other.md").write_text("Sparrows nest under the roof.")
    index = tmp_path / "ix"
    args = [str(docs), str(todo), "--index", str(index), "--model", fast_model]
    watched = Watched([*args, "--debounce", "200"], tmp_path)
    try:
        watched.until(lambda: found(index, "bread") == ["todo.md"], "the first run")
        assert "watching 1 folder(s) and 1 file(s)" in watched.stderr()
        runs = [json.loads(line) for line in watched.out.read_text().splitlines()]
        assert str(todo) in {run["folder"] for run in runs}
        todo.write_text("Walk the dog in the park.")
        watched.until(lambda: found(index, "dog") == ["todo.md"], "an edit in place")
        saved = loose / ".todo.md.swp"
        saved.write_text("Water the ferns on the balcony.")
        os.replace(saved, todo)
        watched.until(lambda: found(index, "ferns") == ["todo.md"], "a save by rename")
        (loose / "other.md").write_text("Sparrows and finches nest under the roof.")
        todo.unlink()
        watched.until(lambda: found(index, "ferns") == [], "the deletion")
        watched.until(lambda: "loose/todo.md: the file is gone" in watched.stderr(), "the note")
        todo.write_text("Back again with kites.")
        watched.until(lambda: found(index, "kites") == ["todo.md"], "the file's return")
        assert found(index, "sparrows") == [] and found(index, "herons") == ["herons.md"]
        assert watched.process.poll() is None and "Traceback" not in watched.stderr()
    finally:
        watched.stop()


def test_a_stop_asked_for_while_the_watch_opens_the_index_ends_it_before_any_run(
    tmp_path, fast_model
):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    index = tmp_path / "ix"
    args = [str(docs), "--index", str(index), "--model", fast_model]
    watched = Watched(args, tmp_path, env={"CTXSEARCH_SIGINT_AT": "watch-start"})
    try:
        assert watched.process.wait(timeout=PATIENCE_SECONDS) == 0, watched.stderr()
    finally:
        watched.stop()
    log = watched.stderr()
    assert "Traceback" not in log and log.splitlines()[-1] == "ctxsearch: stopped", log
    assert watched.runs() == 0 and not index.exists()


def test_a_ctrl_c_while_the_commands_load_ends_in_one_line_without_a_traceback(tmp_path):
    # A Ctrl-C can land before any command has taken charge of it: while Python imports
    # the commands. The import is made to be interrupted there, as the signal would.
    interrupted_import = """
import sys
class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == "search.cli.main":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupting())
sys.argv = ["ctxsearch", "watch", "."]
from search.cli import main
main()
"""
    result = subprocess.run(
        [sys.executable, "-c", interrupted_import], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 130, result.stderr
    assert result.stderr == "ctxsearch: interrupted before the command started\n"

"""The progress display of `ctxsearch index`: the model's load, then chunks encoded with a
rate and the time left, on a terminal only."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from indexer import CtxsearchError, Indexer
from indexer.runs.indexer import Progress
from search.cli.eta import clock, estimate
from search.cli.progress import ProgressBars
from tests.conftest import ROOT

SENTENCE = "The river bank eroded after the flood, and the town rebuilt its walls of stone. "


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as click asks before drawing a bar."""

    def isatty(self) -> bool:
        return True


def corpus(folder: Path) -> Path:
    """Small notes, and one large file of many chunks (one document: one batch)."""
    folder.mkdir(parents=True)
    for number in range(6):
        (folder / f"note{number}.txt").write_text(f"Note {number}. " + SENTENCE * 3)
    (folder / "large.txt").write_text(SENTENCE * 600)
    return folder


def test_a_run_shows_the_model_load_then_advances_inside_a_large_file(tmp_path, tiny_model_dir):
    terminal = Terminal()
    bars = ProgressBars(enabled=True, stream=terminal)
    events: list[Progress] = []

    def progress(event: Progress) -> None:
        events.append(event)
        bars(event)

    # A real (tiny) model: its load takes time to show, its batches split a large file.
    indexer = Indexer(tmp_path / "index", model=str(tiny_model_dir), batch_chunks=4)
    summary = indexer.index_folder(corpus(tmp_path / "docs"), progress=progress)
    bars.close()
    drawn = terminal.getvalue()
    assert [(event.stage, event.done) for event in events[:2]] == [
        ("load-model", 0),
        ("load-model", 1),
    ]
    assert "Loading the model … done in" in drawn
    assert drawn.index("Loading the model") < drawn.index("Encoding chunks")
    assert drawn.index("Encoding chunks") < drawn.index("Contextual vectors")
    assert f"{summary.chunks:,}/{summary.chunks:,} chunks" in drawn
    assert "chunks/s" in drawn and " left · files " in drawn
    assert f"{summary.chunks:,} chunks encoded" in drawn  # the fill's bar
    indexed = [event for event in events if event.stage == "index"]
    last = indexed[-1]
    assert last.chunks == last.encoded == last.chunks_known == summary.chunks
    assert last.bytes_read == last.bytes_total > 0
    assert [event.encoded for event in indexed] == sorted(event.encoded for event in indexed)
    # The fill encodes the large file's passages in one batch (the default size): the
    # count of passages encoded moves before they are stored.
    filled = [event for event in events if event.stage == "fill"]
    assert any(event.chunks < event.encoded for event in filled)
    assert filled[-1].chunks == filled[-1].encoded == filled[-1].total == summary.chunks
    assert [event.encoded for event in filled] == sorted(event.encoded for event in filled)


def test_a_model_that_does_not_load_does_not_read_as_done(tmp_path):
    terminal = Terminal()
    bars = ProgressBars(enabled=True, stream=terminal)
    indexer = Indexer(tmp_path / "index", model=str(tmp_path / "no-such-model"))
    with pytest.raises(CtxsearchError):
        indexer.index_folder(corpus(tmp_path / "docs"), progress=bars)
    bars.close()
    assert terminal.getvalue().startswith("Loading the model … stopped after ")
    assert "done in" not in terminal.getvalue()


def test_the_estimate_converts_the_bytes_left_at_the_measured_chunks_per_byte():
    halfway = Progress("index", 2, 4, 8, 10, 20, 1_000, 3_000)
    guess = estimate(halfway, elapsed=5.0)
    assert (guess.total_chunks, guess.exact) == (60, False)
    assert guess.chunks_per_second == 2.0 and guess.seconds_left == 25.0
    everything_read = Progress("index", 4, 4, 30, 30, 55, 3_000, 3_000)
    guess = estimate(everything_read, elapsed=10.0)
    assert (guess.total_chunks, guess.exact, guess.seconds_left) == (55, True, 25 / 3)
    nothing_encoded = estimate(Progress("index", 0, 4, bytes_total=3_000), elapsed=1.0)
    assert nothing_encoded.chunks_per_second is None and nothing_encoded.seconds_left is None
    assert (clock(75), clock(3_725)) == ("1:15", "1:02:05")


def index_on_a_terminal(folder: Path, index: Path, model: Path, *options: str) -> tuple[str, str]:
    """`ctxsearch index` with stderr on a pseudo-terminal: (what it drew there, stdout)."""
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "search", "index", str(folder), "--index", str(index)]
    process = subprocess.Popen(
        [*command, "--model", str(model), "--batch-chunks", "4", *options],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the process closed the terminal
            break
        if not data:
            break
        drawn += data
    os.close(leader)
    stdout = process.stdout.read().decode() if process.stdout else ""
    assert process.wait() == 0, drawn.decode()
    return drawn.decode(), stdout


def test_the_cli_draws_on_a_terminal_and_never_with_quiet_or_json(tmp_path, fast_model):
    folder = corpus(tmp_path / "docs")
    drawn, stdout = index_on_a_terminal(folder, tmp_path / "a", fast_model)
    assert drawn.index("Loading the model") < drawn.index("Encoding chunks")
    assert "chunks/s" in drawn and "added" in stdout
    drawn, stdout = index_on_a_terminal(folder, tmp_path / "b", fast_model, "--quiet")
    assert drawn == "" and "added" in stdout
    drawn, stdout = index_on_a_terminal(folder, tmp_path / "c", fast_model, "--json")
    assert drawn == ""
    assert json.loads(stdout)["added"] == 7

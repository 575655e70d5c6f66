"""Seconds from `ctxsearch index` start to the first answer and to full quality.

A run publishes its passages with the lexical and static spaces first, then fills the
contextual space in published batches (`indexer.runs.fill`). This starts `ctxsearch
index FOLDER` in a process of its own and, from this one, asks the index a query every
`poll` seconds: the first answer is the first poll that finds hits; full quality the
first that finds every passage with its contextual vector. Halfway through the fill it
asks the query once through `ctxsearch query` and keeps what the CLI shows. With
`--fill-batch-chunks 0` (the old way) the two times are one.

    python -m lab.bench_fill FOLDER --query "dependency injection" [--fill-batch-chunks N]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from indexer.errors import CtxsearchError
from indexer.store.backends import store_exists
from search.engine import Searcher


def time_to_answers(
    folder: Path, index: Path, query: str, fill_batch: int | None, poll: float = 1.0
) -> dict[str, Any]:
    """Index `folder` into the new index `index` in a process of its own; when its first
    answer and full quality came, and what `ctxsearch query` showed during the fill."""
    command = [sys.executable, "-m", "search", "index", str(folder), "--index", str(index)]
    command += ["--quiet", "--json"]
    if fill_batch is not None:
        command += ["--fill-batch-chunks", str(fill_batch)]
    started = time.perf_counter()
    writer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found: dict[str, Any] = {"first_answer_seconds": None, "full_quality_seconds": None}
    searcher: Searcher | None = None  # one, following each generation: few loads
    try:
        while True:
            finished = writer.poll() is not None
            if searcher is None and store_exists(index):
                searcher = _opened(index)
            if searcher is not None:
                _look(searcher, index, query, started, found)
            if finished or found["full_quality_seconds"] is not None:
                break
            time.sleep(poll)
    finally:
        if searcher is not None:
            searcher.close()
    out, err = writer.communicate()
    found["process_seconds"] = round(time.perf_counter() - started, 1)
    if writer.returncode:
        raise SystemExit(f"index failed: {err[-2000:]}")
    summary = json.loads(out)
    found |= {"chunks": summary["chunks"], "encoded": summary["encoded"]}
    return found


def _opened(index: Path) -> Searcher | None:
    try:
        return Searcher(index)
    except CtxsearchError:  # a first run that has not published yet
        return None


def _look(
    searcher: Searcher, index: Path, query: str, started: float, found: dict[str, Any]
) -> None:
    hits = searcher.search(query, k=3).results
    completeness = searcher.completeness()
    now = round(time.perf_counter() - started, 1)
    if hits and found["first_answer_seconds"] is None:
        found["first_answer_seconds"] = now
        found["completeness_at_first_answer"] = completeness.to_dict()
    if completeness.contextual_complete and completeness.passages:
        found["full_quality_seconds"] = now
    elif "during_fill" not in found and 0 < completeness.passages <= (
        2 * completeness.contextual_passages
    ):
        shown = subprocess.run(
            [sys.executable, "-m", "search", "query", query, "--index", str(index), "-k", "3"],
            capture_output=True,
            text=True,
        )
        found["during_fill"] = {
            "seconds": now,
            "stdout": shown.stdout,
            "stderr": shown.stderr,
        }


@click.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--query", required=True, help="The query asked while the index is built.")
@click.option("--fill-batch-chunks", type=int, default=None, help="As for `ctxsearch index`.")
def main(folder: Path, query: str, fill_batch_chunks: int | None) -> None:
    """Print the seconds to the first answer and to full quality as JSON."""
    with tempfile.TemporaryDirectory() as work:
        found = time_to_answers(folder, Path(work) / "ix", query, fill_batch_chunks)
    found["load_average"] = [round(load, 2) for load in os.getloadavg()]
    click.echo(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()

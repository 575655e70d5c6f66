"""`ctxsearch watch`: keep an index in sync with folders while it runs.

The watch itself is the library's (`indexer.watching`: event filtering, batching, folders
followed when they are replaced, link targets looked at, the runs); this command parses
its options, says what the watch tells it, and turns SIGINT and SIGTERM into a stop.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from indexer.errors import CtxsearchError, SourceNotFound
from indexer.faults import kill_point
from indexer.store.base import Target
from indexer.watching.changes import LONGEST_WAIT_MS
from indexer.watching.listener import WatchListener
from indexer.watching.polling import POLL_MS
from search.cli.common import index_option, translate_errors
from search.cli.exit_codes import EXIT_INTERRUPTED
from search.paths import display_path
from search.text import json_text, terminal_text

if TYPE_CHECKING:
    from indexer.runs.folders import IndexSummary
    from indexer.watching.watcher import Watcher


@click.command()
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH..."
)
@index_option
@click.option(
    "--model", default=None, help="Model folder or hub name (new index: all-MiniLM-L6-v2)."
)
@click.option(
    "--pooling", default=None, help="mean (default), cls, max, or mean-lastK (e.g. mean-last4)."
)
@click.option(
    "--debounce",
    type=click.IntRange(min=10, max=60_000),
    default=500,
    show_default=True,
    metavar="MS",
    help="Quiet time, in milliseconds, after the last change before a run "
    f"(a burst that never goes quiet is indexed every {LONGEST_WAIT_MS // 1000} s).",
)
@click.option("--json", "as_json", is_flag=True, help="Print each run's summary as a JSON line.")
@translate_errors
def watch(
    paths: tuple[Path, ...],
    target: Target,
    model: str | None,
    pooling: str | None,
    debounce: int,
    as_json: bool,
) -> None:
    """Keep the index in sync with the folders and files PATH... while this runs.

    \b
    Every folder is indexed once at start (what changed while nobody watched), then
    again whenever files under it are added, changed or deleted, through the same
    incremental run as `ctxsearch index`; a file given is a root that is one file, as
    in `index` (its edits, its replacement by an editor's save, and its deletion are
    seen, never the files beside it). Ctrl-C or SIGTERM stops after the current run
    (exit 0); a second one aborts that run and rolls it back (exit 130). A running
    `serve` sees each run's result, as it does for `index`. A folder that is deleted
    leaves the index and is watched for until it is back (or swapped for another);
    a folder given as a link is followed when the link is swapped; a folder indexed
    on its own inside PATH is watched with it, with its own rules.

    \b
    Examples:
      ctxsearch watch ~/notes
      ctxsearch watch ~/notes ~/papers --index ~/notes.idx --debounce 2000
      ctxsearch watch ~/notes ~/Downloads/report.pdf
    """
    stop_signals = _StopSignals()
    # Installed before the indexer is loaded and the index opened (seconds, on a big
    # index): a stop asked for meanwhile ends the watch before its first run, with exit 0.
    with stop_signals.installed():
        from indexer.runs.indexer import Indexer
        from indexer.watching.watcher import Watcher

        kill_point("watch-start")
        indexer = Indexer(target, model=model, pooling=pooling)
        said = _Said(as_json)
        watcher = Watcher(indexer, paths, debounce_ms=debounce, listener=said)
        said.files = watcher.files
        stop_signals.follow(watcher)
        try:
            folders = len(watcher.roots) - len(watcher.files)
            files = f" and {len(watcher.files)} file(s)" if watcher.files else ""
            click.echo(
                f"ctxsearch: watching {folders} folder(s){files}; Ctrl-C or SIGTERM stops",
                err=True,
            )
            watcher.run()
        except _Aborted as aborted:
            click.echo(
                f"Error: the run in progress was aborted ({aborted}); the index holds the last "
                "run that was published",
                err=True,
            )
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    click.echo("ctxsearch: stopped", err=True)


class _Aborted(KeyboardInterrupt):
    """A second stop signal during a run: the run is abandoned, the index left as it was."""


class _StopSignals:
    """The first SIGINT or SIGTERM asks the watch to stop after the current run; a second
    one during a run aborts it: the store rolls back a change it has not committed, so the
    index is as it was before the run (or, if the signal came after the commit, as the
    run left it)."""

    def __init__(self) -> None:
        self.watcher: Watcher | None = None
        self.asked_early = False  # a signal came before there was a watch to stop

    def follow(self, watcher: Watcher) -> None:
        """Stop this watch from now on (at once, if a signal came while it was made)."""
        self.watcher = watcher
        if self.asked_early:
            watcher.stop()

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.watcher is None:
            self.asked_early = True
            return
        first = not self.watcher.stopping
        if not first and self.watcher.in_run:
            raise _Aborted(signal.Signals(signum).name)
        # Asked before the note is written: a second signal can land while this handler
        # writes it (its handler runs inside this one), and must find the first one seen.
        self.watcher.stop()
        if first and self.watcher.in_run:
            click.echo(
                "ctxsearch: stopping after the current run (signal again to abort it)", err=True
            )

    @contextmanager
    def installed(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class _Said(WatchListener):
    """What `watch` says: notes on stderr, a skipped file once for the same reason, and a
    line (a JSON line with `--json`) on stdout for each run that changed something."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.skipped: set[tuple[str, str]] = set()  # (path, reason) of files skipped
        self.files: set[Path] = set()  # the roots that are one file (`Watcher.files`)

    def run_done(self, root: Path, summary: IndexSummary) -> None:
        try:
            self._skipped_lines(summary)
            self._summary_lines(root, summary)
        finally:
            sys.stdout.flush()  # a log file or a pipe sees each run as it ends

    def folder_gone(self, root: Path, removed: int) -> None:
        what = "file is gone; it" if root in self.files else "folder is gone; its files"
        click.echo(
            f"ctxsearch: {display_path(str(root))}: the {what} left the "
            f"index ({removed} documents); watching for it to come back",
            err=True,
        )

    def folder_back(self, root: Path) -> None:
        shown = display_path(str(root))
        what = "file" if root in self.files else "folder"
        click.echo(f"ctxsearch: {shown}: the {what} is back; watching it again", err=True)

    def nested_root_found(self, root: Path, nested: str) -> None:
        click.echo(
            f"ctxsearch: {display_path(nested)} is a root of its own inside "
            f"{display_path(str(root))}: watched with it, with its own --exclude/--include",
            err=True,
        )

    def nested_root_forgotten(self, root: Path, forgotten: str) -> None:
        click.echo(
            f"ctxsearch: forgot the root {display_path(forgotten)}: its folder is gone "
            f"(what was in it is {display_path(str(root))}'s now)",
            err=True,
        )

    def writer_busy(self) -> None:
        click.echo("ctxsearch: another process is writing the index; waiting for it", err=True)

    def not_indexed(self, root: Path, error: CtxsearchError) -> None:
        if isinstance(error, SourceNotFound):  # the folder cannot be read: keep watching
            click.echo(f"ctxsearch: {terminal_text(error)}", err=True)
            return
        note = f"{error}; {display_path(str(root))} is not indexed until it is fixed"
        click.echo(f"ctxsearch: {terminal_text(note)} (still watching)", err=True)

    def polling(self) -> None:
        click.echo(
            "ctxsearch: a name that is not UTF-8 is under a watched folder, which the file "
            f"watcher cannot pass on: the folders are looked at every {POLL_MS / 1000:g} s "
            "instead while one is there",
            err=True,
        )

    def model_not_loaded(self, error: CtxsearchError) -> None:
        click.echo(
            f"ctxsearch: the model could not be loaded ({terminal_text(error)}); "
            "changes that need it are not indexed until it can be (still watching)",
            err=True,
        )

    def _skipped_lines(self, summary: IndexSummary) -> None:
        """The files skipped, each said once for the same reason (a link that leads
        outside its root, text that is not language), as `index` says them."""
        for skipped in summary.skipped_files:
            if (skipped.path, skipped.reason) not in self.skipped:
                self.skipped.add((skipped.path, skipped.reason))
                reason = terminal_text(skipped.reason)
                click.echo(f"skipped {display_path(skipped.path)}: {reason}", err=True)

    def _summary_lines(self, root: Path, summary: IndexSummary) -> None:
        for failure in summary.failures:
            reason = terminal_text(failure.reason)
            click.echo(f"failed {display_path(failure.path)}: {reason}", err=True)
        if self.as_json:
            click.echo(json_text({"folder": str(root), **summary.to_dict()}))
            return
        if not (summary.added or summary.updated or summary.removed or summary.failed):
            return
        click.echo(
            f"{time.strftime('%H:%M:%S')} {display_path(str(root))}: {summary.added} added, "
            f"{summary.updated} updated, {summary.removed} removed, {summary.failed} failed; "
            f"{summary.chunks} chunks ({summary.encoded} encoded) in {summary.seconds:.1f}s. "
            "The index holds "
            f"{summary.total_documents} documents, {summary.total_chunks} chunks."
        )

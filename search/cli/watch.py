"""`ctxsearch watch`: keep an index in sync with folders while it runs.

Changes are noticed by `watchfiles` (inotify on Linux), grouped until the folder has been
quiet for a moment, then indexed by the same incremental run as `ctxsearch index`, so
every guarantee of a run holds (atomic publication, per-file failures, the writer lock).

A watch follows a folder, not the directory it was when the watch began: inotify loses
a folder that is deleted (`rm -rf docs && make docs`) or swapped for another (`mv`), so
each folder's identity (device and inode) is looked at before a watcher is armed, and
again after every batch of changes and once a second while nothing happens. A folder
that is gone is indexed as empty (its files leave the index) and looked for until it is
back; one that came back, or was swapped, is indexed and watched again. A folder given
as a link is watched as the link: when the link is swapped for one to another folder
(`ln -sfn releases/v2 current.tmp && mv -T current.tmp current`), the folder it leads
to is another, and is indexed (under the same root) and watched.

A link to a file outside its root is indexed only where the root's rules follow such
links (`index --follow-links-outside`); the watcher does not see the files they lead
to, so those are looked at (size, mtime, ctime, inode) after every batch and once a
second, and a change there brings a run of the root.

watchfiles cannot pass on a name that is not UTF-8: its watcher stops with an error when
it arms over a folder of such a name, and at any event on such a file, a read included
(so a file that fails to index, read again by each run, would stop it again and again).
While such a name lies under a watched folder, the watch polls instead (watchfiles'
`force_polling`: each file's time and size looked at every second), which sees writes,
not reads.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from indexer.errors import (
    CtxsearchError,
    IndexLocked,
    InvalidIgnoreFile,
    InvalidPattern,
    SourceNotFound,
)
from indexer.faults import kill_point
from indexer.reading.links import spellings
from indexer.reading.sources import IGNORE_FILE, SKIPPED_FOLDERS, is_indexable, signed_inode
from indexer.store.base import Target
from search.cli.common import index_option, translate_errors
from search.paths import display_path
from search.text import json_text, terminal_text

if TYPE_CHECKING:
    from indexer.runs.indexer import Indexer, IndexSummary

# A burst that never goes quiet (a long copy, a build) is still indexed this often.
_LONGEST_WAIT_MS = 10_000
_LOCK_RETRY_SECONDS = 1.0
# How often, while nothing happens, a folder that is gone or was swapped is looked for.
_LOOK_AGAIN_MS = 1_000
# How often the folders are looked at while a name the watcher cannot pass on is there.
_POLL_MS = 1_000
EXIT_ABORTED = 130  # the shell's code for a command ended by a signal


class _Aborted(KeyboardInterrupt):
    """A second stop signal during a run: the run is abandoned, the index left as it was."""


class _Stop:
    """The first SIGINT or SIGTERM asks to stop after the current run; a second one during
    a run aborts it: the store rolls back a change it has not committed, so the index is
    as it was before the run (or, if the signal came after the commit, as the run left it)."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.in_run = False
        self.idle = threading.Event()  # set while no run is going on
        self.idle.set()

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        first = not self.requested.is_set()
        if not first and self.in_run:
            raise _Aborted(signal.Signals(signum).name)
        # Set before the note is written: a second signal can land while this handler
        # writes it (its handler runs inside this one), and must find the first one seen.
        self.requested.set()
        if first and self.in_run:
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

    @contextmanager
    def running(self) -> Iterator[None]:
        self.in_run = True
        self.idle.clear()
        try:
            yield
        finally:
            self.in_run = False
            self.idle.set()

    def busy(self) -> bool:
        """Whether a run is going on or a stop was asked for: start-up work gives way."""
        return self.in_run or self.requested.is_set()


def _is_under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class _Relevant:
    """Which file events can change the index: an indexable file, a folder (or something
    deleted, which may have been one), or a root's ignore file; never a hidden or
    skipped path, nor the index's own files when the index lies inside a watched folder
    (`index_folders`: the index's folder as given and with its links resolved).
    Paths count from the deepest root that holds them: a watched folder, or a root of
    its own inside one (`nested`, the paths the runs found so far, read at each event),
    which may itself be hidden (`~/notes/.journal`)."""

    def __init__(
        self, roots: list[Path], index_folders: Collection[Path], nested: Collection[str] = ()
    ) -> None:
        self.roots = roots
        self.index_folders = index_folders
        self.nested = nested

    def __call__(self, change: object, raw_path: str) -> bool:
        from watchfiles import Change

        path = Path(raw_path)
        if any(_is_under(path, folder) for folder in self.index_folders):
            return False
        if not any(_is_under(path, root) for root in self.roots):
            return False
        inside = [Path(root) for root in self.nested]
        holders = [root for root in [*self.roots, *inside] if _is_under(path, root)]
        root = max(holders, key=lambda holder: len(holder.parts))
        if path.name == IGNORE_FILE and path.parent == root:
            return True
        parts = path.relative_to(root).parts
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in parts):
            return False
        return is_indexable(path) or change == Change.deleted or path.is_dir()


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
    f"(a burst that never goes quiet is indexed every {_LONGEST_WAIT_MS // 1000} s).",
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
    """Keep the index in sync with the folders under PATH... while this runs.

    \b
    Every folder is indexed once at start (what changed while nobody watched), then
    again whenever files under it are added, changed or deleted, through the same
    incremental run as `ctxsearch index`. Ctrl-C or SIGTERM stops after the current run
    (exit 0); a second one aborts that run and rolls it back (exit 130). A running
    `serve` sees each run's result, as it does for `index`. A folder that is deleted
    leaves the index and is watched for until it is back (or swapped for another);
    a folder given as a link is followed when the link is swapped; a folder indexed
    on its own inside PATH is watched with it, with its own rules.

    \b
    Examples:
      ctxsearch watch ~/notes
      ctxsearch watch ~/notes ~/papers --index ~/notes.idx --debounce 2000
    """
    from indexer.runs.indexer import Indexer
    from indexer.store.backends import store_exists

    roots = _roots(paths, target)
    index_folders = _index_folders(target)
    indexer = Indexer(target, model=model, pooling=pooling)
    stop = _Stop()
    told = _Told()
    targets = _FollowedTargets()
    start_up = _StartUp(indexer, roots, stop)
    with stop.installed(), start_up.joined():
        try:
            click.echo(
                f"ctxsearch: watching {len(roots)} folder(s); Ctrl-C or SIGTERM stops", err=True
            )
            if store_exists(indexer.target):  # a new index's first run loads the model itself
                start_up.begin()

            def run(due: list[Path]) -> None:
                for root in _outermost(due):
                    if not stop.requested.is_set():
                        summary = _run(indexer, root, stop, as_json, told)
                        if summary is not None:
                            targets.record(root, summary)

            while not stop.requested.is_set():
                # Each folder's identity (None: no folder there) as looked at before its
                # watcher is armed, never after: while it is the same, the watcher watches
                # the folder there (or there is none to watch); once it differs, it may
                # watch a folder that is gone, or none where one is now.
                looked = {root: _identity(root) for root in roots}
                kill_point("watch-look")
                present = [root for root in roots if looked[root] is not None]
                relevant = _Relevant(roots, index_folders, told.nested)
                caught_up = False
                for changes in _batches(present, relevant, debounce, stop, told):
                    changed = [Path(path) for _, path in changes]
                    # gone, back, swapped, or deleted and made again, since the look (the
                    # first batch too: it may hold the old folder's deletion)
                    if any(_identity(root) != looked[root] or root in changed for root in roots):
                        break  # watch the folders that are there now, then catch up
                    if not caught_up:
                        # The watcher is armed: catch up with all that changed before it
                        # was (at start, or while a folder was replaced); what changes from
                        # now on comes in the next batches, so nothing falls in between.
                        caught_up = True
                        run(roots)
                        start_up.begin()
                        start_up.caught_up.set()
                        continue
                    due = [root for root in roots if any(_is_under(path, root) for path in changed)]
                    run(due + targets.changed())
        except _Aborted as aborted:
            click.echo(
                f"Error: the run in progress was aborted ({aborted}); the index holds the last "
                "run that was published",
                err=True,
            )
            raise click.exceptions.Exit(EXIT_ABORTED) from None
    click.echo("ctxsearch: stopped", err=True)


def _batches(
    present: list[Path], relevant: _Relevant, debounce: int, stop: _Stop, told: _Told
) -> Iterator[set[tuple[object, str]]]:
    """The batches of changes under the folders that are there, and an empty batch each
    `_LOOK_AGAIN_MS` without any, until a stop is asked for."""
    import watchfiles

    if not present:  # every folder is gone: look for them again now and then
        yield set()
        while not stop.requested.wait(_LOOK_AGAIN_MS / 1000):
            yield set()
        return
    polling = told.undecodable and any(_holds_undecodable_name(root) for root in present)
    try:
        yield from watchfiles.watch(
            *present,
            watch_filter=relevant,
            force_polling=polling,
            poll_delay_ms=_POLL_MS,
            step=debounce,
            debounce=max(_LONGEST_WAIT_MS, debounce),
            stop_event=stop.requested,
            rust_timeout=_LOOK_AGAIN_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
            ignore_permission_denied=True,
        )
    except FileNotFoundError:  # a folder went between looking at it and watching it
        yield set()
    except RuntimeError as error:  # watchfiles' own, e.g. a name that is not UTF-8
        if "decode path" not in str(error):
            raise
        if not told.undecodable:
            told.undecodable = True
            click.echo(
                "ctxsearch: a name that is not UTF-8 is under a watched folder, which the file "
                f"watcher cannot pass on: the folders are looked at every {_POLL_MS / 1000:g} s "
                "instead while one is there",
                err=True,
            )
        # the watcher has stopped: the loop arms a new one and catches up


def _holds_undecodable_name(folder: Path) -> bool:
    """Whether any name under `folder`, hidden or skipped ones too (the watcher sees
    them all), is not UTF-8."""
    for _parent, folders, files in os.walk(os.fsencode(folder)):
        if not all(_is_utf8(name) for name in (*folders, *files)):
            return True
    return False


def _is_utf8(name: bytes) -> bool:
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _identity(folder: Path) -> tuple[int, int] | None:
    """The device and inode of the folder at `folder`, or None when no folder is there."""
    try:
        status = os.stat(folder)
    except OSError:
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISDIR(status.st_mode) else None


def _outermost(roots: list[Path]) -> list[Path]:
    """`roots` but those inside another of them (whose run covers them)."""
    return [
        root
        for root in roots
        if not any(root != other and _is_under(root, other) for other in roots)
    ]


def _index_folders(target: Target) -> list[Path]:
    """The index's folder as given, with the links above it resolved, and with every link
    resolved (none for a database): the watcher names paths after the watched folders."""
    if not isinstance(target, Path):
        return []
    named = spellings(target)
    return [*named, named[0].resolve()]


def _roots(paths: tuple[Path, ...], target: Target) -> list[Path]:
    """The folders to watch, each as `index` records it (a link given stays the link)."""
    from indexer.runs.folders import recorded_root

    roots: list[Path] = []
    for given in paths:
        root = recorded_root(target, given)
        if not root.is_dir():
            why = "no such folder" if not root.exists() else "not a folder"
            raise SourceNotFound(f"{given}: {why}")
        if not _is_utf8(os.fsencode(root)):
            raise SourceNotFound(
                f"{display_path(str(root))}: the file watcher cannot watch a folder whose path "
                "is not UTF-8 (`ctxsearch index` can index it)"
            )
        if root not in roots:
            roots.append(root)
    return roots


class _Told:
    """What the watcher has said already, so that a note is given once, not every run."""

    def __init__(self) -> None:
        self.gone: set[Path] = set()
        self.nested: set[str] = set()
        self.undecodable = False  # a name watchfiles cannot decode was seen
        self.skipped: set[tuple[str, str]] = set()  # (path, reason) of files skipped


# What is looked at of a file to tell it changed (None: it cannot be looked at).
Status = tuple[int, int, int | None, int | None] | None


class _FollowedTargets:
    """The files that links followed outside their roots lead to (see the module
    docstring), with what each root's last run saw of them."""

    def __init__(self) -> None:
        self.seen: dict[Path, dict[str, Status]] = {}

    def record(self, root: Path, summary: IndexSummary) -> None:
        """What the run of `root` read of each file its followed links lead to. A link
        that cannot be looked at by its path's text (a name that is not UTF-8) is left
        to the folder's watcher."""
        self.seen[root] = {
            link.path: (link.size, link.mtime_ns, link.ctime_ns, link.inode)
            for link in summary.followed_links
            if _status(link.path) is not None
        }

    def changed(self) -> list[Path]:
        """The roots one of whose followed links leads to a file that changed since."""
        return [
            root
            for root, links in self.seen.items()
            if any(_status(path) != seen for path, seen in links.items())
        ]


def _status(path: str) -> Status:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, signed_inode(status.st_ino))


class _StartUp:
    """The work a watch does once, beside its runs, so that the first edits find it done
    and none waits for it: the model loaded (a catch-up run with nothing to encode never
    loads it; the load of an existing index's model begins with the watch, beside the
    catch-up run), then, once the catch-up is done (`caught_up`), the large files split
    ahead (`Indexer.warm_split_cache`). A run that needs the model waits only for the
    load in progress (a writer makes its encoders once); the splitting ahead gives way
    to every run, and is taken up again after it."""

    def __init__(self, indexer: Indexer, roots: list[Path], stop: _Stop) -> None:
        self.indexer, self.roots, self.stop = indexer, roots, stop
        self.thread: threading.Thread | None = None
        self.caught_up = threading.Event()  # set once the first catch-up run is done

    def begin(self) -> None:
        """Start the work in the background (once: a later catch-up does not again)."""
        if self.thread is None and not self.stop.requested.is_set():
            self.thread = threading.Thread(target=self._work, name="watch-start-up", daemon=True)
            self.thread.start()

    @contextmanager
    def joined(self) -> Iterator[None]:
        """On the way out, wait for the work to give way (a model's load, once begun,
        ends first: as it did when the watch loaded it between runs)."""
        try:
            yield
        finally:
            self.stop.requested.set()
            if self.thread is not None:
                self.thread.join()

    def _work(self) -> None:
        from indexer.splitting.split_cache import GaveWay

        if not _load_model(self.indexer):
            return
        while not self.caught_up.wait(_LOOK_AGAIN_MS / 1000):
            if self.stop.requested.is_set():
                return
        for root in self.roots:
            while not self.stop.requested.is_set():
                if not self.stop.idle.wait(_LOOK_AGAIN_MS / 1000):
                    continue  # a run is going on: after it
                try:
                    self.indexer.warm_split_cache(root, give_way=self.stop.busy)
                except GaveWay:
                    continue
                except (CtxsearchError, OSError):  # the next run says what is wrong
                    return
                break


def _load_model(indexer: Indexer) -> bool:
    """Load the index's model now, so that the first edit does not wait for it. A model
    that cannot load is said once here; each run that needs it says why again."""
    try:
        indexer.load_encoders()
    except CtxsearchError as error:
        click.echo(
            f"ctxsearch: the model could not be loaded ({terminal_text(error)}); "
            "changes that need it are not indexed until it can be (still watching)",
            err=True,
        )
        return False
    return True


def _run(
    indexer: Indexer, root: Path, stop: _Stop, as_json: bool, told: _Told
) -> IndexSummary | None:
    """One incremental run over `root`, waiting (and saying so) while another writer runs;
    its summary (None: it did not run). A folder that is gone is indexed as empty: its
    files leave the index."""
    told_busy = False
    while True:
        try:
            with stop.running():
                summary = indexer.index_folder(root, allow_empty=True, missing_ok=True)
        except IndexLocked:
            if not told_busy:
                click.echo(
                    "ctxsearch: another process is writing the index; waiting for it", err=True
                )
                told_busy = True
            if stop.requested.wait(_LOCK_RETRY_SECONDS):
                return None
            continue
        except SourceNotFound as error:  # the folder cannot be read: keep watching
            click.echo(f"ctxsearch: {terminal_text(error)}", err=True)
            return None
        except (InvalidIgnoreFile, InvalidPattern) as error:  # fixing it brings a new run
            note = f"{error}; {display_path(str(root))} is not indexed until it is fixed"
            click.echo(f"ctxsearch: {terminal_text(note)} (still watching)", err=True)
            return None
        _report(root, summary, as_json, told)
        return summary


def _report(root: Path, summary: IndexSummary, as_json: bool, told: _Told) -> None:
    try:
        _notes(root, summary, told)
        _skipped_lines(summary, told)
        _summary_lines(root, summary, as_json)
    finally:
        sys.stdout.flush()  # a log file or a pipe sees each run as it ends


def _notes(root: Path, summary: IndexSummary, told: _Told) -> None:
    """What changed in the folders watched, said once: a folder gone or back, a root of
    its own inside one, a nested root forgotten."""
    shown = display_path(str(root))
    if summary.missing and root not in told.gone:
        told.gone.add(root)
        click.echo(
            f"ctxsearch: {shown}: the folder is gone; its files left the index "
            f"({summary.removed} documents); watching for it to come back",
            err=True,
        )
    elif not summary.missing and root in told.gone:
        told.gone.discard(root)
        click.echo(f"ctxsearch: {shown}: the folder is back; watching it again", err=True)
    for nested in summary.nested_roots:
        if nested not in told.nested:
            told.nested.add(nested)
            click.echo(
                f"ctxsearch: {display_path(nested)} is a root of its own inside {shown}: "
                "watched with it, with its own --exclude/--include",
                err=True,
            )
    for forgotten in summary.forgotten_roots:
        told.nested.discard(forgotten)
        click.echo(
            f"ctxsearch: forgot the root {display_path(forgotten)}: its folder is gone "
            f"(what was in it is {shown}'s now)",
            err=True,
        )


def _skipped_lines(summary: IndexSummary, told: _Told) -> None:
    """The files skipped, each said once for the same reason (a link that leads outside
    its root, text that is not language), as `index` says them."""
    for skipped in summary.skipped_files:
        if (skipped.path, skipped.reason) not in told.skipped:
            told.skipped.add((skipped.path, skipped.reason))
            reason = terminal_text(skipped.reason)
            click.echo(f"skipped {display_path(skipped.path)}: {reason}", err=True)


def _summary_lines(root: Path, summary: IndexSummary, as_json: bool) -> None:
    for failure in summary.failures:
        reason = terminal_text(failure.reason)
        click.echo(f"failed {display_path(failure.path)}: {reason}", err=True)
    if as_json:
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

"""Index a root that is one file: a file named on its own (`index notes/todo.md`),
tracked as itself.

A file root is recorded like a folder root, its row marked by
`indexer.reading.rules.FILE_ROOT`. Its run
reads the file when it changed, removes its document when the file is gone (the root is
kept for its return, as a watched folder's is; `remove` forgets it), and never looks at
the files beside it. The file is read as named: hidden names, ignore files, default
excludes and --exclude/--include are a folder's rules and do not apply to it, and a
file given as a link is recorded as the link and read where it leads, as a folder root
given as a link is walked where it leads.

A file under a folder root of the index is that root's already: its run changes
nothing and names the root (`IndexSummary.covered_by`), so no file is held twice. A
folder indexed later that holds a file root takes it in: its run forgets the file root
and the file is the folder's, by the folder's rules (`indexer.runs.nested_roots`).
"""

from __future__ import annotations

import stat
import time
from pathlib import Path

from indexer.errors import SourceNotFound
from indexer.reading.formats import readable_summary
from indexer.reading.rules import FILE_ROOT
from indexer.reading.sources import SourceFile, is_indexable, path_text, signed_inode
from indexer.runs.folders import (
    IndexSummary,
    count_stored,
    read_candidates,
    recorded_root,
    unchanged,
)
from indexer.runs.run import Run, index_totals
from indexer.store.backends import open_store, store_exists
from indexer.store.base import Store, Target


def index_file(
    run: Run, file: str | Path, wait: bool = False, missing_ok: bool = False
) -> IndexSummary:
    """Bring the index up to date with the one file `file` in `run`; see
    `Indexer.index_file`."""
    started = time.perf_counter()
    path = recorded_root(run.target, file)
    source = file_source(path)
    if source is None and not missing_ok and not is_file_root(run.target, path):
        raise SourceNotFound(f"{path_text(path)}: no such file")
    if source is not None and not is_indexable(path):
        raise SourceNotFound(not_readable(path))
    with run.open(wait) as store:
        summary = IndexSummary(missing=source is None)
        covering = covering_root(store, path)
        if covering is not None:
            summary.covered_by = covering
            summary.total_documents, summary.total_chunks = index_totals(store)
            return summary
        stored = store.documents_under(path)
        old = stored.pop(path_text(path), None)
        # What is left was under a folder root at this path that a file has replaced: gone.
        gone = [document.id for document in stored.values()]
        candidates = []
        if source is not None and old is not None and unchanged(old, source):
            summary.unchanged = 1
        elif source is not None:
            candidates.append((source, old))
        with store.change() as change:
            if source is not None:  # a file root that is gone is kept for its return
                change.record_root(path, FILE_ROOT)
            if run.settings.index_type is not None:
                change.set_index_type(run.settings.index_type)
            if run.settings.quantize is not None:
                change.set_quantize(run.settings.quantize)
            unindexable: list[int] = []
            run.encode_and_store(
                change, read_candidates(run, change, candidates, summary, {}, unindexable)
            )
            if source is None and old is not None:
                gone.append(old.id)
            change.remove_documents(gone + unindexable)
        run.fill(store)
        count_stored(summary, run, store, removed=len(gone) + len(unindexable))
    summary.query_export = run.export_query_model()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def file_source(path: Path) -> SourceFile | None:
    """The regular file at `path` as a walk sees it (a link followed), or None when no
    regular file is there."""
    try:
        status = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return SourceFile(
        path=path,
        size=status.st_size,
        mtime_ns=status.st_mtime_ns,
        ctime_ns=status.st_ctime_ns,
        inode=signed_inode(status.st_ino),
    )


def is_file_root(target: Target, path: Path) -> bool:
    """Whether this host's index records `path` as a root that is one file."""
    if not store_exists(target):
        return False
    store = open_store(target)
    try:
        return store.root_rules(path) == FILE_ROOT
    finally:
        store.close()


def covering_root(store: Store, path: Path) -> str | None:
    """The deepest folder root of this host that holds `path`, or None."""
    text = path_text(path)
    roots = store.roots_under(Path("/"))
    holders = [root for root in roots if text.startswith(root.rstrip("/") + "/")]
    return max(holders, key=len, default=None)


def not_readable(path: Path | str) -> str:
    """Why a file named on its own is refused: not a format read."""
    return (
        f"{path_text(path)}: not a format ctxsearch reads (readable types: "
        f"{readable_summary()}); nothing was changed"
    )

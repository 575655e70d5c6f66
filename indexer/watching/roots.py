"""The folders (and files) a watch follows: checked once, as `index` records them, then
looked at by identity (a folder deleted, made again or swapped is another one; so is a
file an editor saves by writing a new one in its place)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from indexer.errors import SourceNotFound
from indexer.reading.links import spellings
from indexer.store.base import Target


def watched_roots(target: Target, paths: Iterable[str | Path]) -> tuple[list[Path], set[Path]]:
    """The folders and files to watch, each as `index` records it (a link given stays the
    link), and which of them are files (roots that are one file). A path is refused
    (`SourceNotFound`) as `index` refuses it (`indexer.runs.inputs`), and so is one
    whose path is not UTF-8 (the file watcher takes only UTF-8 paths; `index` can index
    it), and a file under a folder root of the index not watched with it (that root's
    runs index it). A file under a folder watched with it is that folder's."""
    from indexer.runs.inputs import checked_inputs

    roots: list[Path] = []
    files: set[Path] = set()
    for given in checked_inputs(target, [Path(path) for path in paths]):
        root = given.path
        if not is_utf8(os.fsencode(root)):
            raise SourceNotFound(
                f"{given.given}: the file watcher cannot watch a "
                f"{'file' if given.is_file else 'folder'} whose path is not UTF-8 "
                "(`ctxsearch index` can index it)"
            )
        if given.is_file:
            if any(is_under(root, folder) for folder in roots):
                continue
            if (covering := _covering_root(target, root)) is not None:
                raise SourceNotFound(
                    f"{given.given}: under the indexed folder {covering}, which holds it: "
                    "watch that folder"
                )
            files.add(root)
        roots.append(root)
    return roots, files


def _covering_root(target: Target, path: Path) -> str | None:
    from indexer.runs.file_roots import covering_root
    from indexer.store.backends import open_store, store_exists

    if not store_exists(target):
        return None
    store = open_store(target)
    try:
        return covering_root(store, path)
    finally:
        store.close()


def index_folders(target: Target) -> list[Path]:
    """The index's folder as given, with the links above it resolved, and with every link
    resolved (none for a database): the watcher names paths after the watched folders."""
    if not isinstance(target, Path):
        return []
    named = spellings(target)
    return [*named, named[0].resolve()]


def root_identity(root: Path, is_file: bool = False) -> tuple[int, int] | None:
    """The device and inode of the folder at `root` (of the regular file, for a root
    that is one file), or None when none is there."""
    try:
        status = os.stat(root)
    except OSError:
        return None
    kind = stat.S_ISREG if is_file else stat.S_ISDIR
    return (status.st_dev, status.st_ino) if kind(status.st_mode) else None


def is_under(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies below it."""
    return path == folder or folder in path.parents


def outermost(roots: list[Path]) -> list[Path]:
    """`roots` but those inside another of them (whose run covers them)."""
    return [
        root
        for root in roots
        if not any(root != other and is_under(root, other) for other in roots)
    ]


def is_utf8(name: bytes) -> bool:
    """Whether a name (a path's bytes) is UTF-8."""
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True

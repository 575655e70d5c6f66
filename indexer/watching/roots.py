"""The folders a watch follows: checked once, as `index` records them, then looked at by
identity (a folder deleted, made again or swapped is another one)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from indexer.errors import SourceNotFound
from indexer.reading.links import spellings
from indexer.store.base import Target


def watched_roots(target: Target, paths: Iterable[str | Path]) -> list[Path]:
    """The folders to watch, each as `index` records it (a link given stays the link);
    `SourceNotFound` for one that is not a folder, or whose path is not UTF-8 (the file
    watcher takes only UTF-8 paths; `index` can index it)."""
    from indexer.runs.folders import recorded_root

    roots: list[Path] = []
    for given in paths:
        root = recorded_root(target, given)
        if not root.is_dir():
            why = "no such folder" if not root.exists() else "not a folder"
            raise SourceNotFound(f"{given}: {why}")
        if not is_utf8(os.fsencode(root)):
            raise SourceNotFound(
                f"{given}: the file watcher cannot watch a folder whose path is not UTF-8 "
                "(`ctxsearch index` can index it)"
            )
        if root not in roots:
            roots.append(root)
    return roots


def index_folders(target: Target) -> list[Path]:
    """The index's folder as given, with the links above it resolved, and with every link
    resolved (none for a database): the watcher names paths after the watched folders."""
    if not isinstance(target, Path):
        return []
    named = spellings(target)
    return [*named, named[0].resolve()]


def folder_identity(folder: Path) -> tuple[int, int] | None:
    """The device and inode of the folder at `folder`, or None when no folder is there."""
    try:
        status = os.stat(folder)
    except OSError:
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISDIR(status.st_mode) else None


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

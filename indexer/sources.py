"""Find the files to index under a folder and read each into a `Document`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

import pathspec

from indexer.errors import SourceNotFound, UnreadableFile
from indexer.readers import READERS

SKIPPED_FOLDERS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"}
)
IGNORE_FILE = ".ctxsearchignore"
# Files above this size are reported as failed instead of being read into memory.
_MB = 1024 * 1024
DEFAULT_MAX_FILE_BYTES = 20 * _MB


@dataclass(frozen=True)
class SourceFile:
    """A file found by the walk, before it is read."""

    path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Document:
    """The text of one file, with what identifies its content."""

    path: Path
    text: str
    size: int
    mtime_ns: int
    sha256: str


def is_indexable(path: Path) -> bool:
    """Whether a file's extension has a reader."""
    return path.suffix.lower() in READERS


def walk_folder(root: Path) -> Iterator[SourceFile]:
    """Yield every indexable file under `root`, in a stable order.

    Hidden files and folders, version-control and dependency folders are skipped, and so
    is whatever the patterns of a `.ctxsearchignore` file at the root match (gitignore
    syntax). Folder symlinks are not followed, so a symlink loop cannot trap the walk.
    """
    root = Path(root)
    if not root.exists():
        raise SourceNotFound(f"{root}: no such folder")
    if not root.is_dir():
        raise SourceNotFound(f"{root}: not a folder (give the folder that holds it)")
    ignored = _ignore_rules(root)
    for folder, subfolders, files in os.walk(root, followlinks=False):
        relative = Path(folder).relative_to(root)
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".")
            and name not in SKIPPED_FOLDERS
            and not ignored.match_file(f"{(relative / name).as_posix()}/")
        )
        for name in sorted(files):
            path = Path(folder, name)
            if name.startswith(".") or not is_indexable(path):
                continue
            if ignored.match_file((relative / name).as_posix()):
                continue
            try:
                stat = path.stat()
            except OSError:
                continue  # a dangling symlink or a symlink loop: nothing to read
            if not S_ISREG(stat.st_mode):
                continue  # a FIFO or a device would block or never end
            yield SourceFile(path=path.absolute(), size=stat.st_size, mtime_ns=stat.st_mtime_ns)


def _ignore_rules(root: Path) -> pathspec.GitIgnoreSpec:
    rules = root / IGNORE_FILE
    lines = rules.read_text(encoding="utf-8").splitlines() if rules.is_file() else []
    return pathspec.GitIgnoreSpec.from_lines(lines)


def read_document(source: SourceFile, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Document:
    """Read and decode one file; raise `UnreadableFile` with the reason when that fails."""
    if source.size > max_bytes:
        raise UnreadableFile(
            f"{source.size / _MB:.1f} MB is over the {max_bytes / _MB:.0f} MB size cap"
        )
    try:
        data = source.path.read_bytes()
    except OSError as error:
        raise UnreadableFile(error.strerror or str(error)) from error
    text = READERS[source.path.suffix.lower()](data)
    return Document(
        path=source.path,
        text=text,
        size=len(data),
        mtime_ns=source.mtime_ns,
        sha256=hashlib.sha256(data).hexdigest(),
    )

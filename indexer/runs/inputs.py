"""The paths one command indexes or watches (`index A B notes.md`), checked before
anything is read or written: each folder its own root, each file a root that is one file
(`indexer.runs.file_roots`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import SourceNotFound
from indexer.reading.sources import is_indexable, path_text
from indexer.runs.file_roots import is_file_root, not_readable
from indexer.runs.folders import recorded_root
from indexer.store.base import Target


@dataclass(frozen=True)
class Input:
    """One path given: as given (for what is said of it), as its root is recorded, and
    whether it is a file (or a file root whose file is gone) rather than a folder."""

    given: Path
    path: Path
    is_file: bool


def checked_inputs(target: Target, paths: list[Path] | tuple[Path, ...]) -> list[Input]:
    """The paths given, each checked: a folder that can be listed, a file of a format
    read, or a file root of the index whose file is gone (its run removes its document).
    `SourceNotFound` names the first that is none of these (a path that is not there, a
    file of another format, a FIFO), so that a bad path among several changes nothing.

    A path given twice counts once. Folders come first, so that a file inside a folder
    given with it finds that folder's root there (it is the folder's, not a root of its
    own); otherwise the order is as given.
    """
    inputs: list[Input] = []
    for given in paths:
        path = recorded_root(target, given)
        if any(path == known.path for known in inputs):
            continue
        inputs.append(Input(Path(given), path, _is_file(target, Path(given), path)))
    return sorted(inputs, key=lambda item: item.is_file)


def _is_file(target: Target, given: Path, path: Path) -> bool:
    """Whether `path` is a file to index (False: a folder); `SourceNotFound` if neither."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if is_file_root(target, path):
            return True
        raise SourceNotFound(f"{path_text(given)}: no such file or folder") from None
    except OSError as error:
        raise SourceNotFound(f"{path_text(given)}: {error.strerror or error}") from error
    if stat.S_ISDIR(mode):
        try:
            os.scandir(path).close()
        except OSError as error:
            why = error.strerror or str(error)
            raise SourceNotFound(f"{path_text(given)}: cannot read the folder ({why})") from error
        return False
    if not stat.S_ISREG(mode):
        raise SourceNotFound(f"{path_text(given)}: neither a file nor a folder")
    if not is_indexable(path):
        raise SourceNotFound(not_readable(given))
    return True

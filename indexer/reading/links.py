"""Links: the paths a link is named by, and whether what it leads to stays in its root.

A link is indexed as itself: a file link under the link's own path, a root given as a
link under the link's path (each run follows it afresh, so a swapped link, as in
`ln -sfn releases/v2 current.tmp && mv -T current.tmp current`, updates the same root).
The links in the folders above a path are resolved (`own_path`), as they always were.

What a link leads to must lie inside the real folder of its root (`leads_inside`),
unless the root's runs are told to follow links outside it: a cloned repository's
`notes.txt -> ../../.ssh/id_rsa` is not read. The check is made twice: by the walk, on
the path, and by the read, on the file actually opened (`opened_inside`), since a link
can be swapped in between.
"""

from __future__ import annotations

import os
from pathlib import Path


def own_path(path: Path | str) -> Path:
    """`path` made absolute with the links of its parent folders resolved, but not a
    link at its end: the path under which the walk finds that file or folder, and under
    which a root given as a link is recorded."""
    absolute = Path(os.path.abspath(Path(path).expanduser()))
    if absolute.parent == absolute:
        return absolute
    return absolute.parent.resolve() / absolute.name


def spellings(path: Path | str) -> list[Path]:
    """The paths an index may hold the file or folder at `path` itself under (never
    what a link at its end leads to): as given, made absolute (below a root given as a
    link, the link is part of every stored path), then its own path (the links of the
    folders above resolved, as roots not given as a link are recorded). The same path
    twice when they are the same."""
    given = Path(os.path.abspath(Path(path).expanduser()))
    own = own_path(given)
    return [given] if own == given else [given, own]


def real_folder(root: Path) -> str:
    """The folder `root` is now, every link on its way resolved."""
    return os.path.realpath(root)


def leads_inside(path: Path, real_root: str) -> bool:
    """Whether `path`, its links followed, is inside the folder `real_root` (a
    `real_folder`)."""
    return is_within(os.path.realpath(path), real_root)


def is_within(real_path: str, real_root: str) -> bool:
    """Whether the resolved `real_path` is `real_root` or below it."""
    return real_path == real_root or real_path.startswith(real_root.rstrip("/") + "/")


def opened_inside(descriptor: int, path: Path, real_root: str) -> bool:
    """Whether the file open at `descriptor` (opened through `path`) lies inside the
    folder `real_root`: the file read, not whatever `path` leads to a moment later.
    Linux names it in /proc; elsewhere `path` is resolved and must still be that file."""
    try:
        opened = os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:
        opened = os.path.realpath(path)
        try:
            still = os.stat(opened)
        except OSError:
            return False
        status = os.fstat(descriptor)
        if (still.st_dev, still.st_ino) != (status.st_dev, status.st_ino):
            return False
    return is_within(opened, real_root)

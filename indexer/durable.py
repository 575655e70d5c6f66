"""Files written so that a crash leaves the old file or the new one, never half of one.

Every file the index publishes (vector spaces, delta segments, quantized spaces' float32
vectors) and the model cache's exports go through here: written to a temporary file
beside the target, synced, renamed over it, and the rename made durable by syncing the
folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from indexer.errors import StoreWriteFailed
from indexer.faults import kill_point


def write_atomically(
    path: Path,
    write: Callable[[BinaryIO], None],
    what: str,
    kill_at: str,
    *,
    sync_folder: bool = True,
) -> None:
    """Write `path` through `write(handle)`, atomically and durably; `what` names the file
    in the `StoreWriteFailed` raised if the disk refuses (the temporary file is removed,
    `path` left as it was). `kill_at` is the fault point between the write and the rename;
    `sync_folder=False` leaves syncing the folder to a caller that renames more files."""
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(temporary, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
    except (RuntimeError, OSError) as error:
        temporary.unlink(missing_ok=True)
        raise StoreWriteFailed(
            f"{path.parent}: cannot write the {what} {path.name} ({write_failure(error)})"
        ) from error
    kill_point(kill_at)
    os.replace(temporary, path)
    if sync_folder:
        fsync_folder(path.parent)


def write_failure(error: BaseException) -> str:
    """The operating system's reason in a FAISS or OS write error ("No space left on device")."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    found = re.search(r"\(([^()]+)\)\s*$", str(error))
    return found.group(1) if found else str(error).strip().splitlines()[-1]


def fsync_folder(folder: Path) -> None:
    """Make the entries of `folder` (files made, renamed) durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

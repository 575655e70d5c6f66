"""Entries of the model cache (an ONNX query export each): sealed, checked, set aside, swept.

An entry is written into a staging folder named after its process (`staging_folder`),
sealed (`seal`: every file fsynced, then a completion marker written last that records
each file's size and SHA-256, then the folder fsynced), and published by renaming it
into place. Before an entry is used it is checked (`entry_state`): the sizes on every
query (a stat per file), the hashes too where the model is loaded anyway, once per file
and not in every process (`verified_file` keeps the identity of each file hashed: inode,
size, mtime and ctime, which any write changes, so a file rewritten in place is hashed
again). A damaged entry is renamed aside (`set_aside`; the newest one per model is kept,
to look at) so that it is made again, and the staging folders of processes that died (a
SIGKILL, a power cut) are swept (`sweep_staging`). Nothing here imports torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from indexer.durable import fsync_folder
from indexer.encoders.onnx import INFO_FILE

COMPLETE_FILE = "complete.json"
VERIFIED_SUFFIX = ".verified.json"
STAGING = ".staging-"
DAMAGED = ".damaged-"
# A staging folder this old is abandoned whoever made it (an export takes seconds).
ABANDONED_SECONDS = 3600.0
_PREFIX = ".onnx-"  # the staging folders of ONNX exports, this format's and older ones


class CacheNotWritable(OSError):
    """The model cache folder cannot be made or written; the message says why."""


@dataclass(frozen=True)
class EntryState:
    """What is in an entry's place: `missing`, `stale` (no completion marker: made by an
    older ctxsearch, or of another format; made again without fuss), `damaged` (`reason`
    says how) or `ready`."""

    kind: str
    reason: str = ""

    @property
    def ready(self) -> bool:
        """Whether the entry may be used."""
        return self.kind == "ready"


def entry_state(folder: Path, thorough: bool = False) -> EntryState:
    """Whether the entry `folder` is whole: every file the completion marker lists, at
    its recorded size (and, if `thorough`, with its recorded SHA-256: hashed unless it was
    before, unchanged since, see `verified_file`). An entry without
    a marker (from a ctxsearch before markers, or of another format) is `stale`."""
    folder = Path(folder)
    if not folder.is_dir():  # nothing there (or a file, which is not ours to move)
        return EntryState("missing")
    marker = folder / COMPLETE_FILE
    if not marker.exists():
        if _readable_info(folder):
            return EntryState("stale")
        return EntryState("damaged", f"its completion marker {COMPLETE_FILE} is missing")
    verified = _verified(folder) if thorough else {}
    identities: dict[str, list[int]] = {}
    try:
        recorded = json.loads(marker.read_text())["files"]
        for name, expected in recorded.items():
            try:
                status = (folder / name).stat()
            except FileNotFoundError:
                return EntryState("damaged", f"{name} is missing")
            if status.st_size != expected["size"]:
                return EntryState(
                    "damaged", f"{name} is {status.st_size} bytes, not {expected['size']}"
                )
            identities[name] = _identity(status)
            if not thorough or verified.get(name) == identities[name]:
                continue
            if _sha256(folder / name) != expected["sha256"]:
                return EntryState("damaged", f"{name} is not what was written")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return EntryState("damaged", f"its completion marker {COMPLETE_FILE} is unreadable")
    if thorough and identities != verified:
        _remember_verified(folder, identities)
    return EntryState("ready")


def verified_file(folder: Path) -> Path:
    """Where the identities of the entry's files, as they were when last hashed whole,
    are kept (beside the entry, so that the sealed entry itself is never written)."""
    return folder.with_name(folder.name + VERIFIED_SUFFIX)


def _identity(status: os.stat_result) -> list[int]:
    # ctime too: a write changes it, and no one can set it back (utime sets it to now)
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


def _verified(folder: Path) -> dict[str, list[int]]:
    try:
        found = json.loads(verified_file(folder).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _remember_verified(folder: Path, identities: dict[str, list[int]]) -> None:
    """Keep the identities of the files just hashed; a cache that cannot be written only
    means hashing them again next time."""
    target = verified_file(folder)
    temporary = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        temporary.write_text(json.dumps(identities))
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _readable_info(folder: Path) -> bool:
    try:
        return isinstance(json.loads((folder / INFO_FILE).read_text()), dict)
    except (OSError, ValueError):
        return False


def seal(folder: Path) -> None:
    """Make the files of `folder` durable, then record them in the completion marker
    (written last, durable too), then make the folder itself durable."""
    files = {}
    for path in sorted(Path(folder).iterdir()):
        if path.is_file() and path.name != COMPLETE_FILE:
            with open(path, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
                os.fsync(handle.fileno())
            files[path.name] = {"size": path.stat().st_size, "sha256": digest}
    with open(Path(folder) / COMPLETE_FILE, "w") as handle:
        json.dump({"files": files}, handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    fsync_folder(folder)


def set_aside(folder: Path, reason: str) -> Path | None:
    """Rename the damaged entry `folder` out of the way (it is then made again), keeping
    only the newest damaged one of each model; where it went, or None if it could not
    be moved (an unwritable cache: it is then left, and passed over)."""
    folder = Path(folder)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = folder.with_name(f"{folder.name}{DAMAGED}{stamp}-{os.getpid()}")
    try:
        os.rename(folder, aside)
    except OSError:
        return None
    with contextlib.suppress(OSError):
        (aside / "damaged.txt").write_text(reason + "\n")
    for older in folder.parent.glob(f"{folder.name}{DAMAGED}*"):
        if older != aside:
            shutil.rmtree(older, ignore_errors=True)
    return aside


def staging_folder(folder: Path) -> Path:
    """A new, empty folder beside `folder` to write its entry in, named after this
    process and machine so that `sweep_staging` can tell when it was abandoned.
    `CacheNotWritable` if the cache folder cannot be made or written."""
    name = f".{folder.name}{STAGING}{os.getpid()}-{secrets.token_hex(4)}-{socket.gethostname()}"
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = folder.parent / name
        staging.mkdir()
    except OSError as error:
        raise CacheNotWritable(
            f"the model cache {folder.parent} cannot be written ({error.strerror or error})"
        ) from error
    return staging


def sweep_staging(cache: Path) -> list[str]:
    """Remove the staging folders in `cache` that no live export will finish: those of
    a process of this machine that is gone, and any older than `ABANDONED_SECONDS`.
    Never raises; returns the names removed."""
    now = time.time()
    try:
        names = [name for name in os.listdir(cache) if name.startswith(_PREFIX)]
    except OSError:
        return []
    removed = []
    for name in names:
        path = Path(cache) / name
        try:
            if not path.is_dir() or path.is_symlink():
                continue
            age = now - path.stat().st_mtime
        except OSError:
            continue
        if age > ABANDONED_SECONDS or _owner_is_gone(name):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(name)
    return removed


def _owner_is_gone(name: str) -> bool:
    """Whether the process that named the staging folder `name` has ended (only known
    for a process of this machine)."""
    _, found, owner = name.partition(STAGING)
    pid, _, rest = owner.partition("-")
    _, _, host = rest.partition("-")
    if not found or not pid.isdigit() or host != socket.gethostname():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def _sha256(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return ""

"""The files of an index directory.

    ctxsearch.sqlite          manifest, documents, chunks, lexical space (SQLite, WAL mode)
    contextual-000007.faiss   a base of the contextual space, written by generation 7
    contextual-000009.delta.npz  a delta segment of it, written by generation 9: the
                              vectors (with ids) that run added and the ids it removed
    static-000007.faiss       the same for the static space
    static-000007.exact.npy   a quantized base's float32 vectors (memory-mapped, re-scoring)
    write.lock                held (flock) by the one process allowed to write

The manifest in SQL names the current generation and, for each space, the exact files
of its state (a base and the deltas since, `segments.py`); a run writes its new files
beside the published ones and publishes them by committing the manifest that names them.
"""

from __future__ import annotations

import re
from pathlib import Path

from indexer.errors import IndexNotFound

DATABASE_FILE = "ctxsearch.sqlite"
LOCK_FILE = "write.lock"
_SPACE_FILE = re.compile(
    r"^(?P<space>[a-z]+)-(?P<generation>\d{6})\.(faiss|delta\.npz|exact\.npy)$"
)
# A space file being written (`.contextual-000008.faiss.tmp-PID`), renamed when whole.
SPACE_TEMPORARY_GLOBS = (".*.faiss.tmp-*", ".*.delta.npz.tmp-*", ".*.exact.npy.tmp-*")


def is_index(directory: Path) -> bool:
    """Whether a directory holds a ctxsearch index."""
    return (Path(directory) / DATABASE_FILE).is_file()


def check_is_index(directory: Path) -> None:
    """Raise `IndexNotFound` unless the folder holds an index."""
    if not directory.exists():
        raise IndexNotFound(f"{directory}: no index here (build one with `ctxsearch index`)")
    if not directory.is_dir() or not is_index(directory):
        raise IndexNotFound(f"{directory}: not a ctxsearch index")


def file_identity(path: Path) -> tuple[int, int]:
    """What tells one file from another at the same path: device and inode."""
    status = path.stat()
    return (status.st_dev, status.st_ino)


def space_file(directory: Path, space: str, generation: int) -> Path:
    """The FAISS file of a base of one vector space, written by one generation."""
    return Path(directory) / f"{space}-{generation:06d}.faiss"


def exact_file(space_path: Path) -> Path:
    """The float32 vectors beside a quantized base file (`static-000007.exact.npy`)."""
    return space_path.with_name(space_path.name.removesuffix(".faiss") + ".exact.npy")


def delta_file(directory: Path, space: str, generation: int) -> Path:
    """The delta segment of one vector space written by one generation."""
    return Path(directory) / f"{space}-{generation:06d}.delta.npz"


def space_temporaries(directory: Path) -> list[Path]:
    """Space files half-written by a run that stopped (or is writing them now)."""
    return [path for pattern in SPACE_TEMPORARY_GLOBS for path in Path(directory).glob(pattern)]


def space_files(directory: Path) -> list[tuple[Path, str, int]]:
    """Every space file (bases and deltas) in the directory, with its space and generation."""
    found = []
    for path in Path(directory).iterdir():
        match = _SPACE_FILE.match(path.name)
        if match:
            found.append((path, match["space"], int(match["generation"])))
    return found

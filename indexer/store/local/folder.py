"""A folder as the place of an index: whether it holds one, whether one may be made there
(nothing of the user's lost), and clearing what an aborted creation left. No SQLAlchemy."""

from __future__ import annotations

from pathlib import Path

from indexer.errors import CtxsearchError, IndexNotFound
from indexer.store.local.connections import ReadConnections, sqlite_rows
from indexer.store.local.index_files import (
    DATABASE_FILE,
    LOCK_FILE,
    is_index,
    space_files,
    space_temporaries,
)
from indexer.store.sql_reads import read_manifest


def index_exists(directory: Path) -> bool:
    """Whether the folder holds an index whose creation completed."""
    directory = Path(directory).expanduser().absolute()
    if not is_index(directory):
        return False
    reads = ReadConnections(directory / DATABASE_FILE, str(directory))
    try:
        with reads.transaction() as connection:
            return read_manifest(sqlite_rows(connection, str(directory))) is not None
    except CtxsearchError:
        return True  # an index, if a damaged one: opening it reports what is wrong
    finally:
        reads.close()


def check_can_hold_index(directory: Path) -> None:
    """Raise `IndexNotFound` unless a new index may be made here: the folder is new, or
    empty but for an aborted creation."""
    directory = Path(directory).expanduser().absolute()
    if directory.exists() and not directory.is_dir():
        raise IndexNotFound(f"{directory}: is a file, not an index directory")
    if not directory.exists():
        return
    if any(path.name not in _our_files(directory) for path in directory.iterdir()):
        raise IndexNotFound(
            f"{directory}: the folder is not empty and holds no index; "
            "give a new or empty folder for the index"
        )
    if index_exists(directory):
        raise IndexNotFound(f"{directory}: already holds an index")


def clear_aborted_creation(directory: Path) -> None:
    """Make room for a new index: the folder must be empty but for an aborted creation."""
    if not directory.exists():
        return
    for name in _our_files(directory) - {LOCK_FILE}:
        (directory / name).unlink(missing_ok=True)


def _our_files(directory: Path) -> set[str]:
    """What an index (or an aborted creation of one) leaves in its folder: the database
    and its journals, the lock, space files, and space files half-written by a killed run."""
    ours = {DATABASE_FILE, f"{DATABASE_FILE}-wal", f"{DATABASE_FILE}-shm", LOCK_FILE}
    ours |= {path.name for path, _space, _generation in space_files(directory)}
    return ours | {path.name for path in space_temporaries(directory)}

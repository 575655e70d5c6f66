"""What an SQLite error means to a user, and how long to wait for a busy database.

Plain functions of messages and settings, with no SQLAlchemy: the store's readers
(the standard library's sqlite3) and its writer (SQLAlchemy) share them.
"""

from __future__ import annotations

# How long to wait for a database another program holds locked ($CTXSEARCH_BUSY_TIMEOUT_MS):
# read in the config module, named here for the store's two ways of connecting.
from indexer.config import busy_timeout_ms as busy_timeout_ms
from indexer.errors import IndexCorrupt, IndexLocked, StoreWriteFailed


def error_for(message: str, where: str) -> Exception:
    """The ctxsearch error an SQLite error message means (also used without SQLAlchemy)."""
    lowered = message.lower()
    if "locked" in lowered or "busy" in lowered:
        return IndexLocked(f"{where}: the index database is locked by another program ({message})")
    if "readonly" in lowered or "read-only" in lowered:
        return StoreWriteFailed(f"{where}: the index is read-only here ({message})")
    if "full" in lowered or "i/o" in lowered or "unable to open" in lowered:
        return StoreWriteFailed(f"{where}: cannot write the index ({message})")
    if "not a database" in lowered or "malformed" in lowered:
        return IndexCorrupt(f"{where}: not a readable SQLite database ({message})")
    return IndexCorrupt(f"{where}: the index database failed ({message})")


def is_read_only_error(error: BaseException) -> bool:
    """Whether an error says SQLite cannot write (or create) what a reader needs (a
    sqlite3 error, or SQLAlchemy's wrapping of one)."""
    text = str(getattr(error, "orig", error)).lower()
    return "readonly" in text or "unable to open" in text

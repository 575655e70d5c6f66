"""Which backend keeps a target, and the functions every caller opens an index with.

A target is a database URL when its scheme names a backend in `BACKENDS`
(`postgresql:` or `postgresql+DRIVER:`); anything else is a folder path, taken
literally (`postgresql-notes` is a folder). Each backend says whether a target holds an
index, whether one may be made there, and opens it; `describe` and `verify` are the
store's own. A backend's heavy imports wait until it opens an index: a query of a folder
index imports no SQLAlchemy, psycopg or pgvector.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import CtxsearchError
from indexer.store.base import Backend, Store, Target, VerifyReport
from indexer.store.local.folder import check_can_hold_index, index_exists
from indexer.store.local.store import LocalStore

if TYPE_CHECKING:
    from indexer.store.postgres.store import PostgresStore

_SCHEME = re.compile(r"(?P<scheme>[a-z][a-z0-9]*)(\+[^:/]*)?:")


class FolderBackend:
    """Index folders: SQLite + FTS5 + FAISS files (`indexer.store.local`)."""

    def normalise(self, target: Target) -> Target:
        """The folder as an absolute path."""
        return Path(target).expanduser().absolute()

    def exists(self, target: Target) -> bool:
        """Whether the folder holds an index whose creation completed."""
        return index_exists(Path(target))

    def check_can_create(self, target: Target) -> None:
        """Raise `IndexNotFound` unless the folder is new, or empty but for an aborted
        creation (nothing of the user's is lost)."""
        check_can_hold_index(Path(target))

    def open(self, target: Target, create: bool = False, read_only: bool = False) -> LocalStore:
        """The index in the folder (`read_only`: opened immutable, for a read-only mount)."""
        return LocalStore(Path(target), create=create, read_only=read_only)


class PostgresBackend:
    """Indexes in PostgreSQL with pgvector, one schema each (`indexer.store.postgres`)."""

    def normalise(self, target: Target) -> Target:
        """The URL as given."""
        return str(target)

    def exists(self, target: Target) -> bool:
        """Whether the URL's schema holds an index whose first run published."""
        from indexer.store.postgres.store import postgres_index_exists

        return postgres_index_exists(str(target))

    def check_can_create(self, target: Target) -> None:
        """Nothing can be lost: the index gets a schema of its own, made by its first run."""

    def open(self, target: Target, create: bool = False, read_only: bool = False) -> PostgresStore:
        """The index in the URL's schema (`read_only` changes nothing: readers never write)."""
        from indexer.store.postgres.store import PostgresStore

        return PostgresStore(str(target), create=create)


FOLDERS: Backend = FolderBackend()
# The URL schemes that name databases, and the backend of each.
BACKENDS: dict[str, Backend] = {"postgresql": PostgresBackend()}


def backend_for(target: Target) -> Backend:
    """The backend that keeps `target`: a database's, by its URL's scheme, or folders'."""
    found = _SCHEME.match(target) if isinstance(target, str) else None
    return BACKENDS.get(found["scheme"], FOLDERS) if found else FOLDERS


def is_database_url(target: Target) -> bool:
    """Whether `target` names a database (a URL: `postgresql:` or `postgresql+DRIVER:`)
    rather than a folder (`postgresql-notes` is a folder)."""
    return backend_for(target) is not FOLDERS


def normalise_target(target: Target) -> Target:
    """A database URL as given; a folder as an absolute path."""
    return backend_for(target).normalise(target)


def open_store(target: Target, create: bool = False, read_only: bool = False) -> Store:
    """The store at `target`: a folder path (embedded) or a `postgresql+psycopg://` URL.

    Without `create`, a target holding no index raises `IndexNotFound`; with it, a store
    that may still be empty is returned (its manifest is None until `initialise`).
    """
    return backend_for(target).open(target, create=create, read_only=read_only)


def open_index(target: Target) -> Store:
    """An existing index as a `Store` (the public name of `open_store` for readers)."""
    return open_store(target)


def store_exists(target: Target) -> bool:
    """Whether `target` holds an index whose first run published (cheap; loads no model)."""
    return backend_for(target).exists(target)


def check_can_create(target: Target) -> None:
    """Raise `IndexNotFound` unless a new index may be made at `target` (nothing lost)."""
    backend_for(target).check_can_create(target)


def describe_store(target: Target) -> dict[str, Any]:
    """`info`: the manifest, counts and sizes, read without loading any vector space."""
    store = open_store(target)
    try:
        return store.describe()
    finally:
        store.close()


def verify_target(target: Target) -> VerifyReport:
    """`verify`: open the index and cross-check everything; an index that does not open
    is one problem of the report, not an error."""
    try:
        store = open_store(target)
    except CtxsearchError as error:
        return VerifyReport(str(target), problems=[f"the index does not open: {error}"])
    try:
        return store.verify()
    finally:
        store.close()

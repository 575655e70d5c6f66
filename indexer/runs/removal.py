"""Remove a folder's or a file's documents from an index, in one atomic change."""

from __future__ import annotations

import os
from pathlib import Path

from indexer.errors import NotIndexed
from indexer.reading.sources import path_text
from indexer.store.backends import open_store
from indexer.store.base import Store, Target


def remove_path(target: Target, path: str | Path, wait: bool = False) -> dict[str, object]:
    """Drop this machine's documents at `path` (a file) or under it (a folder) from every
    space, and forget the roots there (with their remembered --exclude/--include).

    A symlink is removed as itself, the path the walk indexed it under, never as its
    target; a link to a folder that was indexed as a root (`index LINK` records the
    folder it points to) removes that root. The path need not exist any more.
    Published at once, like an indexing run; raises `NotIndexed` (and changes nothing)
    when the index holds nothing there.
    """
    where = own_path(Path(path))
    store = open_store(target)
    try:
        with store.writer(wait), store.change() as change:
            documents, chunks, roots = change.remove_path(where)
            if not documents and not roots and _is_root(store, linked := where.resolve()):
                where = linked
                documents, chunks, roots = change.remove_path(where)
            if not documents and not roots:
                raise NotIndexed(f"{path_text(where)}: nothing indexed there (see `ctxsearch ls`)")
        with store.snapshot() as snapshot:
            left = snapshot.counts()
    finally:
        store.close()
    return {
        "path": path_text(where),
        "removed_documents": documents,
        "removed_chunks": chunks,
        "removed_roots": roots,
        "total_documents": left["documents"],
        "total_chunks": left["chunks"],
    }


def own_path(path: Path) -> Path:
    """`path` made absolute with the links of its parent folders resolved, but not a
    link at its end: the path under which the walk found that file or folder."""
    absolute = Path(os.path.abspath(path.expanduser()))
    if absolute.parent == absolute:
        return absolute
    return absolute.parent.resolve() / absolute.name


def _is_root(store: Store, folder: Path) -> bool:
    return folder.parent != folder and path_text(folder) in store.roots_under(folder.parent)

"""Remove a folder's or a file's documents from an index, in one atomic change."""

from __future__ import annotations

from pathlib import Path

from indexer.errors import NotIndexed
from indexer.reading.links import spellings
from indexer.reading.sources import path_text
from indexer.store.backends import open_store
from indexer.store.base import Target


def remove_path(target: Target, path: str | Path, wait: bool = False) -> dict[str, object]:
    """Drop this machine's documents at `path` (a file) or under it (a folder) from every
    space, and forget the roots there (with their remembered --exclude/--include).

    A symlink is removed as itself, the path the walk indexed it under, never as its
    target; `path` is looked for as given (below a root given as a link) and with the
    links of its parent folders resolved (see `indexer.reading.links.spellings`); a link
    at the end of the path is the link, whatever it points to (an indexed folder
    included: that folder's own path removes it).
    The path need not exist any more. Published at once, like an indexing run; raises
    `NotIndexed` (and changes nothing) when the index holds nothing there.
    """
    named = spellings(Path(path))
    store = open_store(target)
    try:
        with store.writer(wait), store.change() as change:
            for where in named:
                documents, chunks, roots = change.remove_path(where)
                if documents or roots:
                    break
            if not documents and not roots:
                where = named[-1]
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

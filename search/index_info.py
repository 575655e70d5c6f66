"""Describe an index from its SQL store and file sizes, without FAISS or torch."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from indexer.errors import IndexCorrupt, IndexNotFound
from indexer.store.layout import DATABASE_FILE, is_index, space_file
from indexer.store.metadata import MetadataStore


def describe_index(index_dir: Path) -> dict[str, Any]:
    """The manifest, the counts of documents and chunks, and the size of each file."""
    directory = Path(index_dir).expanduser().absolute()
    if not directory.exists():
        raise IndexNotFound(f"{directory}: no index here (build one with `ctxsearch index`)")
    if not is_index(directory):
        raise IndexNotFound(f"{directory}: not a ctxsearch index")
    store = MetadataStore(directory / DATABASE_FILE)
    try:
        manifest = store.read_manifest()
        if manifest is None:
            raise IndexCorrupt(f"{directory}: the index has no manifest")
        counts = store.counts()
    finally:
        store.close()
    files = {DATABASE_FILE: directory / DATABASE_FILE}
    files |= {
        path.name: path
        for path in (space_file(directory, space, manifest.generation) for space in manifest.spaces)
    }
    return {
        "index": str(directory),
        **counts,
        "manifest": {
            **asdict(manifest),
            "created_at": _iso(manifest.created_at),
            "updated_at": _iso(manifest.updated_at),
        },
        "files": {
            name: (path.stat().st_size if path.exists() else None) for name, path in files.items()
        },
    }


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")

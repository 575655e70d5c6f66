"""ctxsearch's write path: read folders, chunk, encode, and store the index.

    from indexer import Indexer
    summary = Indexer("my.idx").index_folder("~/notes")
    summary = Indexer("postgresql+psycopg://me@db:5432/search").index_folder("~/notes")
    Watcher(Indexer("my.idx"), ["~/notes"]).run()  # until stop(), from another thread

Names are imported on first use, so `import indexer` stays cheap (no FAISS, no torch).
"""

from __future__ import annotations

import importlib
from typing import Any

from indexer.errors import (
    CtxsearchError,
    DocumentNotFound,
    IndexCorrupt,
    IndexLocked,
    IndexNotFound,
    InvalidQuery,
    InvalidRecord,
    MissingDependency,
    ModelMismatch,
    ModelNotAvailable,
    SourceNotFound,
    StoreUnavailable,
    UnreadableFile,
)
from indexer.version import __version__

_LAZY = {
    "open_index": "indexer.store.backends",
    "Indexer": "indexer.runs.indexer",
    "IndexSummary": "indexer.runs.indexer",
    "Progress": "indexer.runs.indexer",
    "RecordSummary": "indexer.runs.record_changes",
    "remove_path": "indexer.runs.removal",
    "WriteSettings": "indexer.runs.write_settings",
    "Watcher": "indexer.watching.watcher",
    "WatchListener": "indexer.watching.listener",
}

__all__ = [
    "CtxsearchError",
    "DocumentNotFound",
    "IndexCorrupt",
    "IndexLocked",
    "IndexNotFound",
    "IndexSummary",
    "Indexer",
    "InvalidQuery",
    "InvalidRecord",
    "MissingDependency",
    "ModelMismatch",
    "ModelNotAvailable",
    "Progress",
    "RecordSummary",
    "SourceNotFound",
    "StoreUnavailable",
    "UnreadableFile",
    "WatchListener",
    "Watcher",
    "WriteSettings",
    "__version__",
    "open_index",
    "remove_path",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")

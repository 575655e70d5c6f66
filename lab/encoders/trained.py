"""Word2Vec and FastText, trained with gensim on the corpus they will encode.

Both are skip-gram models trained from scratch on the texts given (one text = one
sentence for gensim, words as in `indexer.encoders.words`), with the settings of
`TrainingSettings`. FastText also learns vectors for character n-grams (3 to 6
characters, hashed into buckets), so it can build a vector for a word it never saw;
Word2Vec has vectors only for the words of its vocabulary.

Training is deterministic (one worker thread, a fixed seed, a fixed hash function) and
cached: the trained vectors are saved under a key made of the corpus content, the
settings and gensim's version, so the same corpus is trained once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from indexer.encoders.optional import require
from indexer.encoders.words import WordVectorEncoder, words

TrainProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class TrainingSettings:
    """What a trained model depends on besides its corpus (all part of the cache key)."""

    dim: int = 100
    window: int = 5
    min_count: int = 2
    epochs: int = 10
    negative: int = 5
    seed: int = 42
    # FastText only: character n-gram lengths and the number of hash buckets.
    min_n: int = 3
    max_n: int = 6
    buckets: int = 200_000


def stable_hash(text: str) -> int:
    """gensim's seed hash for initial vectors; Python's own `hash` changes per process."""
    return zlib.crc32(text.encode("utf-8"))


def corpus_key(texts: Iterable[str]) -> str:
    """A hash of the texts in order, to key what is trained on them."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()


class TrainedWordEncoder(WordVectorEncoder):
    """Mean of trained word vectors; `train` fits them on a corpus, or loads them cached."""

    method: ClassVar[str]

    def __init__(self, vectors: Any, settings: TrainingSettings, info: dict[str, Any]):
        self.vectors = vectors
        self.name = self.method
        self.dim = int(vectors.vector_size)
        self.training = settings
        self.info = info
        self.settings = {
            "algorithm": f"{self.method} skip-gram (gensim {info['gensim']})",
            "corpus": info["corpus"],
            **asdict(settings),
        }

    @classmethod
    def train(
        cls,
        texts: list[str],
        cache_dir: Path,
        settings: TrainingSettings | None = None,
        progress: TrainProgress | None = None,
    ) -> TrainedWordEncoder:
        """Vectors trained on `texts`, from `cache_dir` if this corpus was trained before."""
        gensim = require("gensim", cls.method)
        settings = settings or TrainingSettings()
        corpus = corpus_key(texts)
        key = hashlib.sha256(
            json.dumps([cls.method, corpus, asdict(settings), gensim.__version__]).encode()
        ).hexdigest()[:16]
        folder = Path(cache_dir) / f"{cls.method}-{key}"
        if not (folder / "info.json").exists():
            _train_into(cls, folder, texts, settings, progress, gensim.__version__, corpus)
        info = json.loads((folder / "info.json").read_text())
        return cls(cls._load(folder / "vectors.kv"), settings, info)

    @classmethod
    def _fit(cls, sentences: list[list[str]], settings: TrainingSettings, callbacks: list) -> Any:
        raise NotImplementedError

    @classmethod
    def _load(cls, path: Path) -> Any:
        raise NotImplementedError

    def in_vocabulary(self, word: str) -> bool:
        """Whether the word was in the training vocabulary (seen at least min_count times)."""
        return word in self.vectors.key_to_index

    def lookup(self, word: str) -> np.ndarray | None:
        index = self.vectors.key_to_index.get(word)
        return None if index is None else self.vectors.vectors[index]

    def neighbours(self, word: str, count: int = 5) -> list[tuple[str, float]]:
        """The trained words closest to a word's vector (the word itself left out)."""
        vector = self.word_vector(word)
        if vector is None:
            return []
        found = self.vectors.similar_by_vector(vector, topn=count + 1)
        return [(other, round(float(score), 4)) for other, score in found if other != word][:count]


def _train_into(
    cls: type[TrainedWordEncoder],
    folder: Path,
    texts: list[str],
    settings: TrainingSettings,
    progress: TrainProgress | None,
    version: str,
    corpus: str,
) -> None:
    """Train and save into `folder` atomically (a finished folder is renamed into place)."""
    sentences = [text_words for text_words in (words(text) for text in texts) if text_words]
    callbacks = [_EpochReporter(settings.epochs, progress)] if progress else []
    started = time.perf_counter()
    model = cls._fit(sentences, settings, callbacks)
    seconds = time.perf_counter() - started
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        model.wv.save(str(staging / "vectors.kv"))
        info = {
            "method": cls.method,
            "gensim": version,
            "corpus": corpus[:16],
            "texts": len(texts),
            "words": sum(len(s) for s in sentences),
            "vocabulary": len(model.wv.key_to_index),
            "train_seconds": round(seconds, 2),
        }
        (staging / "info.json").write_text(json.dumps(info, indent=2))
        try:
            os.replace(staging, folder)
        except OSError:
            if not (folder / "info.json").exists():  # not a concurrent run that finished first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class _EpochReporter:
    """A gensim callback that reports finished epochs."""

    def __init__(self, epochs: int, progress: TrainProgress):
        self.epochs = epochs
        self.progress = progress
        self.done = 0

    def on_epoch_end(self, _model: Any) -> None:
        self.done += 1
        self.progress(self.done, self.epochs)

    def on_epoch_begin(self, _model: Any) -> None: ...
    def on_batch_begin(self, _model: Any) -> None: ...
    def on_batch_end(self, _model: Any) -> None: ...
    def on_train_begin(self, _model: Any) -> None: ...
    def on_train_end(self, _model: Any) -> None: ...


def _common(settings: TrainingSettings) -> dict[str, Any]:
    return {
        "vector_size": settings.dim,
        "window": settings.window,
        "min_count": settings.min_count,
        "epochs": settings.epochs,
        "negative": settings.negative,
        "seed": settings.seed,
        "sg": 1,  # skip-gram
        "workers": 1,  # one thread: the same vectors on every run
        "hashfxn": stable_hash,
    }


class Word2VecEncoder(TrainedWordEncoder):
    """Skip-gram Word2Vec: one vector per vocabulary word, nothing for unseen words."""

    method = "word2vec"

    @classmethod
    def _fit(cls, sentences: list[list[str]], settings: TrainingSettings, callbacks: list) -> Any:
        models = require("gensim.models", cls.method)
        return models.Word2Vec(sentences=sentences, callbacks=callbacks, **_common(settings))

    @classmethod
    def _load(cls, path: Path) -> Any:
        return require("gensim.models", cls.method).KeyedVectors.load(str(path), mmap="r")


class FastTextEncoder(TrainedWordEncoder):
    """Skip-gram FastText: word vectors plus character n-grams, so unseen words get one."""

    method = "fasttext"

    @classmethod
    def _fit(cls, sentences: list[list[str]], settings: TrainingSettings, callbacks: list) -> Any:
        models = require("gensim.models", cls.method)
        return models.FastText(
            sentences=sentences,
            callbacks=callbacks,
            min_n=settings.min_n,
            max_n=settings.max_n,
            bucket=settings.buckets,
            **_common(settings),
        )

    @classmethod
    def _load(cls, path: Path) -> Any:
        return require("gensim.models.fasttext", cls.method).FastTextKeyedVectors.load(
            str(path), mmap="r"
        )

    def lookup(self, word: str) -> np.ndarray | None:
        # In the vocabulary: its trained vector; otherwise the mean of its n-grams' vectors.
        index = self.vectors.key_to_index.get(word)
        if index is not None:
            return self.vectors.vectors[index]
        if word not in self.vectors:  # true for any word while there are n-gram buckets
            return None
        return np.asarray(self.vectors.get_vector(word), dtype=np.float32)

    def ngrams(self, word: str) -> list[str]:
        """The character n-grams FastText builds a vector for `word` from (with < and >)."""
        marked = f"<{word}>"
        settings = self.training
        return [
            marked[start : start + size]
            for size in range(settings.min_n, settings.max_n + 1)
            for start in range(len(marked) - size + 1)
        ]

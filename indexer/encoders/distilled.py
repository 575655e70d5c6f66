"""Model2Vec: a static model distilled from the transformer itself.

The `model2vec` package runs the transformer once over every token of its vocabulary
(each token alone, mean-pooled), reduces the outputs with PCA and weights them by token
frequency (SIF), giving one vector per token: a lookup table like the model's input
embeddings, but one that has been through all the layers. A text's vector is the mean
of its tokens' rows. Distilling all-MiniLM-L6-v2 takes about two minutes on two cores,
so the result is saved under a key made of the model's fingerprint, the settings and
model2vec's version, and loaded from there afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from indexer import config
from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel
from indexer.encoders.optional import require


@dataclass(frozen=True)
class DistillSettings:
    """model2vec's distillation settings (its defaults), all part of the cache key."""

    pca_dims: int = 256
    sif_coefficient: float = 1e-4


class Model2VecEncoder(Encoder):
    """Mean of a distilled static model's token vectors (no truncation)."""

    batch_size = 1024

    def __init__(self, static_model: Any, info: dict[str, Any]):
        self.static_model = static_model
        self.info = info
        self.name = "model2vec"
        self.dim = int(static_model.dim)
        self.settings = {
            "distilled_from": info["model"],
            "model_fingerprint": info["fingerprint"],
            "model2vec": info["model2vec"],
            **info["settings"],
        }

    @classmethod
    def distil(
        cls,
        loaded: LoadedModel,
        cache_dir: Path,
        settings: DistillSettings | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> Model2VecEncoder:
        """The static model distilled from `loaded`, from `cache_dir` if made before.

        `progress(done, total)` hears (0, 1) when a distillation starts and (1, 1) at its end.
        """
        model2vec = require("model2vec", "model2vec")
        settings = settings or DistillSettings()
        folder = distilled_folder(cache_dir, loaded.fingerprint, settings, model2vec.__version__)
        if not (folder / "info.json").exists():
            if progress:
                progress(0, 1)
            _distil_into(folder, loaded, settings, model2vec.__version__)
            if progress:
                progress(1, 1)
        return cls.load(folder)

    @classmethod
    def load(cls, folder: Path) -> Model2VecEncoder:
        """The distilled model saved in `folder` (needs model2vec, not torch)."""
        model2vec = require("model2vec", "model2vec")
        info = json.loads((folder / "info.json").read_text())
        static_model = model2vec.StaticModel.from_pretrained(str(folder / "model"), normalize=True)
        return cls(static_model, info)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        vectors = self.static_model.encode(
            texts,
            max_length=None,
            batch_size=self.batch_size,
            show_progress_bar=False,
            use_multiprocessing=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def word_vector(self, word: str) -> np.ndarray:
        """The unit vector of a word on its own: the same in every sentence."""
        return self.encode([word])[0]


def distilled_folder(
    cache_dir: Path, fingerprint: str, settings: DistillSettings, version: str
) -> Path:
    """Where the model with this fingerprint, distilled with these settings by this
    version of model2vec, is kept."""
    key = hashlib.sha256(json.dumps([fingerprint, asdict(settings), version]).encode())
    return Path(cache_dir) / f"model2vec-{key.hexdigest()[:16]}"


def _distil_into(
    folder: Path, loaded: LoadedModel, settings: DistillSettings, version: str
) -> None:
    """Distil and save into `folder` atomically (a finished folder is renamed into place)."""
    distillation = require("model2vec.distill", "model2vec")
    require("skeletoken", "model2vec")  # what model2vec.distill needs beyond the core package
    config.set_default(config.HF_HUB_OFFLINE, "1")
    started = time.perf_counter()
    # distill_from_model works on a deep copy: the shared, loaded model is left untouched.
    # Its own tqdm bar is kept off the terminal: the caller reports progress its own way.
    with contextlib.redirect_stderr(io.StringIO()):
        static_model = distillation.distill_from_model(
            model=loaded.model,
            tokenizer=loaded.tokenizer,
            device="cpu",
            pca_dims=settings.pca_dims,
            sif_coefficient=settings.sif_coefficient,
        )
    seconds = time.perf_counter() - started
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        static_model.save_pretrained(str(staging / "model"))
        info = {
            "model": loaded.name,
            "fingerprint": loaded.fingerprint,
            "model2vec": version,
            "settings": asdict(settings),
            "tokens": int(static_model.embedding.shape[0]),
            "dim": int(static_model.embedding.shape[1]),
            "distil_seconds": round(seconds, 2),
        }
        (staging / "info.json").write_text(json.dumps(info, indent=2))
        try:
            os.replace(staging, folder)
        except OSError:
            if not (folder / "info.json").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)

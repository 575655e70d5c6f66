"""What the static space of an index may hold (cheap to import: no torch, no model)."""

from __future__ import annotations

from typing import Any

# `token`: the model's own input token-embedding table; `model2vec`: a static model
# distilled from the transformer; `glove`: GloVe 6B 50d word vectors.
STATIC_CHOICES = ("token", "model2vec", "glove")
DEFAULT_STATIC = "token"


def static_settings(encoder: Any) -> dict:
    """What identifies a static encoder's vectors, recorded in the manifest and checked."""
    return dict(getattr(encoder, "settings", None) or {})

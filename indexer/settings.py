"""Checks of indexing settings that need no model (and so no torch) to make."""

from __future__ import annotations

import re

from indexer.encoders.choices import STATIC_CHOICES
from indexer.errors import InvalidSettings
from indexer.store.index_types import INDEX_TYPES, QUANTIZATIONS

_LAST_K = re.compile(r"^mean-last([1-9]\d*)$")
POOLINGS = ("mean", "cls", "max", "mean-lastK")
BATCH_CHUNKS = 256  # chunks encoded and written together


def check_pooling_name(name: str) -> None:
    """Refuse a pooling that is not mean, cls, max or mean-lastK (K a positive number)."""
    if name not in ("mean", "cls", "max") and not _LAST_K.match(name):
        raise InvalidSettings(
            f"unknown pooling {name!r}: use mean, cls, max or mean-lastK (e.g. mean-last4)"
        )


def check_settings(
    pooling: str | None,
    chunk_overlap: int,
    batch_chunks: int,
    index_type: str | None,
    static: str | None = None,
    quantize: str | None = None,
) -> None:
    """Refuse settings that cannot work, before anything is read or written."""
    if static is not None and static not in STATIC_CHOICES:
        choices = ", ".join(STATIC_CHOICES)
        raise InvalidSettings(f"unknown static space {static!r}: choose {choices}")
    if pooling is not None:
        check_pooling_name(pooling)
    for name, value, least in (
        ("chunk overlap", chunk_overlap, 0),
        ("batch size", batch_chunks, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InvalidSettings(
                f"{name} must be a whole number of at least {least}, not {value!r}"
            )
    if index_type is not None and index_type not in INDEX_TYPES:
        choices = ", ".join(INDEX_TYPES)
        raise InvalidSettings(f"unknown index type {index_type!r}: choose {choices}")
    if quantize is not None and quantize not in QUANTIZATIONS:
        choices = ", ".join(QUANTIZATIONS)
        raise InvalidSettings(f"unknown quantization {quantize!r}: choose {choices}")

"""A passage's content key: what decides its vectors, hashed.

Two passages with the same key get the same vectors in every space, so a run copies the
stored vectors of a key instead of encoding its text again (across edits of a file,
across files, moves and record upserts). The key hashes the passage's text with every
manifest setting a vector depends on: the model's weights (fingerprint), the pooling,
the static space and its settings, the precision chunks are encoded in and the spaces'
dimensions. The index's id, paths and chunking settings are left out: the same text
encoded with the same settings gives the same vectors wherever it sits.
"""

from __future__ import annotations

import hashlib
import json

from indexer.store.manifest import Manifest


def encoding_settings(manifest: Manifest) -> str:
    """The manifest's settings that decide a passage's vectors, as text (keys sorted)."""
    return json.dumps(
        {
            "fingerprint": manifest.model_fingerprint,
            "pooling": manifest.pooling,
            "static": manifest.static,
            "static_settings": manifest.static_settings,
            "precision": manifest.precision,
            "spaces": {space: manifest.dim_of(space) for space in manifest.spaces},
        },
        sort_keys=True,
    )


def content_key(text: str, settings: str) -> str:
    """The key (64 hex digits) of a passage's `text` encoded with `settings`."""
    digest = hashlib.sha256(settings.encode())
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def content_keys(texts: list[str], manifest: Manifest) -> list[str]:
    """The key of each text, encoded with the settings of `manifest`."""
    settings = encoding_settings(manifest)
    return [content_key(text, settings) for text in texts]

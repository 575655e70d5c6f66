"""What a writer's encoders were made for, so that every run can tell if they still fit.

A writer that lives on (`serve --writable`, `watch`, an app's `Indexer`) may find the
index it writes into replaced under it: deleted and built again with another pooling,
model or static space. Its encoders are kept with the key of the manifest they were
made for; each run compares that key with the manifest it writes into (read under the
writer lock) and makes new encoders when they differ, loading the model again only when
it is another model. A vector is never written with encoders made for another index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from indexer.store.manifest import Manifest


@dataclass(frozen=True)
class EncoderKey:
    """The settings a set of encoders makes its vectors with, and the index they serve."""

    index_id: str
    model: str
    fingerprint: str
    pooling: str
    static: str
    static_settings: str  # JSON, keys sorted
    precision: str

    @classmethod
    def of(cls, manifest: Manifest, precision: str) -> EncoderKey:
        """The key of the encoders that write into the index of `manifest` in `precision`."""
        return cls(
            index_id=manifest.index_id,
            model=manifest.model,
            fingerprint=manifest.model_fingerprint,
            pooling=manifest.pooling,
            static=manifest.static,
            static_settings=settings_text(manifest.static_settings),
            precision=precision,
        )

    def same_settings(self, model: str, pooling: str, static: str) -> bool:
        """Whether these encoders are those a new index with these settings needs."""
        return (self.model, self.pooling, self.static) == (model, pooling, static)


def settings_text(settings: dict) -> str:
    """A static encoder's settings as text that compares equal when they are."""
    return json.dumps(settings, sort_keys=True)

"""Rebuild what can be rebuilt from the stored chunks, without reading the source folder."""

from __future__ import annotations

from indexer.store.backends import open_store
from indexer.store.base import RebuildProgress, Target


def repair_index(
    target: Target, wait: bool = False, progress: RebuildProgress | None = None
) -> dict[str, int]:
    """Re-encode every stored chunk into fresh vector spaces and rebuild the lexical space.

    The result is published atomically, like an indexing run; the stored documents and
    chunks are the source of truth and are left as they are.
    """
    from indexer.encoders.choices import static_settings
    from indexer.encoders.loading import load_model
    from indexer.encoders.spaces import space_encoders

    store = open_store(target)
    try:
        with store.writer(wait):
            manifest = store.manifest
            assert manifest is not None  # open_store refuses an index without one
            loaded = load_model(manifest.model)
            manifest.check_model(loaded.name, loaded.fingerprint)
            encoders = space_encoders(loaded, manifest.pooling, manifest.static)
            manifest.check_static_settings(static_settings(encoders["static"]))

            def encode(texts: list[str]) -> dict:
                return {name: encoders[name].encode(texts) for name in manifest.spaces}

            return store.rebuild(encode, progress)
    finally:
        store.close()

"""Rebuild what can be rebuilt from the stored chunks, without reading the source folder."""

from __future__ import annotations

from indexer.splitting.model_input import model_input
from indexer.store.backends import open_store
from indexer.store.base import RebuildProgress, Target


def repair_index(
    target: Target, wait: bool = False, progress: RebuildProgress | None = None
) -> dict[str, int]:
    """Re-encode every stored chunk into fresh vector spaces and rebuild the lexical space.

    The result is published atomically, like an indexing run; the stored documents and
    chunks are the source of truth and are left as they are. Chunks are encoded in the
    precision the manifest records, so the vectors are those a run would have written,
    and every chunk gets its content key (those from before content keys, too), by
    which later runs reuse its vectors.
    """
    from indexer.encoders.for_index import encoders_for

    store = open_store(target)
    try:
        with store.writer(wait):
            manifest = store.manifest
            assert manifest is not None  # open_store refuses an index without one
            encoders = encoders_for(manifest, manifest.precision)

            def encode(texts: list[str]) -> dict:
                # a text repeated in the batch (a copied file's passages) is encoded once
                unique = list(dict.fromkeys(texts))
                rows = {value: row for row, value in enumerate(unique)}
                order = [rows[value] for value in texts]
                return {name: encoders[name].encode(unique)[order] for name in manifest.spaces}

            def model_text(text: str, section: str | None) -> str:
                spans = encoders.loaded.token_spans
                return model_input(text, section, spans, manifest.chunk_tokens)

            return store.rebuild(encode, progress, model_text)
    finally:
        store.close()

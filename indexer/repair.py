"""Rebuild what can be rebuilt from the stored chunks, without reading the source folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from sqlalchemy import select, text

from indexer.store.index import StoredIndex
from indexer.store.lexical import FTS_TABLE
from indexer.store.lock import WriterLock
from indexer.store.schema import ChunkRow
from indexer.store.vectors import VectorSpace

BATCH = 256


def repair_index(
    directory: Path, wait: bool = False, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Re-encode every stored chunk into fresh vector spaces and rebuild the lexical space.

    The result is published as a new generation, like an indexing run; the SQL store
    (documents, chunks) is the source of truth and is left as it is.
    """
    from indexer.encoders.loading import load_model
    from indexer.encoders.static import StaticEncoder
    from indexer.encoders.transformer import ContextualEncoder

    directory = Path(directory).expanduser().absolute()
    with WriterLock(directory).acquire(wait):
        index = StoredIndex.open(directory, load_spaces=False)
        try:
            loaded = load_model(index.manifest.model)
            index.manifest.check_model(loaded.name, loaded.fingerprint)
            encoders = {
                "contextual": ContextualEncoder(loaded, index.manifest.pooling),
                "static": StaticEncoder(loaded),
            }
            index.spaces = {name: VectorSpace(index.manifest.dim) for name in index.spaces}
            with index.metadata.sessions() as reader:
                rows = reader.execute(select(ChunkRow.id, ChunkRow.text).order_by(ChunkRow.id))
                chunks = [(int(chunk_id), value) for chunk_id, value in rows]
            with index.writing() as session:
                for first in range(0, len(chunks), BATCH):
                    batch = chunks[first : first + BATCH]
                    ids = np.asarray([chunk_id for chunk_id, _ in batch], dtype=np.int64)
                    texts = [value for _, value in batch]
                    for name, space in index.spaces.items():
                        space.add(ids, encoders[name].encode(texts))
                    if progress is not None:
                        progress(first + len(batch), len(chunks))
                session.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')"))
            return {"chunks": len(chunks), "generation": index.manifest.generation}
        finally:
            index.close()

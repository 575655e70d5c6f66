"""The words of a hit's passage that carried its cosine to the query, in each vector space.

For `explain`: the passage is encoded again, as the index encoded it (its section trail
in front, `indexer.splitting.model_input`), by the index's own encoders in fp32 (the
torch ones: ONNX gives no per-token states), and its vector taken apart into its tokens'
shares (`search.word_shares`), for the contextual space (last-layer states: a word's
share depends on its neighbours) and the static space (table rows: the same word weighs
the same anywhere). The query is encoded by the same encoders, so the shares add up to
the cosine shown here; the hit's `similarity` (from the stored vector, in the index's
precision) can differ from it in the last digits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.encoders.token_parts import Undecomposable, token_parts
from indexer.spaces import Space
from indexer.splitting.model_input import model_input
from indexer.store.base import StoredChunk
from indexer.store.manifest import Manifest
from search.word_shares import word_shares

if TYPE_CHECKING:
    from indexer.encoders.for_index import IndexEncoders

# The spaces explained, in the order shown: what context changed is the difference.
EXPLAINED_SPACES = (Space.CONTEXTUAL.value, Space.STATIC.value)


class PassageWords:
    """Explains passages against one query with the encoders `encoders()` gives (the
    index's, in fp32: `ExplainingEncoders`), asked for on first use."""

    def __init__(self, manifest: Manifest, query: str, encoders: Callable[[], IndexEncoders]):
        self.manifest = manifest
        self.query = query
        self._loaded = encoders
        self._queries: dict[str, np.ndarray] = {}

    def explain(self, chunk: StoredChunk) -> dict[str, Any]:
        """Per space, the passage's cosine to the query taken apart by word (or a note
        saying why that space cannot be)."""
        encoders = self._loaded()
        text = model_input(
            chunk.text, chunk.section, encoders.loaded.token_spans, self.manifest.chunk_tokens
        )
        shown: dict[str, Any] = {}
        for space in EXPLAINED_SPACES:
            if space not in encoders.spaces:
                continue
            try:
                parts = token_parts(encoders[space], text)
            except Undecomposable as reason:
                shown[space] = {"note": str(reason)}
                continue
            shares = word_shares(parts, text, self._query(space))
            shown[space] = shares.shown()
        return shown

    def _query(self, space: str) -> np.ndarray:
        if space not in self._queries:
            self._queries[space] = self._loaded()[space].encode([self.query])[0]
        return self._queries[space]


class ExplainingEncoders:
    """The index's torch encoders in fp32, made on first use and kept (threads may share
    it: one makes them, the others wait)."""

    def __init__(self, manifest: Manifest):
        self.manifest = manifest
        self._made: IndexEncoders | None = None
        self._lock = threading.Lock()

    def __call__(self) -> IndexEncoders:
        with self._lock:
            if self._made is None:
                from indexer.encoders.for_index import encoders_for

                self._made = encoders_for(self.manifest, "fp32")
            return self._made

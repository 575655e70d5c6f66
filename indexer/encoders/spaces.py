"""One encoder per vector space of an index, made from one loaded model."""

from __future__ import annotations

from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel
from indexer.spaces import Space


def space_encoders(loaded: LoadedModel, pooling: str) -> dict[str, Encoder]:
    """The contextual encoder (with the index's pooling) and the static one, by space name."""
    from indexer.encoders.static import StaticEncoder
    from indexer.encoders.transformer import ContextualEncoder

    return {
        Space.CONTEXTUAL.value: ContextualEncoder(loaded, pooling),
        Space.STATIC.value: StaticEncoder(loaded),
    }

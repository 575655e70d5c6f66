"""The ways a query can be answered, and the default (cheap to import: no FAISS, no torch)."""

from __future__ import annotations

from enum import Enum

from indexer.spaces import Space


class Mode(str, Enum):
    """A search mode; its value is the name the CLI, the HTTP API and the JSON use."""

    HYBRID = "hybrid"  # contextual and lexical lists fused
    CONTEXTUAL = Space.CONTEXTUAL.value
    STATIC = Space.STATIC.value
    LEXICAL = Space.LEXICAL.value

    __str__ = str.__str__

    @property
    def spaces(self) -> tuple[Space, ...]:
        """The spaces this mode searches."""
        if self is Mode.HYBRID:
            return (Space.CONTEXTUAL, Space.LEXICAL)
        return (Space(self.value),)

    @property
    def vector_spaces(self) -> tuple[Space, ...]:
        """The spaces whose query vector needs the model."""
        return tuple(space for space in self.spaces if space is not Space.LEXICAL)


MODES: tuple[str, ...] = tuple(mode.value for mode in Mode)
# Hybrid is the default because, chosen across collections (README), it never
# scored below the better of its parts; it needs the model like contextual does.
DEFAULT_MODE = Mode.HYBRID

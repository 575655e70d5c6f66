"""The spaces an index keeps: two vector spaces and one lexical space, named once here."""

from __future__ import annotations

from enum import Enum


class Space(str, Enum):
    """A space of the index; its value is the name used in manifests, JSON and files."""

    CONTEXTUAL = "contextual"  # pooled last-layer hidden states of the transformer
    STATIC = "static"  # the model's input token-embedding table, averaged
    LEXICAL = "lexical"  # full-text search over the chunk text

    __str__ = str.__str__  # "contextual", not "Space.CONTEXTUAL", in messages and f-strings


# The contextual space's name as a plain string, as the store and the runs key vectors,
# manifests and files by it.
CONTEXTUAL: str = Space.CONTEXTUAL.value

# The vector spaces every index keeps, in the order the manifest lists them.
VECTOR_SPACES: tuple[Space, ...] = (Space.CONTEXTUAL, Space.STATIC)

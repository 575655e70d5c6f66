"""How complete an index is: how many of its passages the contextual space holds.

A run makes its new passages searchable by the lexical and static spaces first and fills
their contextual vectors after, in published batches (`indexer.runs.fill`); meanwhile
every surface (`info`, `ls`, `query --json`, HTTP, MCP, the page) says how far it is,
with the keys of `Completeness.to_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Completeness:
    """How many passages the index holds, and how many of them have their contextual
    vector (all of them, once the fill is done)."""

    passages: int
    contextual_passages: int

    @property
    def contextual_complete(self) -> bool:
        """Whether every passage has its contextual vector."""
        return self.contextual_passages >= self.passages

    def to_dict(self) -> dict[str, int | bool]:
        """The same three keys on every surface."""
        return {
            "passages": self.passages,
            "contextual_passages": self.contextual_passages,
            "contextual_complete": self.contextual_complete,
        }

    def describe(self) -> str:
        """One line for people: how far the contextual space is."""
        if self.contextual_complete:
            return f"complete: all {self.passages:,} passages have contextual vectors"
        return (
            f"filling: {self.contextual_passages:,} of {self.passages:,} passages have "
            "contextual vectors (the others are found by the lexical and static spaces)"
        )

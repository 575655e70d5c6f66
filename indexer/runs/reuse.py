"""Vectors reused by content: a run encodes only the passages whose vectors it lacks.

Each passage of a batch gets its content key (`indexer.store.content_keys`). A key whose
vectors the index stores (in any document, removed ones of this change included) is
copied from the store; a key some earlier batch of this run encodes is taken from the
store once that batch is stored; only the rest is encoded, each key once. So an edit pays
for the passages it changed, a copied file or a record with known text for none, and a
passage repeated within a run is encoded once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from indexer.spaces import CONTEXTUAL
from indexer.store.base import Change, KeyedVectors
from indexer.store.content_keys import content_keys
from indexer.store.manifest import Manifest

Vectors = dict[str, np.ndarray]


@dataclass
class BatchPlan:
    """What one batch encodes and what it copies: each chunk's key in order, the stored
    vectors found for some, and the row of each key it encodes among `texts`."""

    keys: list[str]
    stored: KeyedVectors
    encoded_rows: dict[str, int]
    texts: list[str]


class Reuse:
    """A run's reuse of vectors, batch after batch (the batches are stored in order).

    With `defer_contextual`, the run encodes every space but the contextual one, whose
    vectors the fill adds after the run's publish (`indexer.runs.fill`): a passage whose
    key a stored passage has gets that one's contextual vector too, when it has one; the
    others are left unfilled.
    """

    def __init__(self, defer_contextual: bool = False) -> None:
        self._defers = defer_contextual
        # Keys that a planned batch encodes and that is not stored yet: a later batch
        # waits for them instead of encoding them again.
        self._in_flight: set[str] = set()

    def encoded_spaces(self, manifest: Manifest) -> list[str]:
        """The spaces the run encodes."""
        return [space for space in manifest.spaces if not (self._defers and space == CONTEXTUAL)]

    def plan(self, change: Change, texts: list[str]) -> BatchPlan:
        """Which of a batch's chunk `texts` to encode (read before the batch is stored)."""
        keys = content_keys(texts, change.manifest)
        wanted = [key for key in keys if key not in self._in_flight]
        stored = change.vectors_for(wanted)
        if self._defers:  # those whose contextual vector is not filled yet: the rest
            rest = [key for key in wanted if key not in stored]
            stored |= change.vectors_for(rest, self.encoded_spaces(change.manifest))
        rows: dict[str, int] = {}
        to_encode: list[str] = []
        for key, text in zip(keys, texts, strict=True):
            if key not in stored and key not in self._in_flight and key not in rows:
                rows[key] = len(to_encode)
                to_encode.append(text)
        self._in_flight.update(rows)
        return BatchPlan(keys, stored, rows, to_encode)

    def vectors(
        self, change: Change, plan: BatchPlan, encoded: Vectors
    ) -> tuple[Vectors, np.ndarray | None]:
        """Every chunk's vectors in order, in each space of `encoded` (encoded, copied from
        the store, or stored by an earlier batch of the run, which is stored by now) and,
        when the run defers the contextual space, in it where a copy was found; and then
        which chunks are left for the fill (None when the run does not defer)."""
        manifest = change.manifest
        waited = [
            key for key in plan.keys if key not in plan.stored and key not in plan.encoded_rows
        ]
        earlier = change.vectors_for(waited, self.encoded_spaces(manifest)) if waited else {}
        missing = set(waited) - set(earlier)
        if missing:  # an earlier batch of this run stores every key it planned
            raise RuntimeError(f"{len(missing)} passages were neither encoded nor stored")
        result: Vectors = {}
        for space in encoded:
            matrix = np.empty((len(plan.keys), manifest.dim_of(space)), dtype=np.float32)
            for row, key in enumerate(plan.keys):
                if key in plan.encoded_rows:
                    matrix[row] = encoded[space][plan.encoded_rows[key]]
                else:
                    matrix[row] = (plan.stored.get(key) or earlier[key])[space]
            result[space] = matrix
        if not self._defers:
            return result, None
        copied = np.zeros((len(plan.keys), manifest.dim_of(CONTEXTUAL)), dtype=np.float32)
        unfilled = np.ones(len(plan.keys), dtype=bool)
        for row, key in enumerate(plan.keys):
            if CONTEXTUAL in plan.stored.get(key, {}):
                copied[row], unfilled[row] = plan.stored[key][CONTEXTUAL], False
        result[CONTEXTUAL] = copied
        return result, unfilled

    def stored(self, plan: BatchPlan) -> None:
        """The batch of `plan` is stored: later batches find its keys in the store."""
        self._in_flight.difference_update(plan.encoded_rows)

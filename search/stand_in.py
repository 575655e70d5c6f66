"""Stand-in contextual scores for passages whose contextual vectors are not stored yet.

While a run fills the contextual space (`indexer.runs.fill`), hybrid search meets
passages the lexical side ranks and the contextual side cannot score at all. Given the
contextual side's lowest score, as a passage it did not list would be, the newest
passages (those just indexed) would sink below any passage with a vector. Instead each
takes, on the contextual side, the score of the contextual list's entry at its own rank
in the lexical list: the missing side is taken to agree with the side that is there,
neither lifting nor sinking the passage. Nothing is shown for it (`Hit.similarity` stays
None), and a complete index has no such passage, so its answers do not change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Ranked = Sequence[tuple[int, float]]


def stand_in_cosines(
    dense: Ranked, lexical: Ranked, known: Mapping[int, float]
) -> dict[int, float]:
    """A contextual score for each passage of `lexical` that `known` (the contextual
    scores found: listed or looked up) lacks: that of `dense`'s entry at its lexical
    rank, or of `dense`'s last entry past its end; none when `dense` is empty."""
    if not dense:
        return {}
    return {
        chunk_id: dense[min(position, len(dense) - 1)][1]
        for position, (chunk_id, _) in enumerate(lexical)
        if chunk_id not in known
    }

"""Sets of chunk ids kept as ranges: the passages whose contextual vector is not stored yet.

The manifest names them (`Manifest.unfilled`) as ranges of chunk ids, first and last id
of each, in order: the ids a run adds come in runs, and the fill takes the lowest first
(`indexer.runs.fill`), so a few ranges describe them however many they are, and every
store keeps them the same way. An id in a range whose chunk was removed since names
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

# (first id, last id) of each range, in order, none touching another.
Ranges = list[list[int]]


def with_ids(ranges: Ranges, ids: Iterable[int]) -> Ranges:
    """`ranges` with these chunk ids added, adjacent ids joined into one range."""
    merged: Ranges = []
    spans = [list(span) for span in ranges] + [[i, i] for i in {int(i) for i in ids}]
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return merged


def filled_through(ranges: Ranges, last_id: int) -> Ranges:
    """`ranges` without the ids up to `last_id`."""
    return [[max(first, last_id + 1), last] for first, last in ranges if last > last_id]


def holds(ranges: Ranges, chunk_id: int) -> bool:
    """Whether `chunk_id` lies in `ranges`."""
    return any(first <= chunk_id <= last for first, last in ranges)


def in_ranges(ranges: Ranges, column: str = "id") -> tuple[str, dict[str, int]]:
    """The SQL condition that a chunk id (`column`) lies in `ranges` (false when there
    are none), and its named parameters."""
    if not ranges:
        return "1 = 0", {}
    parts = [f"{column} BETWEEN :first{n} AND :last{n}" for n in range(len(ranges))]
    values = {f"first{n}": first for n, (first, _) in enumerate(ranges)}
    values |= {f"last{n}": last for n, (_, last) in enumerate(ranges)}
    return "(" + " OR ".join(parts) + ")", values

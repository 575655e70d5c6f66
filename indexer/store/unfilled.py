"""What the writer and `verify` read of the passages still lacking their contextual vector.

The manifest names them as ranges of chunk ids (`indexer.store.chunk_ranges`); these
read the stored chunks those ranges hold, the same SQL on every store.
"""

from __future__ import annotations

from indexer.store.base import VerifyReport
from indexer.store.chunk_ranges import Ranges, in_ranges
from indexer.store.sql_reads import Rows, among, batches


def unfilled_count(rows: Rows, ranges: Ranges) -> int:
    """How many stored chunks lack their contextual vector."""
    condition, values = in_ranges(ranges)
    return int(rows(f"SELECT count(*) FROM chunks WHERE {condition}", values)[0][0])


def unfilled_ids(rows: Rows, ranges: Ranges) -> set[int]:
    """The ids of the stored chunks lacking their contextual vector."""
    condition, values = in_ranges(ranges)
    return {int(row[0]) for row in rows(f"SELECT id FROM chunks WHERE {condition}", values)}


def next_unfilled(rows: Rows, ranges: Ranges, limit: int) -> list[tuple[int, str, str | None]]:
    """The (id, text, section trail) of the `limit` lowest chunks lacking their
    contextual vector."""
    if not ranges:
        return []
    condition, values = in_ranges(ranges)
    found = rows(
        f"SELECT id, text, section FROM chunks WHERE {condition} ORDER BY id LIMIT :limit",
        {**values, "limit": limit},
    )
    return [(int(i), text, section) for i, text, section in found]


def filled_with_keys(rows: Rows, ranges: Ranges, keys: list[str], dialect: str) -> dict[str, int]:
    """One chunk id (the lowest) for each of these content keys that a chunk holding
    its contextual vector has."""
    inside, values = in_ranges(ranges)
    found: dict[str, int] = {}
    for some in batches(keys):
        keyed, keyed_values = among("content_key", some, dialect, "k")
        found.update(
            (key, int(chunk_id))
            for key, chunk_id in rows(
                f"SELECT content_key, min(id) FROM chunks WHERE {keyed} AND NOT {inside} "
                "GROUP BY content_key",
                {**values, **keyed_values},
            )
        )
    return found


def note_fill(report: VerifyReport, unfilled: int) -> None:
    """`verify`: count the passages the fill has yet to give a contextual vector, and
    say so when there are any (a state the fill publishes, not a problem)."""
    report.counts["unfilled"] = unfilled
    if unfilled:
        report.notes.append(
            f"the fill is incomplete: {unfilled} passages have no contextual vector yet "
            "(found by the lexical and static spaces meanwhile); the next `ctxsearch index` "
            "or `watch` run fills them"
        )

"""A hit's similarity as the terminal table shows it: two digits, never rounded up.

`--min-similarity` cuts on `Hit.similarity` itself, so a value rounded up would show a
dropped hit's similarity as reaching the cut (0.298 as 0.30 under --min-similarity 0.3);
truncated towards minus infinity, the digits shown reach the cut exactly when the hit does.
`similar` shows its score (the same cosine, in contextual mode) to three digits the same way.
"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal


def shown_similarity(similarity: float | None, digits: int = 2) -> str:
    """`similarity` to `digits` digits, rounded down ("" when there is none)."""
    if similarity is None:
        return ""
    step = Decimal(1).scaleb(-digits)
    return str(Decimal(repr(similarity)).quantize(step, rounding=ROUND_FLOOR))

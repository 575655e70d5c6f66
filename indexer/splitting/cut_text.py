"""Passages cut in one text and shown in another, the same but for whitespace.

An HTML page is shown with inline elements in their line (`Use json.dumps() to`), but
its passages are cut where the page's strings each stood on a line of their own
(`indexer.reading.text_layout.Layout.cut`). The two texts hold the same characters but
for whitespace, in the same order, so a place in one is a place in the other: a
character is itself, and a place inside a run of whitespace keeps its distance from the
run's start, up to the run's end in the other text. So passages keep their order and
tile the text shown as they tiled the text cut (`indexer.splitting.passages`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from indexer.splitting.boundaries import SPACE_CODES


def whitespace_map(source: str, target: str) -> Callable[[np.ndarray], np.ndarray]:
    """The function taking offsets in `source` (an array) to the same places in `target`
    (see the module's docstring). Raises ValueError if the two texts differ in anything
    but whitespace."""
    (source_solid, source_codes), (target_solid, target_codes) = _solid(source), _solid(target)
    if not np.array_equal(source_codes, target_codes):
        raise ValueError("the texts differ in more than whitespace")
    # Per run of whitespace k (before solid character k; the last one after them all):
    # where it starts and ends in each text.
    source_starts = np.concatenate([[0], source_solid + 1])
    target_starts = np.concatenate([[0], target_solid + 1])
    target_ends = np.concatenate([target_solid, [len(target)]])

    solid_or_end = np.concatenate([source_solid, [len(source)]])

    def to_target(offsets: np.ndarray) -> np.ndarray:
        run = np.searchsorted(source_solid, offsets, side="left")  # solid characters before
        inside = np.minimum(target_starts[run] + offsets - source_starts[run], target_ends[run])
        # a solid character (and the end) is itself, however long the runs before it
        return np.where(offsets == solid_or_end[run], target_ends[run], inside)

    return to_target


def _solid(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The offsets of the characters of `text` that are not whitespace, and their codes."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.flatnonzero(~np.isin(codes, SPACE_CODES))
    return offsets, codes[offsets]

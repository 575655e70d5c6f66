"""Places in a text cut and in the text shown, the same but for whitespace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.splitting.cut_text import whitespace_map

WORDS = st.lists(st.text("ab.(é😀", min_size=1, max_size=4), min_size=0, max_size=12)
GAPS = st.text(" \n\t\u3000", max_size=3)


@settings(max_examples=300, deadline=None)
@given(WORDS, st.data())
def test_a_place_in_one_text_is_the_same_place_in_the_other(words: list[str], data) -> None:
    """Every character is itself; places keep their order; the end is the end, and so is
    the start of a text that starts with whitespace."""
    source = "".join(data.draw(GAPS) + word for word in words) + data.draw(GAPS)
    target = "".join(data.draw(GAPS) + word for word in words) + data.draw(GAPS)
    to_target = whitespace_map(source, target)
    places = to_target(np.arange(len(source) + 1))
    assert places[-1] == len(target)
    assert places[0] == 0 or not source[:1].isspace()
    assert np.all(np.diff(places) >= 0)
    for offset, character in enumerate(source):
        if not character.isspace():
            assert target[places[offset]] == character
            # the same character: as many solid characters before it in both texts
            assert len("".join(source[:offset].split())) == len(
                "".join(target[: places[offset]].split())
            )


def test_texts_that_differ_in_more_than_whitespace_are_refused() -> None:
    with pytest.raises(ValueError, match="more than whitespace"):
        whitespace_map("Use\njson", "Use jsom")
    with pytest.raises(ValueError, match="more than whitespace"):
        whitespace_map("Use\njson", "Use json.")

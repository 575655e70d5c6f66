"""Text shown to people: terminal-safe escapes, and JSON that stays exact (issue 12, item 16)."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.paths import display_path
from search.text import json_text, terminal_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain/name.md", "plain/name.md"),
        ("café 北京 😀 👨‍👩‍👧.md", "café 北京 😀 👨‍👩‍👧.md"),  # zero-width joiners stay
        ("\x1b[31mred.md", "\\x1b[31mred.md"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x00\x7f\x9b", "\\x00\\x7f\\x9b"),
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
        ("\u2066\u2069\u200e\u200f\u061c\u2028", "\\u2066\\u2069\\u200e\\u200f\\u061c\\u2028"),
        ("bad-\udcff\udcfe-name.txt", "bad-\\xff\\xfe-name.txt"),  # bytes that were not UTF-8
        ("\ud800", "\\ud800"),
    ],
)
def test_terminal_text_shows_controls_as_escapes(raw, shown):
    assert terminal_text(raw) == shown
    shown.encode("utf-8")  # always printable on a UTF-8 terminal


def test_display_path_is_terminal_safe():
    assert display_path("/tmp/\x1b[2Jgone.md") == "/tmp/\\x1b[2Jgone.md"


ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF))


@given(st.dictionaries(ANY_TEXT, ANY_TEXT, max_size=4), st.sampled_from([None, 2]))
def test_json_text_decodes_to_exactly_the_value_and_is_terminal_safe(value, indent):
    text = json_text({"path": value}, indent=indent)
    assert json.loads(text) == {"path": value}
    text.encode("utf-8")  # lone surrogates are escaped, not written
    lines = text.split("\n")  # the indentation's own line breaks aside,
    assert all(terminal_text(line) == line for line in lines)  # nothing a terminal acts on

"""What a query may be, checked in the library so Python, the CLI and HTTP agree: types,
bounds past 64 bits, very long text, and text that draws nothing."""

import numpy as np
import pytest

from indexer import CtxsearchError, InvalidQuery
from search import Searcher
from search.limits import MAX_DOCUMENT_ID, MAX_K, MAX_QUERY_CHARS, has_visible_text


@pytest.fixture(scope="module")
def searcher(sample_index):
    with Searcher(sample_index) as opened:
        yield opened


@pytest.mark.parametrize(
    ("k", "message"),
    [
        (2.5, "k must be a whole number of results, not 2.5"),
        (2.0, "k must be a whole number of results"),
        (True, "k must be a whole number of results, not True"),
        ("3", "k must be a whole number of results, not '3'"),
        (None, "k must be a whole number of results, not None"),
        (0, "k must be a positive number of results"),
        (MAX_K + 1, f"k must be at most {MAX_K}"),
        (2**61, f"k must be at most {MAX_K}"),
        (3_000_000_000_000_000_000, f"k must be at most {MAX_K}"),
        (10**30, f"k must be at most {MAX_K}"),
    ],
)
def test_k_of_a_wrong_type_or_out_of_bounds_is_a_typed_error(searcher, k, message):
    with pytest.raises(InvalidQuery, match=message) as raised:
        searcher.search("bank", k=k, mode="lexical")
    assert isinstance(raised.value, CtxsearchError)


def test_k_at_the_maximum_and_numpy_integers_are_fine(searcher):
    assert len(searcher.search("bank", k=MAX_K, mode="lexical").results) > 0
    assert len(searcher.search("bank", k=np.int64(2), mode="lexical").results) == 2


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": b"bank"}, "the query must be text (str), not bytes"),
        ({"query": None}, "the query must be text (str), not NoneType"),
        ({"query": ["bank"]}, "the query must be text (str), not list"),
        ({"query": "bank", "mode": 3}, "unknown mode 3"),
        ({"query": "bank", "all_chunks": "yes"}, "all_chunks must be True or False"),
    ],
)
def test_other_wrong_types_are_typed_errors(searcher, arguments, message):
    with pytest.raises(InvalidQuery) as raised:
        searcher.search(**{"mode": "lexical", **arguments})
    assert message in str(raised.value)


@pytest.mark.parametrize(
    "document_id", ["x", "1", 1.0, True, None, 0, -1, MAX_DOCUMENT_ID + 1, 2**64, -(2**63) - 1]
)
def test_a_document_id_of_a_wrong_type_or_out_of_range_is_a_typed_error(searcher, document_id):
    with pytest.raises(InvalidQuery):
        searcher.document(document_id)


def test_the_largest_document_id_is_just_not_found(searcher):
    from indexer import DocumentNotFound

    with pytest.raises(DocumentNotFound, match=f"no document with id {MAX_DOCUMENT_ID}"):
        searcher.document(MAX_DOCUMENT_ID)
    with pytest.raises(DocumentNotFound):
        searcher.document(np.int64(MAX_DOCUMENT_ID))


def test_a_query_over_the_length_cap_is_refused(searcher):
    longest = ("bank " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
    assert searcher.search(longest, k=3, mode="lexical").results
    with pytest.raises(InvalidQuery, match=f"the most is {MAX_QUERY_CHARS:,}"):
        searcher.search(longest + "x", k=3, mode="lexical")
    with pytest.raises(InvalidQuery, match="1,000,000 characters long"):
        searcher.search("b" * 1_000_000, k=3, mode="hybrid")


INVISIBLE = [
    "\u200b",  # zero-width space
    "\u200b\u200c\u200d\u2060\ufeff",  # zero-width non-joiner, joiner, word joiner, BOM
    "\x00\x01\x1b\x7f",  # control characters
    "\x85\x9b",  # C1 controls
    "\u202e\u2066\u200e",  # direction overrides and marks
    "\u00ad",  # soft hyphen
    " \t\u00a0\u3000\u2028",  # spaces and separators
    "\u0301\ufe0f",  # a lone combining accent and a variation selector
    "\u3164\u2800",  # Hangul filler, blank Braille pattern
    "\ue000\U000f0000",  # private use
    "\u0378",  # unassigned
]


@pytest.mark.parametrize("query", INVISIBLE)
@pytest.mark.parametrize("mode", ["lexical", "contextual", "static", "hybrid"])
def test_a_query_of_invisible_characters_only_is_empty(searcher, query, mode):
    with pytest.raises(InvalidQuery, match="the query is empty"):
        searcher.search(query, mode=mode)


@pytest.mark.parametrize("query", ["a", "7", "?", "€", "北", "😀", "é", "bank\u200b", "\x1bbank"])
def test_one_visible_character_is_enough(query):
    assert has_visible_text(query)


def test_a_lone_surrogate_is_refused_not_a_traceback(searcher):
    """What Python makes of a command-line argument that is not valid UTF-8."""
    for mode in ("lexical", "contextual"):
        with pytest.raises(InvalidQuery, match="not valid Unicode text"):
            searcher.search("bank\udcff", mode=mode)

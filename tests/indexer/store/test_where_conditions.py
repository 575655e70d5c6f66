"""`where` conditions beyond equality, on every store: comparisons on numbers and ISO
dates, `!=`, and a key given twice (equalities ORed, comparisons ANDed)."""

from __future__ import annotations

import pytest

from indexer.errors import InvalidQuery
from indexer.store.filters import make_filter
from tests.indexer.store.test_store_contract import new_document, new_record, new_store

RECORDS = {
    "a": {"year": 2019, "group": 0, "day": "2023-01-15", "lang": "en"},
    "b": {"year": 2020.0, "group": 1, "day": "2023-06-30T08:00:00", "lang": "fr"},
    "c": {"year": "2022", "group": 2, "day": "2024-02-29", "lang": "en"},
    "d": {"year": 2024, "group": 2, "day": "not a date", "lang": "de"},
    "e": {"year": "soon", "group": "0", "day": "2025-12-01"},
}


@pytest.fixture
def store(any_index):
    store = new_store(any_index)
    with store.writer(), store.change() as change:
        change.add_documents([new_document("/docs/file.txt", ["a file"], 9)])
        change.add_documents(
            [
                new_record(name, [name], metadata, n)
                for n, (name, metadata) in enumerate(RECORDS.items())
            ]
        )
    yield store
    store.close()


def matching(store, *where) -> set[str]:
    with store.snapshot() as snapshot:
        found = snapshot.allowed_chunks(make_filter(where=list(where) if where else None))
        chunks = snapshot.chunks(found.tolist())
    return {chunk.path.removeprefix("record:") for chunk in chunks.values()}


def test_numbers_compare_as_numbers_and_text_that_is_no_number_is_left_out(store):
    assert matching(store, "year>2020") == {"c", "d"}  # "2022" spells a number
    assert matching(store, "year>=2020") == {"b", "c", "d"}
    assert matching(store, "year<2020.0") == {"a"}
    assert matching(store, "year<=2.02e3") == {"a", "b"}
    assert matching(store, "year!=2020") == {"a", "c", "d", "e"}  # has the key, not 2020


def test_iso_dates_compare_as_dates(store):
    assert matching(store, "day>=2023-06-30") == {"b", "c", "e"}  # the day of a time counts
    assert matching(store, "day<2024-01-01") == {"a", "b"}
    assert matching(store, "day>2023-06-30T07:00") == {"b", "c", "e"}


def test_a_key_given_twice_means_either_value_and_comparisons_mean_both(store):
    assert matching(store, "group=0", "group=2") == {"a", "c", "d", "e"}
    assert matching(store, "year>=2020", "year<2024") == {"b", "c"}
    # equalities on one key ORed, ANDed with that key's comparisons and with other keys
    assert matching(store, "group=1", "group=2", "year<2024") == {"b", "c"}
    assert matching(store, "group=0", "group=2", "lang=en") == {"a", "c"}
    assert matching(store, "lang!=en", "lang!=fr") == {"d"}


def test_the_mapping_form_takes_lists_and_operators(store):
    with store.snapshot() as snapshot:
        chunks = snapshot.chunks(
            snapshot.allowed_chunks(
                make_filter(where={"group": [0, 2], "year": {">=": 2020, "<": 2024}})
            ).tolist()
        )
    assert {c.path.removeprefix("record:") for c in chunks.values()} == {"c"}


@pytest.mark.parametrize(
    "condition",
    [
        "year>>2",
        ">5",
        "year=",
        "year=>5",
        "year<>5",
        "year!5",
        "year==5",
        "year>",
        "lang>en",
        "year>=abc",
    ],
)
def test_a_malformed_condition_is_refused_not_read_as_a_key(condition):
    with pytest.raises(InvalidQuery) as raised:
        make_filter(where=[condition])
    assert "\n" not in str(raised.value) and condition in str(raised.value)


def test_the_filter_says_every_condition():
    described = make_filter(where=["group=0", "group=2", "year>=2020", "lang=en"]).to_dict()
    assert described["where"] == {"lang": "en"}  # the lone equalities, as before
    assert described["where_conditions"] == ["group=0", "group=2", "lang=en", "year>=2020"]


@pytest.mark.parametrize("where", [{"lang": []}, {"lang": {"=": []}}, {"nope": []}])
def test_an_empty_list_of_allowed_values_matches_nothing_not_everything(store, where):
    """An app scoping by `{"tenant": allowed}` must see nothing when `allowed` is empty:
    no record and no file."""
    with store.snapshot() as snapshot:
        scope = make_filter(where=where)
        assert snapshot.allowed_chunks(scope).tolist() == []
        assert snapshot.vector_search("contextual", [[1.0, 0, 0, 0]], 10, scope) == [[]]
        assert snapshot.lexical_search("a", 10, scope) == []
        assert not snapshot.has_documents(scope)


@pytest.mark.parametrize(
    "where",
    [{"lang": {}}, {"lang": {"!=": []}}, {"year": {">=": []}}, {"year": {"<": [], "=": 1}}],
)
def test_an_operator_without_a_value_is_refused(where):
    with pytest.raises(InvalidQuery) as raised:
        make_filter(where=where)
    assert "\n" not in str(raised.value) and repr(next(iter(where))) in str(raised.value)


def test_large_numbers_compare_exactly_and_equal_numbers_match(any_index):
    """Not in float64: 1714521600000000001 > 1714521600000000000, and the float 1e16
    equals the integer 10000000000000000, on every store."""
    store = new_store(any_index)
    stamps = {"at": 1714521600000000000, "after": 1714521600000000001, "float": 1e16}
    with store.writer(), store.change() as change:
        change.add_documents(
            [new_record(name, [name], {"ts": ts}, n) for n, (name, ts) in enumerate(stamps.items())]
            + [new_record("int", ["int"], {"ts": 10**16})]
        )
    assert matching(store, "ts>1714521600000000000") == {"after"}
    assert matching(store, "ts<=1714521600000000000") == {"at", "float", "int"}
    assert matching(store, "ts=1714521600000000001") == {"after"}
    assert matching(store, "ts=1e16") == matching(store, "ts=10000000000000000") == {"float", "int"}
    assert matching(store, "ts>99999999999999999999") == set()  # past 64 bits, still exact
    assert matching(store, "ts<1e999") == matching(store, "ts>-1e-999") == {*stamps, "int"}
    store.close()

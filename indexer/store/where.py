"""`where` conditions on records' metadata: what they mean, how they are read, their SQL.

A condition is `KEY OP VALUE` with OP one of `=`, `!=`, `<`, `<=`, `>`, `>=`: text
(`year>=2020`, the command line's `--where`, HTTP's `where=`) or a mapping
(`{"lang": "en", "group": [0, 2], "year": {">=": 2020, "<": 2024}}`, Python and JSON).

- `=` and `!=` type their value as `indexer.records.record` does (a number matches
  equal numbers, text that spells a number also matches that text); `!=` holds for the
  records that have the key with another value.
- `<`, `<=`, `>`, `>=` compare numbers (a stored value that spells a number: 2020,
  2020.0, "2020"; exactly, as decimals: `indexer.store.numbers`) or ISO dates
  (`2024-05-01`, compared with the date of a stored date-time; `2024-05-01T10:00` with
  the whole stored text, a space read as `T`); other stored values never hold. A value
  that is neither is refused.
- The rule for several conditions: the equalities on one key are ORed (`group=0` and
  `group=2`: either group); every other condition is ANDed with them and with each
  other (`year>=2020` and `year<2024`: both), and the keys are ANDed.
- A `where` is a scope, and a scope never widens: an empty list of allowed values
  (`{"tenant": []}`, `{"tenant": {"=": []}}`) matches nothing, not everything; an
  operator without a value (`{"tenant": {}}`, `{"year": {">=": []}}`) is refused.
  Files have no metadata, so any condition leaves them out.

A malformed condition (`year>>2`, `>5`, `year=`, `year=>5`) is `InvalidQuery`, never a
key named `year>`. A key holding `=`, `<`, `>` or `!` can be asked for only in a mapping.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from indexer.errors import InvalidQuery, InvalidRecord
from indexer.records.record import check_key, check_metadata, value_text
from indexer.store.numbers import (
    NUMBER_PATTERN,
    SQLITE_COMPARE_NUMBERS,
    equal_texts,
    integer_bound,
    number_of_value,
    spelt_number,
)

MAX_WHERE_CONDITIONS = 64
OPERATORS = ("=", "!=", "<", "<=", ">", ">=")
EQUALITIES = ("=", "!=")
_CONDITION = re.compile(r"(?P<key>[^=<>!]*)(?P<operator>[=<>!]+)(?P<value>.*)", re.DOTALL)
_ISO_DATE = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?P<time>[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?"
)
# What a stored value must look like to compare as a date, per dialect.
_DATE_PATTERN = {
    "sqlite": "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*",
    "postgresql": "^[0-9]{4}-[0-9]{2}-[0-9]{2}",
}


@dataclass(frozen=True)
class WhereCondition:
    """One checked condition: `texts` for `=` and `!=` (the stored value texts that are
    equal), `number` or `date` for a comparison."""

    key: str
    operator: str
    given: str  # the value as given, as text
    texts: tuple[str, ...] = ()
    number: Decimal | None = None
    date: str | None = None

    @property
    def matches_nothing(self) -> bool:
        """Whether this is an empty list of allowed values."""
        return self.operator == "=" and not self.texts

    def __str__(self) -> str:
        if self.matches_nothing:
            return f"{self.key} in []"
        return f"{self.key}{self.operator}{self.given}"


Condition = tuple[str, dict[str, Any]]  # SQL text and its values
_NOTHING: Condition = ("1 = 0", {})


def where_conditions(where: Any) -> tuple[WhereCondition, ...]:
    """A `where` filter as checked conditions, sorted: from `key OP value` strings, one
    string, or a mapping (see the module doc). `InvalidQuery` for anything else."""
    if where is None:
        return ()
    if isinstance(where, str):
        where = [where]
    conditions: list[WhereCondition] = []
    if isinstance(where, Mapping):
        for key, value in where.items():
            conditions += _mapped(key, value)
    elif isinstance(where, (list, tuple)):
        conditions = [_spelt(item) for item in where]
    else:
        raise InvalidQuery(f"where must be an object of key: value pairs, not {where!r}")
    if len(conditions) > MAX_WHERE_CONDITIONS:
        raise InvalidQuery(f"at most {MAX_WHERE_CONDITIONS} where filters")
    return tuple(sorted(set(conditions), key=lambda item: (item.key, item.operator, item.given)))


def _spelt(item: Any) -> WhereCondition:
    """A condition from its text, `key OP value`."""
    if not isinstance(item, str):
        raise InvalidQuery(f"a where filter is key=value (or key>=value ...), not {item!r}")
    found = _CONDITION.fullmatch(item)
    if found is None:
        raise InvalidQuery(
            f"a where filter is key=value, not {item!r} (or key!=value, key<value, "
            "key<=value, key>value, key>=value)"
        )
    key, operator, value = found["key"], found["operator"], found["value"]
    if operator not in OPERATORS:
        raise InvalidQuery(
            f"where {item!r}: unknown operator {operator!r} (use =, !=, <, <=, > or >=)"
        )
    if not key.strip():
        raise InvalidQuery(f"where {item!r}: the key is missing (key{operator}value)")
    if not value:
        raise InvalidQuery(f"where {item!r}: the value is missing (key{operator}value)")
    return _condition(key, operator, value, spelt=True)


def _mapped(key: Any, value: Any) -> list[WhereCondition]:
    """The conditions of one key of a mapping: a value, a list of values (any of them;
    none: nothing matches), or an object of operators and values."""
    if isinstance(value, Mapping):
        if not value:
            raise InvalidQuery(
                f"where {key!r}: {{}} has no operator and value "
                '(give a value, a list of values, or e.g. {">=": 2020})'
            )
        found = []
        for operator, operand in value.items():
            if operator not in OPERATORS:
                raise InvalidQuery(
                    f"where {key!r}: unknown operator {operator!r} (use =, !=, <, <=, > or >=)"
                )
            operands = operand if isinstance(operand, list) else [operand]
            if not operands and operator != "=":
                raise InvalidQuery(f"where {key!r}: {operator} [] has no value to compare with")
            found += _allowed(key, operator, operands)
        return found
    if isinstance(value, list):
        return _allowed(key, "=", value)
    return [_condition(key, "=", value, spelt=False)]


def _allowed(key: Any, operator: str, values: list[Any]) -> list[WhereCondition]:
    """The conditions of `key OP` each value; for `=` and no value, the condition that
    nothing meets (an empty list of allowed values)."""
    if values:
        return [_condition(key, operator, each, spelt=False) for each in values]
    try:
        check_key(key, "where")
    except InvalidRecord as error:
        raise InvalidQuery(str(error)) from None
    return [WhereCondition(key, "=", "[]")]


def _condition(key: Any, operator: str, value: Any, spelt: bool) -> WhereCondition:
    """A checked condition; `spelt`: the value came as text (it may spell a number)."""
    try:
        checked = check_metadata({key: value}, "where")[key]
    except InvalidRecord as error:
        raise InvalidQuery(str(error)) from None
    given = value_text(checked)
    number = _number(checked, spelt or operator not in EQUALITIES)
    if operator in EQUALITIES:
        texts = (given, *(equal_texts(number) if number is not None else ()))
        return WhereCondition(key, operator, given, tuple(dict.fromkeys(texts)))
    written = f"{key}{operator}{given}"
    if isinstance(checked, bool):
        raise InvalidQuery(f"where {written}: {operator} compares numbers or ISO dates")
    if number is not None:
        return WhereCondition(key, operator, given, number=number)
    date = _iso_date(checked)
    if date is None:
        raise InvalidQuery(
            f"where {written}: {operator} compares numbers or ISO dates (2024-05-01), "
            f"not {checked!r}"
        )
    return WhereCondition(key, operator, given, date=date)


def _number(value: str | int | float | bool, read_text: bool) -> Decimal | None:
    """The number a checked value is (a string's only when `read_text`), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return number_of_value(value)
    return spelt_number(value) if read_text else None


def _iso_date(text: str) -> str | None:
    """An ISO date (or date-time, a space read as `T`) as the text compared, or None."""
    found = _ISO_DATE.fullmatch(text.strip())
    if found is None:
        return None
    try:
        datetime.date.fromisoformat(found["date"])
    except ValueError:
        return None
    return found["date"] + (found["time"] or "").replace(" ", "T", 1)


def metadata_sql(conditions: tuple[WhereCondition, ...], dialect: str) -> list[Condition]:
    """The SQL conditions on `documents` of `conditions` (ANDed by the caller): one for
    the equalities of each key (ORed), one for each other condition."""
    parts: list[Condition] = []
    keys = list(dict.fromkeys(condition.key for condition in conditions))
    for n, key in enumerate(keys):
        own = [condition for condition in conditions if condition.key == key]
        equalities = [item for item in own if item.operator == "="]
        texts = [text for item in equalities for text in item.texts]
        if texts:
            values = {f"f_key{n}_{m}": text for m, text in enumerate(dict.fromkeys(texts))}
            marks = ", ".join(":" + name for name in values)
            parts.append(_of_key(n, f"value IN ({marks})", key, values))
        elif equalities:  # only empty lists of allowed values
            parts.append(_NOTHING)
        for m, condition in enumerate(item for item in own if item.operator != "="):
            parts.append(_comparison(n, m, key, condition, dialect))
    return parts


def _of_key(n: int, test: str, key: str, values: dict[str, Any]) -> Condition:
    return (
        "documents.id IN (SELECT document_id FROM record_metadata "
        f"WHERE key = :f_key{n} AND {test})",
        {f"f_key{n}": key, **values},
    )


def _comparison(n: int, m: int, key: str, condition: WhereCondition, dialect: str) -> Condition:
    name = f"f_cmp{n}_{m}"
    if condition.operator == "!=":
        values = {f"{name}_{i}": text for i, text in enumerate(condition.texts)}
        marks = ", ".join(":" + each for each in values)
        return _of_key(n, f"value NOT IN ({marks})", key, values)
    operator = condition.operator
    if condition.number is not None:  # exactly: see `indexer.store.numbers`
        values: dict[str, Any] = {name: str(condition.number)}
        if dialect == "sqlite":
            integer = "CAST(CAST(value AS INTEGER) AS TEXT) = value"  # a 64-bit integer's text
            test = (
                f"CASE WHEN {integer} THEN CAST(value AS INTEGER) {operator} :{name}_whole "
                f"ELSE {SQLITE_COMPARE_NUMBERS}(value, :{name}) {operator} 0 END"
            )
            values[f"{name}_whole"] = integer_bound(condition.number, operator)
        else:
            number = f"CASE WHEN value ~ :{name}_p THEN CAST(value AS numeric) END"
            test = f"{number} {operator} CAST(:{name} AS numeric)"
            values[f"{name}_p"] = f"^{NUMBER_PATTERN}$"
        return _of_key(n, test, key, values)
    assert condition.date is not None
    # A date alone compares with the stored value's date; a date-time with all of it.
    stored = "substr(value, 1, 10)" if len(condition.date) == 10 else "replace(value, ' ', 'T')"
    if dialect == "sqlite":
        test = f"value GLOB :{name}_p AND {stored} {operator} :{name}"
    else:  # byte order, whatever the database's collation
        test = f'value ~ :{name}_p AND {stored} COLLATE "C" {operator} :{name}'
    values = {name: condition.date, f"{name}_p": _DATE_PATTERN[dialect]}
    return _of_key(n, test, key, values)

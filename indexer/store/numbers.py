"""Numbers in `where` conditions, compared exactly, the same way on every store.

A record's metadata value is kept as text (`indexer.records.record.value_text`), so a
number is the decimal that text spells: an int its digits, a float the shortest text
that reads back as it (what its JSON shows: `0.1`, `1e+16`), a string that spells a
number that number. A text spells a number when it is a JSON number with at most three
exponent digits (`NUMBER_PATTERN`): within what PostgreSQL's `numeric` reads, and a
longer exponent is no value an app means. Nothing goes through float64 on the way, so
`1714521600000000001 > 1714521600000000000` holds, and the float `1e16` equals the
int `10000000000000000`.

- PostgreSQL compares `numeric`s (exact decimals).
- SQLite has no exact decimal type: a value that is a 64-bit integer compares as one
  with the whole number next to the condition's (`integer_bound`), and any other value
  through `compare_numbers`, a Python function each read connection registers under the
  name `SQLITE_COMPARE_NUMBERS`.
- `=` stays a lookup of texts in the index on (key, value): `equal_texts` are the texts
  a stored int or float equal to the number has.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from functools import lru_cache

from indexer.records.record import value_text

NUMBER_PATTERN = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]{1,3})?"
SQLITE_COMPARE_NUMBERS = "ctxsearch_compare_numbers"
_NUMBER = re.compile(NUMBER_PATTERN)
_INT64 = range(-(2**63), 2**63)


def spelt_number(text: object) -> Decimal | None:
    """The number a text spells (see the module doc), or None."""
    if not isinstance(text, str) or not _NUMBER.fullmatch(text):
        return None
    return Decimal(text)


def number_of_value(value: int | float) -> Decimal:
    """The number of an int or float value: the decimal its stored text spells."""
    return Decimal(value_text(value))


def equal_texts(number: Decimal) -> tuple[str, ...]:
    """The stored texts of the ints and floats equal to `number` (none, one or two:
    `1e16` is stored as `1e+16` when a float, `10000000000000000` when an int)."""
    texts = []
    if number == number.to_integral_value() and int(number) in _INT64:
        texts.append(value_text(int(number)))
    nearest = float(number)  # inf past the range of floats
    if math.isfinite(nearest) and number_of_value(nearest) == number:
        texts.append(value_text(nearest))
    return tuple(dict.fromkeys(texts))


def integer_bound(number: Decimal, operator: str) -> int | float:
    """What a whole number x compares with in place of `number` under `operator`, to the
    same result: x > n iff x > floor(n), x <= n iff x <= floor(n), x >= n iff x >= ceil(n),
    x < n iff x < ceil(n). Past 64 bits, an infinity (SQLite compares an integer with a
    float exactly; it cannot bind a larger integer)."""
    rounding = ROUND_FLOOR if operator in (">", "<=") else ROUND_CEILING
    whole = int(number.to_integral_value(rounding))
    if whole in _INT64:
        return whole
    return math.inf if whole > 0 else -math.inf


def compare_numbers(value: object, number: str) -> int | None:
    """SQLite's comparison of a stored value with a condition's number (its text): -1,
    0 or 1, or None (SQL NULL: the condition does not hold) if the value is no number."""
    stored = spelt_number(value)
    if stored is None:
        return None
    wanted = _decimal(number)
    return (stored > wanted) - (stored < wanted)


@lru_cache(maxsize=64)
def _decimal(text: str) -> Decimal:
    """A condition's number, read once per statement rather than once per row."""
    return Decimal(text)

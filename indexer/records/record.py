"""Records from apps: `{id, text, metadata}` checked once, and how they are stored.

An app that embeds ctxsearch holds records, not files. A record is a document of the
index like a file's (same tables, chunks and spaces), stored under the path
`record:ID` (no file path starts so: they are absolute), with its metadata kept as JSON
and, for `where` filters, one text value per key:

- a string is itself (case and spaces count);
- a boolean is `true` or `false`;
- a number is its shortest decimal form (`2020`, `2020.0` -> `2020`; `0.5`).

A `where` value is typed one way wherever it comes from: a JSON number, or text (the
command line's `--where`, HTTP's `where=`) that spells a JSON number, is that number and
matches any equal number (`2020`, `2020.0` and `2.02e3` match a stored 2020 or 2020.0);
text also matches the string it spells (`year=2020.0` matches the string "2020.0" too);
a JSON string is only that string. As values are kept as text, `year=2020` matches the
number 2020 and the string "2020". `indexer.store.where` reads the conditions of a `where`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from indexer.errors import InvalidRecord

RECORD_PREFIX = "record:"
MAX_RECORD_ID_CHARS = 256
MAX_RECORD_TEXT_CHARS = 1_000_000
MAX_METADATA_KEYS = 64
MAX_METADATA_KEY_CHARS = 100
# PostgreSQL's b-tree (key, value) index takes entries up to 2,704 bytes.
MAX_METADATA_VALUE_CHARS = 500
_FIELDS = {"id", "text", "metadata"}
_INT_RANGE = 2**63
_JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class Record:
    """A checked record: its id, its text, and its flat metadata."""

    id: str
    text: str
    metadata: dict[str, str | int | float | bool] = field(default_factory=dict)

    @property
    def path(self) -> str:
        """The path the index stores it under."""
        return record_path(self.id)


def record_path(record_id: str) -> str:
    """The stored path of a record."""
    return RECORD_PREFIX + record_id


def record_id_of(path: str) -> str | None:
    """The record id of a stored path, or None for a file."""
    return path[len(RECORD_PREFIX) :] if path.startswith(RECORD_PREFIX) else None


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """Metadata as the JSON text the index keeps (keys sorted)."""
    return json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, allow_nan=False)


def value_text(value: str | int | float | bool) -> str:
    """A metadata (or `where`) value as the text filters compare (see the module doc)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    return value


def check_records(values: Iterable[Any], label: str = "record") -> list[Record]:
    """Checked records, numbered from 1 in errors (`InvalidRecord`: one line naming the
    record, e.g. `record 3: the text must be a non-empty string`); an id given twice is
    refused too."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise InvalidRecord("give a list of records, each {id, text, metadata}")
    checked: list[Record] = []
    seen: dict[str, int] = {}
    for number, value in enumerate(values, start=1):
        record = check_record(value, f"{label} {number}")
        if record.id in seen:
            raise InvalidRecord(
                f"{label} {number}: the id {record.id!r} is also {label} {seen[record.id]}"
            )
        seen[record.id] = number
        checked.append(record)
    return checked


def check_record(value: Any, where: str = "the record") -> Record:
    """One checked record (`InvalidRecord` naming `where` otherwise)."""
    if isinstance(value, Record):
        return value
    if not isinstance(value, Mapping):
        raise InvalidRecord(f"{where}: a record must be an object with id, text and metadata")
    unknown = sorted(str(key) for key in value if key not in _FIELDS)
    if unknown:
        raise InvalidRecord(
            f"{where}: unknown field {unknown[0]!r} (a record has id, text and metadata)"
        )
    record_id = check_record_id(value.get("id"), where)
    text = value.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidRecord(f"{where}: the text must be a non-empty string")
    if len(text) > MAX_RECORD_TEXT_CHARS:
        raise InvalidRecord(
            f"{where}: the text is {len(text):,} characters long; the most is "
            f"{MAX_RECORD_TEXT_CHARS:,}"
        )
    _check_characters(text, f"{where}: the text")
    metadata = value.get("metadata")
    return Record(record_id, text, check_metadata({} if metadata is None else metadata, where))


def read_jsonl(stream: IO[bytes], name: str) -> list[Record]:
    """The records of a JSON-lines file, one object a line (blank lines skipped); the
    first bad line raises `InvalidRecord` naming the file and its line number."""
    records: list[Record] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(stream, start=1):
        where = f"{name} line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidRecord(f"{where}: not valid UTF-8") from None
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as error:
            reason = getattr(error, "msg", "nested too deeply")
            raise InvalidRecord(f"{where}: not a JSON object ({reason})") from None
        record = check_record(value, where)
        if record.id in seen:
            raise InvalidRecord(f"{where}: the id {record.id!r} is also on line {seen[record.id]}")
        seen[record.id] = number
        records.append(record)
    return records


def check_record_id(value: Any, where: str = "the record") -> str:
    """A record id: a non-empty string of at most `MAX_RECORD_ID_CHARS` characters."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidRecord(f"{where}: the id must be a non-empty string, not {value!r}")
    if len(value) > MAX_RECORD_ID_CHARS:
        raise InvalidRecord(f"{where}: the id is over {MAX_RECORD_ID_CHARS} characters")
    _check_characters(value, f"{where}: the id")
    return value


def check_record_ids(values: Iterable[Any]) -> list[str]:
    """Record ids to delete (each checked; a repeated id counts once)."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise InvalidRecord("give a list of record ids")
    ids = [check_record_id(value, f"id {number}") for number, value in enumerate(values, 1)]
    return list(dict.fromkeys(ids))


def check_metadata(value: Any, where: str = "the record") -> dict[str, str | int | float | bool]:
    """Flat metadata: string keys, and string, number or boolean values."""
    if not isinstance(value, Mapping):
        raise InvalidRecord(f"{where}: metadata must be an object of key: value pairs")
    if len(value) > MAX_METADATA_KEYS:
        raise InvalidRecord(f"{where}: metadata has over {MAX_METADATA_KEYS} keys")
    checked: dict[str, str | int | float | bool] = {}
    for key, item in value.items():
        check_key(key, where)
        if isinstance(item, bool):
            pass
        elif isinstance(item, int):
            if not -_INT_RANGE <= item < _INT_RANGE:
                raise InvalidRecord(f"{where}: metadata {key!r} is past 64 bits")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidRecord(f"{where}: metadata {key!r} must be a finite number")
        elif isinstance(item, str):
            _check_characters(item, f"{where}: metadata {key!r}")
        else:
            kind = "null" if item is None else type(item).__name__
            raise InvalidRecord(
                f"{where}: metadata {key!r} must be a string, number or boolean, not {kind} "
                "(metadata is flat)"
            )
        if len(value_text(item)) > MAX_METADATA_VALUE_CHARS:
            raise InvalidRecord(
                f"{where}: metadata {key!r} is over {MAX_METADATA_VALUE_CHARS} characters"
            )
        checked[key] = item
    return checked


def number_of(text: Any) -> int | float | None:
    """The number that `text` spells in JSON (an int past 64 bits as a float), or None if
    it spells none, or a number past a float's range, or is not text."""
    if not isinstance(text, str) or not _JSON_NUMBER.fullmatch(text):
        return None
    number = json.loads(text)
    if isinstance(number, int) and not -_INT_RANGE <= number < _INT_RANGE:
        number = float(number)  # a record can hold a number this large only as a float
    return number if math.isfinite(number) else None


def check_key(key: Any, where: str) -> None:
    """A metadata key: a non-empty string without `=`, at most `MAX_METADATA_KEY_CHARS`."""
    if not isinstance(key, str) or not key.strip():
        raise InvalidRecord(f"{where}: a metadata key must be a non-empty string, not {key!r}")
    if "=" in key:
        raise InvalidRecord(f"{where}: a metadata key cannot hold '=' ({key!r})")
    if len(key) > MAX_METADATA_KEY_CHARS:
        raise InvalidRecord(f"{where}: a metadata key is over {MAX_METADATA_KEY_CHARS} characters")
    _check_characters(key, f"{where}: the key {key!r}")


def _check_characters(value: str, what: str) -> None:
    if "\x00" in value:
        raise InvalidRecord(f"{what} holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRecord(f"{what} is not valid Unicode (it holds a lone surrogate)") from None

"""Records from a file: JSON lines, a JSON array, CSV or TSV, each read whole and checked
before anything is written.

- JSON lines: one `{id, text, metadata}` object a line (`read_jsonl`).
- JSON: an array of those objects.
- CSV (Python's `csv` module) and TSV (tab-separated, no quoting: `tsv_rows`): a header
  row naming the columns; the `id` and `text` columns are the record's id and text, as in
  JSON; every other column is a metadata key, its cells typed as a `where` value given as
  text is: a cell that spells a JSON number is that number (`2023`, `0.5`, `1e3`), any
  other is a string (`007`, `en`, `true`); an empty cell leaves the key out of that
  record's metadata. A cell may be as long as a record's text may be, in every format.

The first problem raises `InvalidRecord`: one line naming the file and the line (`item`
for a JSON array's element), e.g. `kb.csv line 3: 2 fields, the header has 3`.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import PurePath
from typing import IO, Any

from indexer.errors import InvalidRecord
from indexer.records.record import Record, check_record, check_records, number_of, read_jsonl
from indexer.records.tsv_rows import tsv_rows

RECORD_FORMATS = ("jsonl", "json", "csv", "tsv")
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}
_EXTENSIONS[".tsv"] = _EXTENSIONS[".tab"] = "tsv"
_RECORD_COLUMNS = ("id", "text")
# `csv.field_size_limit` is one setting of the whole process: changed under this lock only.
_FIELD_LIMIT = threading.Lock()


def record_format(name: str, given: str | None = None) -> str:
    """The format of a records file: `given` (`--format`) if any, else by the name's
    extension, else JSON lines (standard input, an unknown extension)."""
    if given is not None:
        if given not in RECORD_FORMATS:
            raise InvalidRecord(
                f"unknown records format {given!r}: use {', '.join(RECORD_FORMATS)}"
            )
        return given
    return _EXTENSIONS.get(PurePath(name).suffix.lower(), "jsonl")


def read_records(stream: IO[bytes], name: str, form: str) -> list[Record]:
    """The checked records of a file in format `form` (see `RECORD_FORMATS`)."""
    if form == "jsonl":
        return read_jsonl(stream, name)
    text = _text(stream.read(), name)
    if form == "json":
        return _json_records(text, name)
    if form == "tsv":
        return _table_records(tsv_rows(text), name)
    with _fields_up_to(len(text)):
        return _table_records(_csv_rows(text, name), name)


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InvalidRecord(f"{name} line {line}: not valid UTF-8") from None


def _json_records(text: str, name: str) -> list[Record]:
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidRecord(f"{name} line {error.lineno}: not valid JSON ({error.msg})") from None
    except RecursionError:
        raise InvalidRecord(f"{name}: not valid JSON (nested too deeply)") from None
    if not isinstance(values, list):
        kind = "an object" if isinstance(values, dict) else type(values).__name__
        raise InvalidRecord(
            f"{name}: a JSON file of records holds an array of {{id, text, metadata}} objects, "
            f"not {kind}"
        )
    return check_records(values, f"{name} item")


@contextmanager
def _fields_up_to(characters: int) -> Iterator[None]:
    """Let Python's csv read fields of up to `characters` (it refuses any over 131,072
    by default), then set its limit back: a text is refused by the record's own limit,
    in the words JSON lines use, and the process keeps its setting."""
    with _FIELD_LIMIT:
        previous = csv.field_size_limit()
        csv.field_size_limit(max(previous, characters + 1))
        try:
            yield
        finally:
            csv.field_size_limit(previous)


def _csv_rows(text: str, name: str) -> Iterator[tuple[int, list[str]]]:
    """Each row of a CSV text with the number of the line it starts on."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    line = 1
    try:
        for row in reader:
            yield line, row
            line = reader.line_num + 1
    except csv.Error as error:
        raise InvalidRecord(f"{name} line {reader.line_num}: {error}") from None


def _table_records(rows: Iterable[tuple[int, list[str]]], name: str) -> list[Record]:
    records: list[Record] = []
    seen: dict[str, int] = {}
    header: list[str] | None = None
    for line, row in rows:
        if header is None:
            header = _header(row, name)
        elif row:  # a blank line is no record
            record = _row_record(header, row, f"{name} line {line}")
            first = seen.get(record.id)
            if first is not None:
                raise InvalidRecord(
                    f"{name} line {line}: the id {record.id!r} is also on line {first}"
                )
            seen[record.id] = line
            records.append(record)
    return records


def _header(row: list[str], name: str) -> list[str]:
    where = f"{name} line 1"
    columns = [column.strip() for column in row]
    for column in _RECORD_COLUMNS:
        if column not in columns:
            raise InvalidRecord(
                f"{where}: no {column} column (the columns are {', '.join(columns)})"
            )
    for number, column in enumerate(columns):
        if not column:
            raise InvalidRecord(f"{where}: column {number + 1} has no name")
        if columns.count(column) > 1:
            raise InvalidRecord(f"{where}: the column {column} is there twice")
    return columns


def _row_record(header: list[str], row: list[str], where: str) -> Record:
    if len(row) != len(header):
        raise InvalidRecord(f"{where}: {len(row)} fields, the header has {len(header)}")
    cells = dict(zip(header, row, strict=True))
    metadata = {
        column: _typed(cell)
        for column, cell in cells.items()
        if column not in _RECORD_COLUMNS and cell != ""
    }
    return check_record({"id": cells["id"], "text": cells["text"], "metadata": metadata}, where)


def _typed(cell: str) -> Any:
    """A cell as metadata: the number it spells in JSON, or itself."""
    number = number_of(cell)
    return cell if number is None else number

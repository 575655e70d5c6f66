"""Writes over HTTP (`serve --writable`): upsert and delete records, never from a browser.

Off unless the server was started with `--writable`: the endpoints then answer 403.
A write must come from a program, not from a web page: a browser sends `Origin` (and
`Sec-Fetch-*`) with every POST and DELETE, same-origin or not, so any request carrying
one is refused (403), even from the server's own page; a body must be
`application/json`, which no HTML form can send. The writes themselves go through the
server's `search.server.record_writer.RecordWriter`, one at a time; the guard gives a
write its place in the queue before it reads the body (503 when there is none). A body
is parsed and checked before it waits its turn, so a bad one gets its 422 at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from starlette.convertors import Convertor, register_url_convertor

from indexer.errors import CtxsearchError, InvalidRecord
from indexer.records.record import Record, check_record_ids, check_records

RECORDS_PATH = "/records"
# The route of one record: every character of the rest of the path is its id.
RECORD_PATH = RECORDS_PATH + "/{record_id:record_id}"
_BROWSER_HEADERS = ("origin", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest")


class _RecordId(Convertor[str]):
    """The rest of the path, whatever it holds. Starlette's `path` converter is `.*`, which
    stops at a newline, and its route's `$` also matches before a final newline: an id
    sent as `ends%0A` reached the handler as `ends`, another record's id."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("record_id", _RecordId())


class ReadOnlyServer(CtxsearchError):
    """A write reached a server started without `--writable`."""


class BrowserWrite(CtxsearchError):
    """A write came from a web browser (or without a JSON body), and is refused."""


def records_in(body: bytes) -> list[Record]:
    """The records of a JSON body: a list, or `{"records": [...]}` (`InvalidRecord` if
    it holds none, or one that is not a record)."""
    records = check_records(_listed(_json(body), "records"))
    if not records:
        raise InvalidRecord("no records to upsert")
    return records


def ids_in(body: bytes) -> list[str]:
    """The record ids a JSON body lists: a list, or `{"ids": [...]}`."""
    return checked_ids(_listed(_json(body), "ids"))


def checked_ids(values: list[Any]) -> list[str]:
    """`values` as record ids (`InvalidRecord` if there are none, or one is no id)."""
    ids = check_record_ids(values)
    if not ids:
        raise InvalidRecord("no record ids to delete")
    return ids


def _json(body: bytes) -> Any:
    """The body's JSON value (`InvalidRecord` if it is empty or not JSON)."""
    if not body.strip():
        raise InvalidRecord("the body is empty: a write's body is JSON")
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise InvalidRecord("the body is not JSON (it is not UTF-8)") from None
    except json.JSONDecodeError as error:
        raise InvalidRecord(f"the body is not JSON ({error.msg})") from None
    except RecursionError:
        raise InvalidRecord("the body is not JSON that can be read (nested too deeply)") from None


def refuse_browsers(request: Request) -> None:
    """Refuse a write that a web browser sent, or one whose body is not JSON."""
    for header in _BROWSER_HEADERS:
        if header in request.headers:
            raise BrowserWrite(
                f"writes are not accepted from a web browser (the request has {header!r}): "
                "send them from a program"
            )
    if request.method == "POST" or request.headers.get("content-length", "0") != "0":
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise BrowserWrite("a write's body must be JSON (Content-Type: application/json)")


def _listed(body: Any, key: str) -> list[Any]:
    if isinstance(body, Mapping):
        if set(body) != {key}:
            raise InvalidRecord(f'give a list, or an object {{"{key}": [...]}} and nothing else')
        body = body[key]
    if not isinstance(body, list):
        raise InvalidRecord(f'give a list, or an object {{"{key}": [...]}}')
    return body

"""Writes over HTTP (`serve --writable`): upsert and delete records, never from a browser.

Off unless the server was started with `--writable`: the endpoints then answer 403.
A write must come from a program, not from a web page: a browser sends `Origin` (and
`Sec-Fetch-*`) with every POST and DELETE, same-origin or not, so any request carrying
one is refused (403), even from the server's own page; a body must be
`application/json`, which no HTML form can send. Writes share the index's writer lock
with `ctxsearch index` (503 while another process writes); the server's own writes go
one at a time on a thread of their own (`search.server.write_queue`: searches never wait
for them, and a write past the queue's room gets 503), each one atomic change that the
server's searches see once published. A body is checked before it waits its turn, so a
bad one gets its 422 at once.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from fastapi import Request
from starlette.convertors import Convertor, register_url_convertor

from indexer.errors import CtxsearchError, IndexLocked, InvalidRecord
from indexer.runs.progress import Progress
from indexer.runs.record_input import Record, check_record_ids, check_records
from indexer.runs.records import RecordSummary
from indexer.store.base import Target
from search.server.write_queue import WriteQueue

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


class RecordWriter:
    """Upserts and deletes records in the index the server searches, one at a time."""

    def __init__(self, target: Target):
        from indexer.runs.indexer import Indexer

        self.indexer = Indexer(target)
        self.queue = WriteQueue()
        self._load_started = 0.0

    def load_encoders(self) -> None:
        """Load the model and make the write encoders now, so that no write waits for
        them (a write loads a model only if the index was rebuilt with another one)."""
        self.indexer.load_encoders()

    async def upsert(self, body: bytes) -> RecordSummary:
        """Upsert the records of a JSON body: a list, or `{"records": [...]}`."""
        return await self.queue.run(lambda: _records(body), self._upsert)

    async def delete(self, body: bytes) -> RecordSummary:
        """Delete the records whose ids a JSON body lists: a list, or `{"ids": [...]}`."""
        return await self.queue.run(lambda: _ids(_listed(_json(body), "ids")), self._delete)

    async def delete_one(self, record_id: str) -> RecordSummary:
        """Delete the record with this id."""
        return await self.queue.run(lambda: _ids([record_id]), self._delete)

    def _upsert(self, records: list[Record]) -> RecordSummary:
        with _busy_means_retry():
            return self.indexer.upsert_records(records, progress=self._note_model_load)

    def _note_model_load(self, event: Progress) -> None:
        """Say in the server's log when a write has to load a model, and how long it took."""
        if event.stage != "load-model":
            return
        if event.done == 0:
            self._load_started = time.perf_counter()
            _log("a write is loading the model the index needs now")
        else:
            _log(f"the write's model loaded in {time.perf_counter() - self._load_started:.1f}s")

    def _delete(self, ids: list[str]) -> RecordSummary:
        with _busy_means_retry():
            return self.indexer.delete_records(ids)


def _log(message: str) -> None:
    print(f"ctxsearch: {message}", file=sys.stderr, flush=True)


def _records(body: bytes) -> list[Record]:
    records = check_records(_listed(_json(body), "records"))
    if not records:
        raise InvalidRecord("no records to upsert")
    return records


def _ids(values: list[Any]) -> list[str]:
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


@contextmanager
def _busy_means_retry() -> Iterator[None]:
    """`IndexLocked` with advice for an HTTP client: the command line's `--wait` is no
    option here, sending the write again is."""
    try:
        yield
    except IndexLocked as error:
        busy = str(error).removesuffix("; wait for it to finish, or pass --wait")
        raise IndexLocked(f"{busy}; send the write again once it has finished") from error


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

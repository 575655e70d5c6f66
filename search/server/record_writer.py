"""The writer of a writable server: upserts and deletes records in the index it serves,
one at a time, through one `Indexer` and one `WriteQueue`.

Shared by `serve --writable` (`POST` and `DELETE /records`) and `mcp --writable` (the
`upsert_records` and `delete_records` tools). Each write is one atomic change that the
server's searches see once it is published; writes share the index's writer lock with
`ctxsearch index` (`IndexLocked` while another process writes). A caller holds a
`queue.place()` for each write from before it reads the write's input until it answers.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from indexer.errors import IndexLocked
from indexer.records.record import Record
from indexer.runs.progress import Progress
from indexer.runs.record_changes import RecordSummary
from indexer.store.base import Target
from search.server.write_queue import WriteQueue


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

    async def upsert(self, records: Callable[[], list[Record]]) -> RecordSummary:
        """Upsert the records `records()` gives (it parses and checks them, so a bad input
        is refused before it waits its turn)."""
        return await self.queue.run(records, self._upsert)

    async def delete(self, ids: Callable[[], list[str]]) -> RecordSummary:
        """Delete the records whose ids `ids()` gives (it parses and checks them)."""
        return await self.queue.run(ids, self._delete)

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


@contextmanager
def _busy_means_retry() -> Iterator[None]:
    """`IndexLocked` with advice for a server's client: the command line's `--wait` is no
    option there, sending the write again is."""
    try:
        yield
    except IndexLocked as error:
        busy = str(error).removesuffix("; wait for it to finish, or pass --wait")
        raise IndexLocked(f"{busy}; send the write again once it has finished") from error

"""Upsert and delete records from apps, each call one atomic change of the index.

A record is chunked with the model's tokenizer and encoded into every space like a
file, under the path `record:ID` (see `indexer.records.record`). An upsert whose text is
unchanged (same SHA-256) is not encoded again: only a changed metadata is written. A
folder run never sees records (their paths are under no folder), and records never
see files. Both calls take the writer lock like `index_folder` does.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from indexer.errors import InvalidRecord
from indexer.reading.sources import Document
from indexer.records.record import Record, check_record_ids, check_records, metadata_json
from indexer.runs.run import Pending, Run, index_totals
from indexer.store.backends import open_store
from indexer.store.base import Change, StoredRecord, Target


@dataclass
class RecordSummary:
    """What one upsert or delete did.

    `added`: new records; `updated`: records whose text changed (encoded again);
    `metadata_updated`: same text, new metadata (not encoded again); `unchanged`: same
    text and metadata; `deleted`: records removed; `not_found`: ids asked to delete that
    no record has; `chunks`: chunks written for added and updated records; `encoded`: how
    many of them went through the model (the others' vectors were reused: a passage whose
    text the index already holds is not encoded again); `removed_chunks`: chunks of
    deleted records.
    """

    added: int = 0
    updated: int = 0
    metadata_updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    not_found: list[str] = field(default_factory=list)
    chunks: int = 0
    encoded: int = 0
    removed_chunks: int = 0
    total_documents: int = 0
    total_chunks: int = 0
    seconds: float = 0.0
    query_export: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON-ready values."""
        return asdict(self)


def upsert_records(
    run: Run, values: Iterable[Any], wait: bool = False, label: str = "record"
) -> RecordSummary:
    """Add or replace records (`{id, text, metadata}`) in one atomic change, in `run`."""
    started = time.perf_counter()
    records = check_records(values, label)
    if not records:
        raise InvalidRecord("no records to upsert")
    summary = RecordSummary()
    with run.open(wait) as store:
        with store.change() as change:
            if run.settings.index_type is not None:
                change.set_index_type(run.settings.index_type)
            if run.settings.quantize is not None:
                change.set_quantize(run.settings.quantize)
            stored = change.find_records(record.id for record in records)
            changed = []
            for record in records:
                old = stored.get(record.id)
                if old is not None and old.sha256 == _sha256(record.text):
                    if old.metadata_json != metadata_json(record.metadata):
                        change.set_record_metadata(old.document_id, record.metadata)
                        summary.metadata_updated += 1
                    else:
                        summary.unchanged += 1
                else:
                    changed.append((record, old))
            run.encode_and_store(change, _chunked(run, change, changed))
        run.fill(store)
        written = run.stored
        summary.added, summary.updated, summary.chunks, summary.encoded = (
            written.added,
            written.updated,
            written.chunks,
            written.encoded,
        )
        summary.total_documents, summary.total_chunks = index_totals(store)
    summary.query_export = run.export_query_model()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def delete_records(target: Target, ids: Iterable[Any], wait: bool = False) -> RecordSummary:
    """Remove the records with these ids in one atomic change; ids no record has are
    listed in `not_found` (nothing is published when none was found)."""
    started = time.perf_counter()
    wanted = check_record_ids(ids)
    if not wanted:
        raise InvalidRecord("no record ids to delete")
    summary = RecordSummary()
    store = open_store(target)
    try:
        with store.writer(wait), store.change() as change:
            found = change.find_records(wanted)
            summary.removed_chunks = change.remove_documents(
                record.document_id for record in found.values()
            )
        summary.deleted = len(found)
        summary.not_found = [record_id for record_id in wanted if record_id not in found]
        summary.total_documents, summary.total_chunks = index_totals(store)
    finally:
        store.close()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def _chunked(
    run: Run, change: Change, changed: list[tuple[Record, StoredRecord | None]]
) -> Iterator[Pending]:
    """Each new or changed record as a document chunked with the model's tokenizer."""
    if not changed:
        return
    manifest = change.manifest
    run.expect(len(changed), sum(len(record.text.encode()) for record, _old in changed))
    for done, (record, old) in enumerate(changed, start=1):
        data = record.text.encode()
        document = Document(
            path=record.path,  # type: ignore[arg-type]  (a record's path is no file's)
            text=record.text,
            size=len(data),
            mtime_ns=time.time_ns(),
            sha256=hashlib.sha256(data).hexdigest(),
        )
        # Lines and headings of the record's own text, read as plain text.
        chunks = run.chunk(manifest, record.text, "record")
        run.read(done, len(data), len(chunks))
        yield Pending(document, chunks, old.document_id if old else None, record.metadata)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()

"""`verify`: every stored passage holds its file's text at its offsets.

A passage's row is what search shows and what the lexical space indexes, so a row whose
text is not the file's text at its offsets is a lie no other check sees (the spaces agree
with the rows whatever the rows say). The store keeps a file's passages, not its text, so
the text is read again: from each file of this host that is as it was indexed (the same
size and mtime on disk, then the same bytes and extracted text as their stored hashes).
A file changed since, gone or unreadable now, a document of another host and a record
(whose whole text is not kept) cannot be checked; the report's note counts them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import UnreadableFile
from indexer.reading.sources import SourceFile, read_document
from indexer.store.base import VerifyReport
from indexer.store.sql_reads import Rows
from indexer.store.writer_rows import text_sha256

_FILES = (
    "SELECT id, path, size, mtime_ns, sha256, text_sha256 FROM documents "
    "WHERE metadata_json IS NULL AND host = :host ORDER BY id"
)
_PASSAGES = (
    'SELECT ordinal, start, "end", text FROM chunks WHERE document_id = :id ORDER BY ordinal'
)
_NOT_HERE = "SELECT count(*) FROM documents WHERE metadata_json IS NOT NULL OR host != :host"


@dataclass
class _Tally:
    files: int = 0  # read again and compared
    passages: int = 0
    not_as_indexed: int = 0  # changed, gone or unreadable now
    wrong: int = 0  # passages whose text is not the file's at their offsets
    wrong_files: int = 0
    first_wrong: str = ""


def check_passage_texts(rows: Rows, host: str, report: VerifyReport) -> None:
    """Compare each passage of this `host`'s unchanged files with the file's text at its
    offsets; a passage that differs is a problem, and a note says what was compared."""
    tally = _Tally()
    for document_id, path, size, mtime_ns, sha256, text_hash in rows(_FILES, {"host": host}):
        text = _text_as_indexed(Path(path), size, mtime_ns, sha256, text_hash)
        if text is None:
            tally.not_as_indexed += 1
            continue
        tally.files += 1
        wrong = 0
        for ordinal, start, end, stored in rows(_PASSAGES, {"id": document_id}):
            tally.passages += 1
            if text[start:end] != stored:
                wrong += 1
                tally.first_wrong = tally.first_wrong or f"{path} passage {ordinal}"
        tally.wrong += wrong
        tally.wrong_files += bool(wrong)
    [(elsewhere,)] = rows(_NOT_HERE, {"host": host})
    report.counts["passage_texts_checked"] = tally.passages
    report.notes.append(
        f"passage texts compared with {tally.files} files read again ({tally.passages} "
        f"passages); not compared: {tally.not_as_indexed} files changed, gone or unreadable "
        f"since they were indexed, {elsewhere} records and other hosts' documents"
    )
    if tally.wrong:
        report.problems.append(
            f"{tally.wrong} passages of {tally.wrong_files} files do not hold the file's text "
            f"at their offsets (the first: {tally.first_wrong}); `ctxsearch remove` such a "
            "file and index it again"
        )


def _text_as_indexed(
    path: Path, size: int, mtime_ns: int, sha256: str, text_hash: str | None
) -> str | None:
    """The file's text if it is as it was indexed (size, mtime, bytes and text), else None."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    if status.st_size != size or status.st_mtime_ns != mtime_ns:
        return None
    try:
        document = read_document(SourceFile(path, size, mtime_ns))
    except UnreadableFile:
        return None
    if document.sha256 != sha256 or text_hash != text_sha256(document.text):
        return None
    return document.text

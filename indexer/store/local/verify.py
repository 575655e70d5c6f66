"""Check that every part of an embedded index agrees with every other part."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from indexer.errors import CtxsearchError
from indexer.spaces import Space
from indexer.store.base import VerifyReport
from indexer.store.local.bm25 import FTS_TABLE
from indexer.store.local.index_files import DATABASE_FILE, space_files
from indexer.store.local.segments import Segments, named_files
from indexer.store.local.snapshot import LocalSnapshot
from indexer.store.local.sqlite_errors import busy_timeout_ms, is_read_only_error
from indexer.store.local.sqlite_uri import sqlite_uri
from indexer.store.passage_texts import check_passage_texts
from indexer.store.sql_reads import check_offsets
from indexer.store.unfilled import note_fill, unfilled_ids


def verify_folder(
    directory: Path, snapshot: Callable[[], AbstractContextManager[LocalSnapshot]], host: str
) -> VerifyReport:
    """Cross-check SQLite, every FAISS space and the FTS5 space, and the passages' texts
    with their files' (`indexer.store.passage_texts`), in one snapshot."""
    report = VerifyReport(directory=str(directory))
    try:
        with snapshot() as state:
            _check_sql(state, report)
            chunk_ids = {row[0] for row in state.rows("SELECT id FROM chunks", {})}
            report.counts |= {**state.counts(), "generation": state.manifest.generation}
            unfilled = unfilled_ids(state.rows, state.manifest.unfilled)
            note_fill(report, len(unfilled))
            for name, space in state.spaces.items():
                ids = space.ids().tolist()
                report.counts[f"{name}_vectors"] = len(ids)
                report.counts[f"{name}_deltas"] = len(Segments.of(state.manifest, name).deltas)
                if len(ids) != len(set(ids)):
                    report.problems.append(
                        f"{name} space: {len(ids) - len(set(ids))} duplicate ids"
                    )
                held = chunk_ids - unfilled if name == Space.CONTEXTUAL else chunk_ids
                compare(report, f"{name} space", set(ids), held)
            lexical = {row[0] for row in state.rows(f"SELECT rowid FROM {FTS_TABLE}", {})}
            report.counts["lexical_entries"] = len(lexical)
            compare(report, "lexical space", lexical, chunk_ids)
            intact = fts_intact(directory / DATABASE_FILE)
            if intact is None:
                report.notes.append("FTS5 integrity check skipped: the index is read-only here")
            elif not intact:
                report.problems.append("lexical space: FTS5 integrity check failed")
            # Files the manifest does not name are harmless leftovers: the next writer
            # sweeps them. (Those it names were all read, base and deltas, to load.)
            named = named_files(directory, state.manifest)
            report.counts["stray_files"] = sum(
                1 for path, _space, _generation in space_files(directory) if path not in named
            )
            check_passage_texts(state.rows, host, report)
    except CtxsearchError as error:
        report.problems.append(f"the index does not open: {error}")
    return report


def compare(report: VerifyReport, where: str, found: set[int], chunk_ids: set[int]) -> None:
    """Name the chunks that have no entry in a space, and the entries that name no chunk."""
    if missing := chunk_ids - found:
        report.problems.append(f"{where}: {len(missing)} chunks have no entry")
    if extra := found - chunk_ids:
        report.problems.append(f"{where}: {len(extra)} entries name no chunk")


def fts_intact(database: Path) -> bool | None:
    """Whether the FTS index agrees with its content table (FTS5 integrity-check); None
    when it cannot be asked (the check is written as an INSERT, which a read-only
    database refuses, so it runs on a connection that may write)."""
    try:
        connection = sqlite3.connect(sqlite_uri(database), uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        connection.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
        connection.execute(
            f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('integrity-check', 1)"
        )
    except sqlite3.Error as error:
        return None if is_read_only_error(error) else False
    finally:
        connection.close()
    return True


def _check_sql(snapshot: LocalSnapshot, report: VerifyReport) -> None:
    integrity = [row[0] for row in snapshot.rows("PRAGMA integrity_check", {})]
    if integrity != ["ok"]:
        report.problems.append(f"SQLite integrity check: {'; '.join(integrity)}")
    if snapshot.rows("PRAGMA foreign_key_check", {}):
        report.problems.append("chunks whose document does not exist")
    check_offsets(snapshot.rows, report)

"""Check that every part of an embedded index agrees with every other part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.orm import Session

from indexer.errors import CtxsearchError
from indexer.store import records
from indexer.store.base import VerifyReport
from indexer.store.local import fts
from indexer.store.local.layout import space_files

if TYPE_CHECKING:
    from indexer.store.local.store import LocalStore


def verify_store(store: LocalStore) -> VerifyReport:
    """Cross-check SQLite, every FAISS space and the FTS5 space, in one snapshot."""
    report = VerifyReport(directory=store.target)
    try:
        with store.snapshot() as snapshot:
            session = snapshot.session
            _check_sql(session, report)
            chunk_ids = records.chunk_ids(session)
            report.counts |= {**records.counts(session), "generation": snapshot.manifest.generation}
            for name, space in snapshot.spaces.items():
                ids = space.ids().tolist()
                report.counts[f"{name}_vectors"] = len(ids)
                if len(ids) != len(set(ids)):
                    report.problems.append(
                        f"{name} space: {len(ids) - len(set(ids))} duplicate ids"
                    )
                compare(report, f"{name} space", set(ids), chunk_ids)
            lexical = fts.fts_ids(session.connection())
            report.counts["lexical_entries"] = len(lexical)
            compare(report, "lexical space", lexical, chunk_ids)
            intact = fts.fts_intact(session.connection())
            if intact is None:
                report.notes.append("FTS5 integrity check skipped: the index is read-only here")
            elif not intact:
                report.problems.append("lexical space: FTS5 integrity check failed")
            # Files of other generations are harmless leftovers: the next writer sweeps them.
            report.counts["stray_files"] = sum(
                1
                for _path, _space, generation in space_files(store.directory)
                if generation != snapshot.manifest.generation
            )
    except CtxsearchError as error:
        report.problems.append(f"the index does not open: {error}")
    return report


def compare(report: VerifyReport, where: str, found: set[int], chunk_ids: set[int]) -> None:
    """Name the chunks that have no entry in a space, and the entries that name no chunk."""
    if missing := chunk_ids - found:
        report.problems.append(f"{where}: {len(missing)} chunks have no entry")
    if extra := found - chunk_ids:
        report.problems.append(f"{where}: {len(extra)} entries name no chunk")


def _check_sql(session: Session, report: VerifyReport) -> None:
    integrity = session.execute(text("PRAGMA integrity_check")).scalar_one()
    if integrity != "ok":
        report.problems.append(f"SQLite integrity check: {integrity}")
    if session.execute(text("PRAGMA foreign_key_check")).first() is not None:
        report.problems.append("chunks whose document does not exist")
    bad_offsets = session.execute(
        text('SELECT count(*) FROM chunks WHERE start < 0 OR "end" < start')
    ).scalar_one()
    if bad_offsets:
        report.problems.append(f"{bad_offsets} chunks with invalid offsets")

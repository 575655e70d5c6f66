"""Check that every part of an index agrees with every other part."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import text

from indexer.errors import CtxsearchError
from indexer.store.index import StoredIndex
from indexer.store.layout import space_files
from indexer.store.lexical import FTS_TABLE, SqliteLexicalSpace


@dataclass
class VerifyReport:
    """What `verify_index` found: problems (empty when consistent) and what it counted."""

    directory: str
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def consistent(self) -> bool:
        """Whether no problem was found."""
        return not self.problems


def verify_index(directory: Path) -> VerifyReport:
    """Open the index and cross-check SQL, every vector space and the lexical space."""
    report = VerifyReport(directory=str(directory))
    try:
        index = StoredIndex.open(directory)
    except CtxsearchError as error:
        report.problems.append(f"the index does not open: {error}")
        return report
    try:
        _check_sql(index, report)
        chunk_ids = index.metadata.chunk_ids()
        report.counts |= {**index.metadata.counts(), "generation": index.manifest.generation}
        for name, space in index.spaces.items():
            ids = space.ids().tolist()
            report.counts[f"{name}_vectors"] = len(ids)
            if len(ids) != len(set(ids)):
                report.problems.append(f"{name} space: {len(ids) - len(set(ids))} duplicate ids")
            _compare(report, f"{name} space", set(ids), chunk_ids)
        _check_lexical(index, chunk_ids, report)
        # Files of other generations are harmless leftovers: the next writer sweeps them.
        report.counts["stray_files"] = sum(
            1
            for _path, _space, generation in space_files(index.directory)
            if generation != index.manifest.generation
        )
    finally:
        index.close()
    return report


def _compare(report: VerifyReport, where: str, found: set[int], chunk_ids: set[int]) -> None:
    if missing := chunk_ids - found:
        report.problems.append(f"{where}: {len(missing)} chunks have no entry")
    if extra := found - chunk_ids:
        report.problems.append(f"{where}: {len(extra)} entries name no chunk")


def _check_sql(index: StoredIndex, report: VerifyReport) -> None:
    with index.metadata.engine.connect() as connection:
        integrity = connection.execute(text("PRAGMA integrity_check")).scalar_one()
        if integrity != "ok":
            report.problems.append(f"SQLite integrity check: {integrity}")
        if connection.execute(text("PRAGMA foreign_key_check")).first() is not None:
            report.problems.append("chunks whose document does not exist")
        bad_offsets = connection.execute(
            text('SELECT count(*) FROM chunks WHERE start < 0 OR "end" < start')
        ).scalar_one()
        if bad_offsets:
            report.problems.append(f"{bad_offsets} chunks with invalid offsets")


def _check_lexical(index: StoredIndex, chunk_ids: set[int], report: VerifyReport) -> None:
    lexical = SqliteLexicalSpace(index.metadata.engine)
    with index.metadata.engine.connect() as connection:
        rows = {row[0] for row in connection.execute(text(f"SELECT rowid FROM {FTS_TABLE}"))}
    report.counts["lexical_entries"] = len(rows)
    _compare(report, "lexical space", rows, chunk_ids)
    if not lexical.check():
        report.problems.append("lexical space: FTS5 integrity check failed")

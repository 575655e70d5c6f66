"""Check that every part of a PostgreSQL index agrees with every other part."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from sqlalchemy import text

from indexer.errors import CtxsearchError
from indexer.spaces import Space
from indexer.store.base import VerifyReport
from indexer.store.index_types import quantization_for, structure_for
from indexer.store.passage_texts import check_passage_texts
from indexer.store.postgres import vectors
from indexer.store.postgres.snapshot import PostgresSnapshot
from indexer.store.postgres.term_counts import count_problems
from indexer.store.sql_reads import check_offsets
from indexer.store.unfilled import note_fill, unfilled_count


def verify_snapshot(
    target: str, snapshot: Callable[[], AbstractContextManager[PostgresSnapshot]], host: str
) -> VerifyReport:
    """Cross-check rows, vectors, the full-text column and the HNSW indexes, and the
    passages' texts with this `host`'s files (`indexer.store.passage_texts`), in one
    snapshot."""
    report = VerifyReport(directory=target)
    try:
        with snapshot() as state:
            connection, manifest = state.connection, state.manifest
            counts = state.counts()
            report.counts |= {**counts, "generation": manifest.generation}
            check_offsets(state.rows, report)
            unfilled = unfilled_count(state.rows, manifest.unfilled)
            note_fill(report, unfilled)
            for space in manifest.spaces:
                _check_space(connection, space, manifest, counts["chunks"], report)
            lexical = connection.execute(
                text("SELECT count(*) FROM chunks WHERE tsv IS NOT NULL")
            ).scalar_one()
            report.counts["lexical_entries"] = lexical
            if lexical != counts["chunks"]:
                missing = counts["chunks"] - lexical
                report.problems.append(f"lexical space: {missing} chunks have no entry")
            report.problems.extend(count_problems(connection))
            check_passage_texts(state.rows, host, report)
    except CtxsearchError as error:
        report.problems.append(f"the index does not open: {error}")
    return report


def _check_space(connection, space: str, manifest, chunks: int, report: VerifyReport) -> None:  # type: ignore[no-untyped-def]
    width = vectors.vector_width(connection, space)
    if width != manifest.dim_of(space):
        expected = manifest.dim_of(space)
        report.problems.append(f"{space} space: vectors of {width} dimensions, not {expected}")
    held = vectors.count(connection, space)
    report.counts[f"{space}_vectors"] = held
    unfilled = manifest.unfilled if space == Space.CONTEXTUAL else []
    if missing := vectors.chunks_without_vectors(connection, space, unfilled):
        report.problems.append(f"{space} space: {missing} chunks have no entry")
    waiting = report.counts["unfilled"] if space == Space.CONTEXTUAL else 0
    if extra := held - (chunks - missing - waiting):
        report.problems.append(f"{space} space: {extra} entries name no chunk")
    wanted = structure_for(manifest.index_type, held)
    present = vectors.graph_form(connection, space)
    if (wanted == "hnsw") != (present is not None):
        report.problems.append(f"{space} space: expected a {wanted} structure")
    elif present is not None and present != (
        form := quantization_for(manifest.quantize, held, "pgvector")
    ):
        report.problems.append(f"{space} space: a {present} graph, expected {form}")

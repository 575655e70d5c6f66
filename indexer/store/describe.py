"""The JSON `ctxsearch info` prints, the same shape for every backend."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from indexer.records.record import RECORD_PREFIX
from indexer.store.chunk_ranges import in_ranges
from indexer.store.index_types import quantization_for, structure_for

if TYPE_CHECKING:
    from indexer.store.sql_reads import SqlReads

OUTSIDE_ROOTS = "(no root)"
RECORDS = "(records)"  # the row of `ls` that counts records from apps


def folders(
    roots: Iterable[tuple[str, str]], documents: Iterable[tuple[str, str, int, int]]
) -> list[dict[str, Any]]:
    """Each root (`host`, `path`) with the documents and chunks that belong to it, and how
    many of those chunks have their contextual vector (`contextual_passages`: all of
    them, but while a run fills them).

    `documents` are (host, path, chunks, contextual chunks). A document belongs to the
    deepest root of its host that holds it, or that is its file (a root indexed on its
    own keeps its documents from a parent);
    documents under no root (an index from before roots were recorded) are counted
    under `(no root)`, and records from apps under `(records)`.
    """
    counted: dict[tuple[str, str], list[int]] = {key: [0, 0, 0] for key in sorted(set(roots))}
    prefixes: dict[str, list[tuple[str, str]]] = {}
    for host, path in counted:
        prefixes.setdefault(host, []).append(((path.rstrip("/") + "/"), path))
    for host in prefixes:
        prefixes[host].sort(key=lambda item: -len(item[0]))  # deepest first
    for host, path, chunks, contextual in documents:
        owner = next(
            (
                root
                for prefix, root in prefixes.get(host, [])
                if path.startswith(prefix) or path == root
            ),
            None,
        )
        key = (host, owner) if owner is not None else ("", OUTSIDE_ROOTS)
        if path.startswith(RECORD_PREFIX):
            key = ("", RECORDS)
        counts = counted.setdefault(key, [0, 0, 0])
        counts[0] += 1
        counts[1] += chunks
        counts[2] += contextual
    return [
        {
            "root": f"{host}:{path}" if host else path,
            "documents": n,
            "chunks": c,
            "contextual_passages": filled,
        }
        for (host, path), (n, c, filled) in counted.items()
    ]


def describe_tables(
    snapshot: SqlReads, where: str, backend: str, sizes: dict[str, int | None]
) -> dict[str, Any]:
    """`info --json` from a snapshot's tables: where the index is, what it holds, how it
    was built, and what it takes (`sizes`: the backend's files or tables)."""
    rows, manifest = snapshot.rows, snapshot.manifest
    counts = snapshot.counts()
    counts["records"] = int(
        rows("SELECT count(*) FROM documents WHERE metadata_json IS NOT NULL", {})[0][0]
    )
    roots = [
        (host, path) for host, path in rows("SELECT host, path FROM roots ORDER BY host, path", {})
    ]
    unfilled, values = in_ranges(manifest.unfilled, "chunks.id")
    documents = rows(
        "SELECT documents.host, documents.path, count(chunks.id), "
        f"count(CASE WHEN NOT {unfilled} THEN chunks.id END) FROM documents "
        "LEFT JOIN chunks ON chunks.document_id = documents.id GROUP BY documents.id",
        values,
    )
    return {
        "index": where,
        "backend": backend,
        **counts,
        "roots": [f"{host}:{path}" if host else path for host, path in roots],
        "completeness": snapshot.completeness().to_dict(),
        "folders": folders(roots, [(host, path, int(n), int(f)) for host, path, n, f in documents]),
        "vector_structure": structure_for(manifest.index_type, counts["chunks"]),
        "quantization": quantization_for(
            manifest.quantize, counts["chunks"], "pgvector" if "pgvector" in backend else "faiss"
        ),
        "manifest": {
            **asdict(manifest),
            "created_at": _iso(manifest.created_at),
            "updated_at": _iso(manifest.updated_at),
        },
        "files": sizes,
    }


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")

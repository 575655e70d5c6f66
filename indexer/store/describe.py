"""The JSON `ctxsearch info` prints, the same shape for every backend."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

from indexer.store.index_types import structure_for
from indexer.store.manifest import Manifest


def description(
    where: str,
    backend: str,
    manifest: Manifest,
    counts: dict[str, int],
    roots: list[str],
    sizes: dict[str, int | None],
) -> dict[str, Any]:
    """`info --json`: where the index is, what it holds, how it was built, what it takes."""
    return {
        "index": where,
        "backend": backend,
        **counts,
        "roots": roots,
        "vector_structure": structure_for(manifest.index_type, counts["chunks"]),
        "manifest": {
            **asdict(manifest),
            "created_at": _iso(manifest.created_at),
            "updated_at": _iso(manifest.updated_at),
        },
        "files": sizes,
    }


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")

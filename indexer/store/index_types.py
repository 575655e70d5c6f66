"""Which FAISS structure a vector space uses: exact Flat search, or an HNSW graph.

`auto` (the default) searches exactly while a space is small enough for exact search to
answer in a few milliseconds, and switches to HNSW from `HNSW_FROM_VECTORS` on. The
threshold and the HNSW settings come from `ctxsearch bench --faiss` (see the README):
Flat's query time grows with the corpus, HNSW's barely does, at a recall@10 near 1.
This module imports no FAISS, so `info` can use it.
"""

from __future__ import annotations

INDEX_TYPES = ("auto", "flat", "hnsw")
DEFAULT_INDEX_TYPE = "auto"
HNSW_FROM_VECTORS = 100_000

HNSW_NEIGHBOURS = 32  # M: links per node
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128

# An HNSW graph cannot drop nodes; deleted vectors stay as tombstones that searches skip,
# until they make up this share of the graph and the next run rebuilds it without them.
HNSW_REBUILD_TOMBSTONE_SHARE = 0.2


def structure_for(index_type: str, vectors: int) -> str:
    """The structure (`flat` or `hnsw`) a space of `vectors` vectors uses under `index_type`."""
    if index_type not in INDEX_TYPES:
        choices = ", ".join(INDEX_TYPES)
        raise ValueError(f"unknown index type {index_type!r}; choose one of {choices}")
    if index_type == "auto":
        return "hnsw" if vectors >= HNSW_FROM_VECTORS else "flat"
    return index_type

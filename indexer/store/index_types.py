"""Which FAISS structure a vector space uses: exact Flat search, or an HNSW graph, and
whether its vectors are quantized.

`auto` (the default) searches exactly while a space is small enough for exact search to
answer in a few milliseconds, and switches to HNSW from `HNSW_FROM_VECTORS` on. The
threshold and the HNSW settings come from `ctxsearch lab bench --faiss` (see the README):
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


# Quantization of a space's vectors (`ctxsearch index --quantize`): `none` keeps float32
# in memory; on a folder index `int8` keeps one byte a dimension (FAISS scalar quantizer),
# `binary` one bit (the sign); both re-score their best candidates from the float32
# vectors, which stay on disk, memory-mapped. On PostgreSQL the form is the HNSW graph's
# (pgvector): `halfvec` (two bytes a dimension) or `binary` (`binary_quantize`, Hamming
# distance, re-ranked by the float32 column the table keeps). `auto` quantizes from
# `QUANTIZE_FROM_VECTORS` on, to `AUTO_QUANTIZATION` of the backend (see
# docs/performance.md, "Quantized spaces", and docs/postgres.md for the measurements).
QUANTIZATIONS = ("auto", "none", "int8", "binary", "halfvec")
DEFAULT_QUANTIZATION = "none"
QUANTIZE_FROM_VECTORS = HNSW_FROM_VECTORS
QUANTIZED_HNSW_NEIGHBOURS = 16  # M for quantized graphs: the links are most of their memory
# The forms each backend has, and what `auto` becomes on it.
BACKEND_QUANTIZATIONS = {
    "faiss": ("none", "int8", "binary"),
    "pgvector": ("none", "halfvec", "binary"),
}
AUTO_QUANTIZATION = {"faiss": "int8", "pgvector": "halfvec"}


def quantization_for(quantize: str, vectors: int, backend: str = "faiss") -> str:
    """The quantization (`none`, `int8`, `binary` or `halfvec`) of a space of `vectors`
    vectors on `backend` (`faiss` or `pgvector`)."""
    if quantize not in QUANTIZATIONS:
        raise ValueError(
            f"unknown quantization {quantize!r}; choose one of {', '.join(QUANTIZATIONS)}"
        )
    if quantize == "auto":
        return AUTO_QUANTIZATION[backend] if vectors >= QUANTIZE_FROM_VECTORS else "none"
    return quantize


def check_quantization(quantize: str, backend: str, where: str) -> None:
    """Refuse (`ValueError`, one line) a form `backend` does not have."""
    forms = BACKEND_QUANTIZATIONS[backend]
    if quantize != "auto" and quantize not in forms:
        raise ValueError(f"--quantize {quantize}: {where} quantizes as {', '.join(forms)} or auto")


def space_structure(index_type: str, quantize: str, vectors: int) -> str:
    """What a space of `vectors` vectors is stored as: `flat` or `hnsw`, with `-int8` or
    `-binary` when quantized (an empty space is never quantized: codes are trained on
    the vectors)."""
    structure = structure_for(index_type, vectors)
    quantization = quantization_for(quantize, vectors) if vectors else "none"
    return structure if quantization == "none" else f"{structure}-{quantization}"

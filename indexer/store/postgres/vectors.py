"""The PostgreSQL vector spaces: one pgvector table per space, keyed by chunk id.

`space_contextual(chunk_id, embedding vector(dim))`: the chunk id references `chunks`
with ON DELETE CASCADE, so removing a chunk removes its vectors in the same
transaction. The vectors are unit length, so cosine is the inner product: searches
order by `<#>` (negative inner product) and an HNSW index with `vector_ip_ops` serves
them when the space is big enough (the same `index_types` rule as FAISS). Searching
them is `nearest.py`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from sqlalchemy import BigInteger, Column, Connection, MetaData, Table, select, text

from indexer.store import index_types
from indexer.store.chunk_ranges import Ranges, in_ranges
from indexer.store.index_types import (
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_SEARCH,
    HNSW_NEIGHBOURS,
    QUANTIZED_HNSW_NEIGHBOURS,
    quantization_for,
    structure_for,
)
from indexer.store.postgres.database import vector_schema
from indexer.store.postgres.vector_copy import copy_vectors

READ_BATCH = 1000


def table_name(space: str) -> str:
    """The table of a vector space."""
    return f"space_{space}"


def index_name(space: str, quantization: str = "none") -> str:
    """The HNSW index of a vector space's table in a form: float32 (`none`), `halfvec` or
    `binary` (each an index of its own name, so a form is known by the name present)."""
    return f"ix_space_{space}_hnsw" + ("" if quantization == "none" else f"_{quantization}")


GRAPH_FORMS = ("none", "halfvec", "binary")
# How each form's graph is built (m, ef_construction) and how deep it is searched
# (hnsw.ef_search). The halfvec graph is built twice as carefully and searched less deep:
# on 100,000 real static vectors, ef_construction 160 searched at 100 found recall@10
# 0.963 where 80 at 128 found 0.9615, in 0.83x the server's time; its build takes twice
# as long (docs/postgres.md, 2026-12-03). A graph built otherwise (by an older version) is
# built again at the next publish (`restructure`).
GRAPH_BUILD = {
    "none": (HNSW_NEIGHBOURS, HNSW_EF_CONSTRUCTION),
    "halfvec": (QUANTIZED_HNSW_NEIGHBOURS, 160),
    "binary": (QUANTIZED_HNSW_NEIGHBOURS, HNSW_EF_CONSTRUCTION),
}
GRAPH_EF_SEARCH = {"none": HNSW_EF_SEARCH, "halfvec": 100, "binary": HNSW_EF_SEARCH}
# A larger graph needs a deeper walk for the same recall. The halfvec graph's depth grows
# past 100,000 vectors as (size / 100,000) ** 0.38: measured on real static vectors, 200
# SciFact claims, it found recall@10 0.958-0.9625 at 100,000 and ef_search 100, and at
# 1,000,000 0.8625 / 0.9135 / 0.964 / 0.9785 at 100 / 160 / 240 / 400, for p50 2.09 /
# 2.67 / 3.77 / 4.97 ms (docs/reports/2026-12-05-postgres-1m.md); 240 = 100 * 10 ** 0.38.
# The other forms were not measured past 100,000 on PostgreSQL and keep their depth.
DEPTH_GROWS_FROM = 100_000
HALFVEC_DEPTH_GROWTH = 0.38
MAX_GRAPH_EF_SEARCH = 1000  # pgvector's cap on hnsw.ef_search


def graph_ef_search(form: str, size: int) -> int:
    """How deep a graph of `form` (`none`, `halfvec`, `binary`) over `size` vectors is
    walked (hnsw.ef_search)."""
    depth = GRAPH_EF_SEARCH[form]
    if form != "halfvec" or size <= DEPTH_GROWS_FROM:
        return depth
    grown = round(depth * (size / DEPTH_GROWS_FROM) ** HALFVEC_DEPTH_GROWTH)
    return min(MAX_GRAPH_EF_SEARCH, grown)


@lru_cache(maxsize=64)
def space_table(space: str, dim: int) -> Table:
    """The SQLAlchemy table of a space (not part of the ORM models: its width varies)."""
    from pgvector.sqlalchemy import Vector

    return Table(
        table_name(space),
        MetaData(),
        Column("chunk_id", BigInteger, primary_key=True),
        Column("embedding", Vector(dim), nullable=False),
    )


def create_space(connection: Connection, space: str, dim: int) -> None:
    """Create a space's table."""
    connection.execute(
        text(
            f"CREATE TABLE {table_name(space)} ("
            "chunk_id BIGINT NOT NULL PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE, "
            f"embedding {vector_schema(connection)}.vector({dim}) NOT NULL)"
        )
    )


def add_vectors(connection: Connection, space: str, ids: np.ndarray, vectors: np.ndarray) -> None:
    """Insert vectors under their chunk ids (one binary COPY, `vector_copy.py`)."""
    copy_vectors(connection, table_name(space), ids, vectors)


def stored_vectors(
    connection: Connection, space: str, dim: int, ids: list[int]
) -> dict[int, np.ndarray]:
    """The stored vector of each of these chunks that the space holds, by chunk id."""
    table = space_table(space, dim)
    found: dict[int, np.ndarray] = {}
    for first in range(0, len(ids), READ_BATCH):
        batch = [int(i) for i in ids[first : first + READ_BATCH]]
        rows = connection.execute(
            select(table.c.chunk_id, table.c.embedding).where(table.c.chunk_id.in_(batch))
        )
        for chunk_id, embedding in rows:
            found[int(chunk_id)] = np.asarray(embedding, dtype=np.float32)
    return found


def count(connection: Connection, space: str) -> int:
    """How many vectors a space holds."""
    return int(connection.execute(text(f"SELECT count(*) FROM {table_name(space)}")).scalar_one())


def graph_form(connection: Connection, space: str) -> str | None:
    """The form of the space's HNSW index (`none`, `halfvec`, `binary`), None without one."""
    names = {index_name(space, form): form for form in GRAPH_FORMS}
    found = connection.execute(
        text(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexname = ANY(:names)"
        ),
        {"names": list(names)},
    ).scalars()
    forms = [names[name] for name in found]
    return forms[0] if forms else None


def graph_build(connection: Connection, space: str, form: str) -> tuple[int, int] | None:
    """How the space's graph of `form` was built, (m, ef_construction), as its CREATE
    INDEX gave them (None: no such graph, or built without saying)."""
    options = connection.execute(
        text("SELECT reloptions FROM pg_class WHERE oid = to_regclass(:name)"),
        {"name": index_name(space, form)},
    ).scalar()
    given = dict(option.split("=", 1) for option in options or ())
    if "m" not in given or "ef_construction" not in given:
        return None
    return int(given["m"]), int(given["ef_construction"])


def has_graph(connection: Connection, space: str) -> bool:
    """Whether the space's table has an HNSW index (in any form)."""
    return graph_form(connection, space) is not None


def count_up_to(connection: Connection, space: str, limit: int) -> int:
    """How many vectors a space holds, counted no further than `limit`: what a publish
    needs to know (whether `auto` crossed the threshold) at a cost that stops growing
    with the index."""
    held = connection.execute(
        text(f"SELECT count(*) FROM (SELECT 1 FROM {table_name(space)} LIMIT :limit) AS held"),
        {"limit": limit},
    )
    return int(held.scalar_one())


def restructure(
    connection: Connection, space: str, index_type: str, quantize: str = "none"
) -> bool:
    """Create or drop the HNSW index as `index_type` and `quantize` want at this size (a
    graph in another form, or built otherwise than `GRAPH_BUILD` says, is dropped and
    made again as wanted); say if it did."""
    held = count_up_to(connection, space, index_types.HNSW_FROM_VECTORS)
    wanted = structure_for(index_type, held)
    form = quantization_for(quantize, held, "pgvector")
    present = graph_form(connection, space)
    built = graph_build(connection, space, form) if present == form else None
    if wanted == "hnsw" and built == GRAPH_BUILD[form]:
        return False
    if present is not None:
        connection.execute(text(f"DROP INDEX {index_name(space, present)}"))
    if wanted == "flat":
        return present is not None
    vectors = count(connection, space)  # building the graph reads them all anyway
    dim = dim_of(connection, space)
    # pgvector builds fast only while the graph fits in maintenance_work_mem (64 MB by
    # default, a 100,000-vector float32 graph of 384-d vectors needs about 270 MB): raise
    # it for this transaction only.
    connection.execute(
        text("SELECT set_config('maintenance_work_mem', :memory, true)"),
        {"memory": f"{graph_build_megabytes(vectors, dim, form)}MB"},
    )
    connection.execute(text(graph_statement(connection, space, dim, form)))
    return True


def graph_statement(connection: Connection, space: str, dim: int, form: str) -> str:
    """The CREATE INDEX of a space's HNSW graph in `form`: over the float32 column, or an
    expression index over its halfvec cast or its binary quantization (the float32
    column stays, for re-ranking and for `vectors`)."""
    schema = vector_schema(connection)
    key = {
        "none": f"embedding {schema}.vector_ip_ops",
        "halfvec": f"(CAST(embedding AS {schema}.halfvec({dim}))) {schema}.halfvec_ip_ops",
        "binary": f"(CAST({schema}.binary_quantize(embedding) AS bit({dim}))) "
        f"{schema}.bit_hamming_ops",
    }[form]
    neighbours, construction = GRAPH_BUILD[form]
    return (
        f"CREATE INDEX {index_name(space, form)} ON {table_name(space)} USING hnsw ({key}) "
        f"WITH (m = {neighbours}, ef_construction = {construction})"
    )


# The bytes of one graph element's value in each form (pgvector's varlena header: 8).
_VALUE_BYTES = {"none": lambda dim: 8 + 4 * dim, "halfvec": lambda dim: 8 + 2 * dim,
                "binary": lambda dim: 8 + (dim + 7) // 8}  # fmt: skip
# pgvector's in-memory build keeps, per element, its value, 2 m candidates of 16 bytes on
# layer 0 (an element pointer, a distance, a flag), its heap tids and the element itself.
_ELEMENT_BYTES = 256


def graph_build_megabytes(vectors: int, dim: int, form: str = "none") -> int:
    """Memory for building an HNSW graph of `form` in one pass: values, layer-0 links,
    elements, +20% (the upper layers, allocator slack); 3.2 GB for 1,000,000 float32
    384-d vectors at m 32 (capped at 4 GB)."""
    neighbours = GRAPH_BUILD[form][0]
    per_vector = _VALUE_BYTES[form](dim) + 2 * neighbours * 16 + _ELEMENT_BYTES
    return max(64, min(4096, int(vectors * per_vector * 1.2 / 2**20) + 1))


def dim_of(connection: Connection, space: str) -> int:
    """The dimension of a space's vectors, as its column declares it."""
    return int(vector_width(connection, space) or 0)


def clear(connection: Connection, space: str) -> None:
    """Remove every vector of a space (and its graph, rebuilt at publish if wanted)."""
    for form in GRAPH_FORMS:
        connection.execute(text(f"DROP INDEX IF EXISTS {index_name(space, form)}"))
    connection.execute(text(f"TRUNCATE {table_name(space)}"))


def chunks_without_vectors(
    connection: Connection, space: str, unfilled: Ranges | None = None
) -> int:
    """How many chunks have no vector in the space, but those `unfilled` names (their
    vectors are the fill's to add: `indexer.store.unfilled`)."""
    condition, values = in_ranges(unfilled or [], "c.id")
    return int(
        connection.execute(
            text(
                f"SELECT count(*) FROM chunks c WHERE NOT EXISTS "
                f"(SELECT 1 FROM {table_name(space)} v WHERE v.chunk_id = c.id) "
                f"AND NOT {condition}"
            ),
            values,
        ).scalar_one()
    )


def vector_width(connection: Connection, space: str) -> int | None:
    """The dimension the space's column was declared with."""
    return connection.execute(
        text(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = CAST(:t AS regclass) AND attname = 'embedding'"
        ),
        {"t": table_name(space)},
    ).scalar()

"""The PostgreSQL vector spaces: one pgvector table per space, keyed by chunk id.

`space_contextual(chunk_id, embedding vector(dim))`: the chunk id references `chunks`
with ON DELETE CASCADE, so removing a chunk removes its vectors in the same
transaction. The vectors are unit length, so cosine is the inner product: searches
order by `<#>` (negative inner product) and an HNSW index with `vector_ip_ops` serves
them when the space is big enough (the same `index_types` rule as FAISS). Exact search
is a plain scan, used for small spaces and whenever `k` exceeds what HNSW returns.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    Float,
    MetaData,
    Table,
    insert,
    select,
    text,
)

from indexer.store import index_types
from indexer.store.index_types import (
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_SEARCH,
    HNSW_NEIGHBOURS,
    structure_for,
)
from indexer.store.postgres.database import vector_schema
from indexer.store.schema import ChunkRow, DocumentRow

# pgvector's HNSW returns at most ef_search rows, and ef_search is capped at 1000.
MAX_EF_SEARCH = 1000
INSERT_BATCH = 1000


def table_name(space: str) -> str:
    """The table of a vector space."""
    return f"space_{space}"


def index_name(space: str) -> str:
    """The HNSW index of a vector space's table."""
    return f"ix_space_{space}_hnsw"


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


def negative_inner_product(
    connection: Connection, table: Table, query: np.ndarray
) -> ColumnElement[float]:
    """pgvector's `<#>` (the negative inner product) of each stored vector with `query`,
    the operator named with pgvector's schema (the index's schema alone is searched)."""
    operator = f"OPERATOR({vector_schema(connection)}.<#>)"
    return table.c.embedding.op(operator, return_type=Float)(np.asarray(query, np.float32))


def add_vectors(connection: Connection, space: str, ids: np.ndarray, vectors: np.ndarray) -> None:
    """Insert vectors under their chunk ids."""
    table = space_table(space, vectors.shape[1])
    rows = [
        {"chunk_id": int(chunk_id), "embedding": vector}
        for chunk_id, vector in zip(ids, np.asarray(vectors, dtype=np.float32), strict=True)
    ]
    for first in range(0, len(rows), INSERT_BATCH):
        connection.execute(insert(table), rows[first : first + INSERT_BATCH])


def search(
    connection: Connection,
    space: str,
    dim: int,
    query: np.ndarray,
    k: int,
    where: tuple[str, dict[str, str]] | None = None,
) -> list[tuple[int, float]]:
    """The `k` nearest chunk ids and cosines of one query vector; with `where` (a
    condition on `documents` and its values, see `SearchFilter.sql`), only among the
    chunks of the documents it allows.

    A filtered search is exact: HNSW with a WHERE clause may return fewer than `k` rows
    (it filters after its graph search), and the filter's guarantee is `k` hits whenever
    `k` allowed chunks exist."""
    table = space_table(space, dim)
    exact = k > MAX_EF_SEARCH or where is not None
    connection.execute(
        text("SELECT set_config('hnsw.ef_search', :ef, true), "
             "set_config('enable_indexscan', :scan, true)"),
        {"ef": str(min(MAX_EF_SEARCH, max(HNSW_EF_SEARCH, k))), "scan": "off" if exact else "on"},
    )  # fmt: skip
    distance = negative_inner_product(connection, table, query)
    statement = select(table.c.chunk_id, distance)
    if where is not None:
        statement = (
            statement.join(ChunkRow, ChunkRow.id == table.c.chunk_id)
            .join(DocumentRow, DocumentRow.id == ChunkRow.document_id)
            .where(text(where[0]).bindparams(**where[1]))
        )
    rows = connection.execute(statement.order_by(distance, table.c.chunk_id).limit(k))
    return [(int(chunk_id), -float(negative)) for chunk_id, negative in rows]


def similarities(
    connection: Connection, space: str, dim: int, query: np.ndarray, ids: list[int]
) -> dict[int, float]:
    """The cosine of one query vector with the stored vector of each of these chunks."""
    if not ids:
        return {}
    table = space_table(space, dim)
    distance = negative_inner_product(connection, table, query)
    rows = connection.execute(
        select(table.c.chunk_id, distance).where(table.c.chunk_id.in_([int(i) for i in ids]))
    )
    return {int(chunk_id): -float(negative) for chunk_id, negative in rows}


def stored_vectors(
    connection: Connection, space: str, dim: int, ids: list[int]
) -> dict[int, np.ndarray]:
    """The stored vector of each of these chunks that the space holds, by chunk id."""
    table = space_table(space, dim)
    found: dict[int, np.ndarray] = {}
    for first in range(0, len(ids), INSERT_BATCH):
        batch = [int(i) for i in ids[first : first + INSERT_BATCH]]
        rows = connection.execute(
            select(table.c.chunk_id, table.c.embedding).where(table.c.chunk_id.in_(batch))
        )
        for chunk_id, embedding in rows:
            found[int(chunk_id)] = np.asarray(embedding, dtype=np.float32)
    return found


def count(connection: Connection, space: str) -> int:
    """How many vectors a space holds."""
    return int(connection.execute(text(f"SELECT count(*) FROM {table_name(space)}")).scalar_one())


def has_graph(connection: Connection, space: str) -> bool:
    """Whether the space's table has its HNSW index."""
    found = connection.execute(
        text("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = :n"),
        {"n": index_name(space)},
    )
    return found.first() is not None


def count_up_to(connection: Connection, space: str, limit: int) -> int:
    """How many vectors a space holds, counted no further than `limit`: what a publish
    needs to know (whether `auto` crossed the threshold) at a cost that stops growing
    with the index."""
    held = connection.execute(
        text(f"SELECT count(*) FROM (SELECT 1 FROM {table_name(space)} LIMIT :limit) AS held"),
        {"limit": limit},
    )
    return int(held.scalar_one())


def restructure(connection: Connection, space: str, index_type: str) -> bool:
    """Create or drop the HNSW index as `index_type` wants at this size; say if it did."""
    wanted = structure_for(
        index_type, count_up_to(connection, space, index_types.HNSW_FROM_VECTORS)
    )
    present = has_graph(connection, space)
    if wanted == "hnsw" and not present:
        vectors = count(connection, space)  # building the graph reads them all anyway
        # pgvector builds fast only while the graph fits in maintenance_work_mem (64 MB by
        # default, a 100,000-vector graph of 384-d vectors needs about 250 MB): raise it
        # for this transaction only.
        connection.execute(
            text("SELECT set_config('maintenance_work_mem', :memory, true)"),
            {"memory": f"{graph_build_megabytes(vectors, dim_of(connection, space))}MB"},
        )
        connection.execute(
            text(
                f"CREATE INDEX {index_name(space)} ON {table_name(space)} "
                f"USING hnsw (embedding {vector_schema(connection)}.vector_ip_ops) "
                f"WITH (m = {HNSW_NEIGHBOURS}, ef_construction = {HNSW_EF_CONSTRUCTION})"
            )
        )
        return True
    if wanted == "flat" and present:
        connection.execute(text(f"DROP INDEX {index_name(space)}"))
        return True
    return False


def graph_build_megabytes(vectors: int, dim: int) -> int:
    """Memory for building an HNSW graph in one pass: vectors, links, overhead, +20%."""
    per_vector = dim * 4 + 2 * HNSW_NEIGHBOURS * 8 + 64
    return max(64, min(4096, int(vectors * per_vector * 1.2 / 2**20) + 1))


def dim_of(connection: Connection, space: str) -> int:
    """The dimension of a space's vectors, as its column declares it."""
    return int(vector_width(connection, space) or 0)


def clear(connection: Connection, space: str) -> None:
    """Remove every vector of a space (and its graph, rebuilt at publish if wanted)."""
    connection.execute(text(f"DROP INDEX IF EXISTS {index_name(space)}"))
    connection.execute(text(f"TRUNCATE {table_name(space)}"))


def chunks_without_vectors(connection: Connection, space: str) -> int:
    """How many chunks have no vector in the space."""
    return int(
        connection.execute(
            text(
                f"SELECT count(*) FROM chunks c WHERE NOT EXISTS "
                f"(SELECT 1 FROM {table_name(space)} v WHERE v.chunk_id = c.id)"
            )
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

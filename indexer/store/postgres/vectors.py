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
from typing import Any

import numpy as np
from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    Float,
    MetaData,
    Table,
    bindparam,
    literal_column,
    select,
    text,
)
from sqlalchemy.types import NullType

from indexer.store import index_types
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
from indexer.store.schema import ChunkRow, DocumentRow
from indexer.store.sql_reads import CHUNK_COLUMNS

# pgvector's HNSW returns at most ef_search rows, and ef_search is capped at 1000.
MAX_EF_SEARCH = 1000
# A filtered search scans exactly the chunks its filter allows when there are at most this
# many; above, it walks the graph (iterative scan). Measured (`ctxsearch bench --only
# postgres`, 100,000 static vectors of SciFact sentences, 2026-12-01, a loaded machine:
# docs/reports/2026-12-01-postgres.md): the exact scan's p50 was 99 ms at 1,000 allowed
# chunks, 132 ms at 10,000, 514 ms at 50,000; the graph's 207 ms unfiltered and 160 ms
# at 50% (recall@10 0.982). Exact stays cheaper up to about 13,000 (a line through the
# exact times meets the graph's): 10,000 keeps to the safe side.
EXACT_UP_TO = 10_000
ALWAYS_EXACT = 2**62  # as `exact_up_to`: never the graph (the benchmark's baseline)
# The most graph rows a filtered walk visits before it gives up (pgvector's default,
# 20,000) and the search scans the allowed chunks exactly instead.
MAX_SCAN_TUPLES = 20_000
READ_BATCH = 1000


def table_name(space: str) -> str:
    """The table of a vector space."""
    return f"space_{space}"


def index_name(space: str, quantization: str = "none") -> str:
    """The HNSW index of a vector space's table in a form: float32 (`none`), `halfvec` or
    `binary` (each an index of its own name, so a form is known by the name present)."""
    return f"ix_space_{space}_hnsw" + ("" if quantization == "none" else f"_{quantization}")


GRAPH_FORMS = ("none", "halfvec", "binary")


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
    """Insert vectors under their chunk ids (one binary COPY, `vector_copy.py`)."""
    copy_vectors(connection, table_name(space), ids, vectors)


def nearest(
    connection: Connection,
    space: str,
    dim: int,
    query: np.ndarray,
    k: int,
    where: tuple[str, dict[str, str]] | None = None,
    exact_up_to: int | None = None,
    quantization: str = "none",
) -> list[tuple[int, float, tuple[Any, ...]]]:
    """The `k` nearest chunks of one query vector: id, cosine and the chunk's row
    (`sql_reads.CHUNK_COLUMNS`, read by the same statement); with `where` (a condition
    on `documents` and its values, see `SearchFilter.sql`), only among the chunks of
    the documents it allows.

    A filtered search walks the HNSW graph with pgvector's iterative index scans, which
    go on past `ef_search` until `k` allowed rows are found; when the filter allows at
    most `exact_up_to` chunks (default `EXACT_UP_TO`; counted no further), scanning those
    exactly is cheaper, and so it is whenever the graph walk stops short of `k`
    (`hnsw.max_scan_tuples`): the filter's guarantee is `k` hits whenever `k` allowed
    chunks exist.

    Through a quantized graph (`quantization` `halfvec` or `binary`, the form the graph
    present has), the graph finds `candidates_for` rows by the quantized distance and
    they are ranked again by the float32 vectors: the cosines are float32's."""
    table = space_table(space, dim)
    exact_up_to = EXACT_UP_TO if exact_up_to is None else exact_up_to
    exact = k > MAX_EF_SEARCH or exact_up_to >= ALWAYS_EXACT
    if where is not None and not exact:
        exact = _allowed_up_to(connection, where, exact_up_to + 1) <= exact_up_to
    quantization = "none" if exact else quantization
    wanted = candidates_for(quantization, k)
    if not exact and (wanted > HNSW_EF_SEARCH or where is not None):
        _graph_settings(connection, wanted, filtered=where is not None)
    elif exact:
        connection.execute(text("SELECT set_config('enable_indexscan', 'off', true)"))
    rows = _nearest(connection, table, query, k, where, quantization)
    if where is not None and not exact and len(rows) < k:
        connection.execute(
            text("SELECT set_config('enable_indexscan', 'off', true), "
                 "set_config('enable_sort', 'on', true)")
        )  # fmt: skip
        rows = _nearest(connection, table, query, k, where)
    return rows


# How many candidates a quantized graph finds for `k` hits, re-ranked by float32: halfvec's
# order is float32's but for ties (two bytes a dimension keep ~3 digits), so a few more;
# binary codes order coarsely: measured on 100,000 real static vectors
# (docs/postgres.md), 200 candidates gave recall@10 0.80, 500 gave 0.87.
RERANK_LEAST = {"none": 0, "halfvec": 20, "binary": 500}
RERANK_FACTOR = {"none": 1, "halfvec": 2, "binary": 50}


def candidates_for(quantization: str, k: int) -> int:
    """The candidates a graph of this form finds for `k` hits (at most `MAX_EF_SEARCH`,
    what pgvector's graph returns, and never fewer than `k`)."""
    wanted = max(RERANK_LEAST[quantization], RERANK_FACTOR[quantization] * k)
    return max(k, min(MAX_EF_SEARCH, wanted))


def _quantized_distance(connection: Connection, dim: int, quantization: str) -> str:
    """The graph's distance of a quantized form to the query `:query` (SQL text, the very
    expression its index was made on, so the planner uses it)."""
    schema = vector_schema(connection)
    if quantization == "halfvec":
        return (
            f"CAST(embedding AS {schema}.halfvec({dim})) OPERATOR({schema}.<#>) "
            f"CAST(:query AS {schema}.halfvec({dim}))"
        )
    query = f"CAST(:query AS {schema}.vector({dim}))"
    return (
        f"CAST({schema}.binary_quantize(embedding) AS bit({dim})) OPERATOR({schema}.<~>) "
        f"CAST({schema}.binary_quantize({query}) AS bit({dim}))"
    )


def _nearest(
    connection: Connection,
    table: Table,
    query: np.ndarray,
    k: int,
    where: tuple[str, dict[str, str]] | None,
    quantization: str = "none",
) -> list[tuple[int, float, tuple[Any, ...]]]:
    """The statement for the nearest `k`, their chunks' rows joined to them (the
    settings of the transaction choose how the nearest are found); a quantized graph's
    candidates ranked again by float32 in the same statement."""
    distance = negative_inner_product(connection, table, query)
    statement = select(table.c.chunk_id, distance.label("distance"))
    if where is not None:
        statement = (
            statement.join(ChunkRow, ChunkRow.id == table.c.chunk_id)
            .join(DocumentRow, DocumentRow.id == ChunkRow.document_id)
            .where(text(where[0]).bindparams(**where[1]))
        )
    if quantization == "none":
        found = statement.order_by(distance).limit(k).subquery("nearest")
    else:
        dim = int(table.c.embedding.type.dim)
        # the query as pgvector's text, typed by the CAST it is in (a typed parameter would
        # be cast from varchar on every run of the prepared statement: 13.4 ms against
        # 7.6 for the same halfvec walk)
        vector = "[" + ",".join(repr(float(x)) for x in np.asarray(query, np.float32)) + "]"
        graph = text(_quantized_distance(connection, dim, quantization)).bindparams(
            bindparam("query", vector, type_=NullType())
        )
        candidates = (
            statement.order_by(graph).limit(candidates_for(quantization, k)).subquery("candidates")
        )
        found = (
            select(candidates.c.chunk_id, candidates.c.distance)
            .order_by(candidates.c.distance)
            .limit(k)
            .subquery("nearest")
        )
    chunks, documents = ChunkRow.__table__, DocumentRow.__table__
    # relaxed_order may hand rows back slightly out of order: the k found are sorted again
    hydrated = (
        select(found.c.distance, *(literal_column(name) for name in CHUNK_COLUMNS))
        .select_from(
            found.join(chunks, chunks.c.id == found.c.chunk_id).join(
                documents, documents.c.id == chunks.c.document_id
            )
        )
        .order_by(found.c.distance, found.c.chunk_id)
    )
    return [(int(row[1]), -float(row[0]), tuple(row[1:])) for row in connection.execute(hydrated)]


def _graph_settings(connection: Connection, k: int, filtered: bool) -> None:
    """ef_search for `k`, and for a filter the iterative scan that keeps walking the graph
    until `k` allowed rows are found (or `MAX_SCAN_TUPLES` were visited). The planner,
    guessing a filter's share (often far too small), prefers reading the allowed chunks
    and sorting them: the count already chose the graph, so sorting is off for this
    transaction (the k rows found are still put in order; disabling only costs a plan)."""
    connection.execute(
        text("SELECT set_config('hnsw.ef_search', :ef, true), "
             "set_config('hnsw.iterative_scan', :scan, true), "
             "set_config('hnsw.max_scan_tuples', :tuples, true), "
             "set_config('enable_sort', :sort, true)"),
        {"ef": str(min(MAX_EF_SEARCH, max(HNSW_EF_SEARCH, k))),
         "scan": "relaxed_order" if filtered else "off", "tuples": str(MAX_SCAN_TUPLES),
         "sort": "off" if filtered else "on"},
    )  # fmt: skip


def _allowed_up_to(connection: Connection, where: tuple[str, dict[str, str]], limit: int) -> int:
    """How many chunks the filter allows, counted no further than `limit`."""
    held = connection.execute(
        text(
            "SELECT count(*) FROM (SELECT 1 FROM chunks JOIN documents "
            f"ON documents.id = chunks.document_id WHERE {where[0]} LIMIT :limit) AS allowed"
        ),
        {**where[1], "limit": limit},
    )
    return int(held.scalar_one())


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
    graph in another form is dropped and made again in the wanted one); say if it did."""
    held = count_up_to(connection, space, index_types.HNSW_FROM_VECTORS)
    wanted = structure_for(index_type, held)
    form = quantization_for(quantize, held, "pgvector")
    present = graph_form(connection, space)
    if wanted == "flat" or (present is not None and present != form):
        if present is None:
            return False
        connection.execute(text(f"DROP INDEX {index_name(space, present)}"))
        if wanted == "flat":
            return True
    if present == form:
        return False
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
    neighbours = HNSW_NEIGHBOURS if form == "none" else QUANTIZED_HNSW_NEIGHBOURS
    return (
        f"CREATE INDEX {index_name(space, form)} ON {table_name(space)} USING hnsw ({key}) "
        f"WITH (m = {neighbours}, ef_construction = {HNSW_EF_CONSTRUCTION})"
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
    neighbours = HNSW_NEIGHBOURS if form == "none" else QUANTIZED_HNSW_NEIGHBOURS
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

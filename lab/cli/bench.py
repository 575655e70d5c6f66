"""The `bench` command: every performance figure as a ratio against a same-run baseline."""

from __future__ import annotations

import json
import shlex
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lab.bench_peers import CTXSEARCH_SETTINGS, PEERS, peer_rows
from lab.cli.errors import translate_lab_errors
from lab.peer_venv import default_peers_venv
from search.cli.common import IndexTarget, echo_json, json_option

if TYPE_CHECKING:
    from indexer.store.base import Target

SECTIONS = (
    "encoding", "overhead", "startup", "faiss", "stores", "scaling", "incremental", "fusion",
    "quantize", "postgres", "queries", "readers", "peers",
)  # fmt: skip
# Sections that run only when named in --only.
ON_REQUEST = ("stores", "fusion", "quantize", "postgres", "queries", "readers", "peers")
# How many texts or documents a section takes unless --limit says.
DEFAULT_LIMIT = 512
PEERS_LIMIT = 1000
# How to get a PostgreSQL to measure, when none is given.
THROWAWAY_POSTGRES = "from a checkout, a throw-away one: python -m tests.support.postgres_server"


# The most vectors, chunks or files a section is asked to build: past this a run would
# take days or exhaust memory (and past 64 bits numpy cannot even size the array).
MAX_SIZE = 10_000_000
# FAISS's IVF sections train 16 or more lists on the vectors, so they need this many.
MIN_FAISS_SIZE = 1000


def _sizes(text: str, low: int = 1) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of sizes") from error
    if not sizes or min(sizes) < low or max(sizes) > MAX_SIZE:
        raise click.BadParameter(f"{text!r}: give sizes from {low:,} to {MAX_SIZE:,}")
    return sizes


def _faiss_sizes(_ctx: Any, _param: Any, text: str) -> list[int]:
    return _sizes(text, MIN_FAISS_SIZE)


def _scale_sizes(_ctx: Any, _param: Any, text: str) -> list[int]:
    return _sizes(text)


@click.command()
@click.option(
    "--texts",
    "texts_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="A BEIR corpus.jsonl (or its folder), or a folder of documents, for the encoder "
    "and overhead rows [default: sentences shipped with ctxsearch].",
)
@click.option(
    "--limit",
    default=None,
    type=click.IntRange(1, MAX_SIZE),
    help=f"How many texts or documents [default: {DEFAULT_LIMIT:,}; peers: {PEERS_LIMIT:,}].",
)
@click.option(
    "--index",
    "index_dir",
    type=IndexTarget(),
    help="An index to time `info` on (and queries on, for `fusion` and `queries`): a "
    "folder or a postgresql+psycopg:// URL.",
)
@click.option(
    "--baseline-index",
    type=IndexTarget(),
    help="For `queries`: an index of the same documents to compare --index with (a "
    "folder against a PostgreSQL index, say).",
)
@click.option(
    "--queries",
    "queries_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="A BEIR queries.jsonl (or its folder) for the fusion, postgres and queries "
    "sections; --limit of them.",
)
@click.option(
    "--only",
    default=",".join(s for s in SECTIONS if s not in ON_REQUEST),
    show_default=True,
    help="Comma-separated sections to run.",
)
@click.option(
    "--faiss-sizes", default="10000,100000,1000000", show_default=True, callback=_faiss_sizes
)
@click.option(
    "--store-size",
    default=100_000,
    show_default=True,
    type=click.IntRange(MIN_FAISS_SIZE, MAX_SIZE),
    help="Vectors per store (and passages of the readers section's index).",
)
@click.option(
    "--postgres",
    default=None,
    help="A postgresql+psycopg:// database with pgvector for the stores and postgres "
    f"sections ({THROWAWAY_POSTGRES} [SHARED_BUFFERS]).",
)
@click.option(
    "--postgres-prewarm",
    is_flag=True,
    help="The postgres section reads each table and graph into the server's cache before "
    "timing (CHECKPOINT, pg_prewarm): for a server of the benchmark's own, its "
    "shared_buffers as large as the section says they need.",
)
@click.option(
    "--scale-sizes", default="1000,10000,100000", show_default=True, callback=_scale_sizes
)
@click.option(
    "--vectors",
    "vectors_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Real vectors for the quantize section: a float32 .npy (e.g. made by `python -m "
    "lab.passage_vectors`) or an index's .faiss file; 500 of them drawn at random are "
    "the queries. For the postgres section: its first --store-size rows are the chunks "
    "(instead of --texts' sentences).",
)
@click.option(
    "--quantize-size",
    type=click.IntRange(MIN_FAISS_SIZE, MAX_SIZE),
    default=None,
    help="Vectors of --vectors to search in the quantize section [default: all but the queries].",
)
@click.option(
    "--quantize-forms",
    default=None,
    help="Comma-separated forms for the quantize section (flat, hnsw, flat-int8, hnsw-int8, "
    "flat-binary, hnsw-binary) [default: all]; a 1M run of one form takes tens of minutes.",
)
@click.option(
    "--postgres-forms/--no-postgres-forms",
    default=True,
    show_default=True,
    help="End the postgres section with a row per graph form (float32, halfvec, binary), "
    "each a rebuild of the graph (at 1M passages, tens of minutes each).",
)
@click.option(
    "--postgres-quantize",
    type=click.Choice(["none", "halfvec", "binary"]),
    default="none",
    show_default=True,
    help="The form of the postgres section's graph for its filter rows (as `index --quantize`).",
)
@click.option(
    "--incremental-files", default=10_000, show_default=True, type=click.IntRange(1, MAX_SIZE)
)
@click.option(
    "--peers",
    "peer_names",
    default=",".join(PEERS),
    show_default=True,
    help="Comma-separated peers for the peers section (none: ctxsearch alone).",
)
@click.option(
    "--peers-venv",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The virtualenv the peers run in, made there from the package registry if it "
    "is not yet [default: peers in ctxsearch's cache folder].",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    metavar="OPTIONS",
    help="`index` options of a ctxsearch row of the peers section, e.g. '--precision "
    "fp32'; repeatable; '' is the default [default: each speed option, and none].",
)
@click.option(
    "--rounds",
    default=3,
    show_default=True,
    type=click.IntRange(1, 100),
    help="Rounds of the peers section: each runs every system once.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write the table as JSON here, and the scaling plot beside it (NAME-scaling.png).",
)
@json_option
@translate_lab_errors
def bench(
    texts_path: Path | None,
    limit: int,
    index_dir: Target | None,
    baseline_index: Target | None,
    queries_path: Path | None,
    only: str,
    faiss_sizes: list[int],
    store_size: int,
    postgres: str | None,
    scale_sizes: list[int],
    vectors_path: Path | None,
    quantize_size: int | None,
    quantize_forms: str | None,
    postgres_forms: bool,
    postgres_quantize: str,
    postgres_prewarm: bool,
    incremental_files: int,
    peer_names: str,
    peers_venv: Path | None,
    settings: tuple[str, ...],
    rounds: int,
    out: Path | None,
    as_json: bool,
) -> None:
    """Time ctxsearch against baselines measured in the same run; print the ratios.

    \b
    Sections (all but those only when named by default; scaling, incremental and faiss
    take minutes to tens of minutes):
      encoding     contextual encoder vs SentenceTransformer.encode (same texts, same
                   threads; target 1.3x, min cosine shown); static vs contextual (100x)
      overhead     indexing a folder vs its encoders alone (target: at most 10% more)
      startup      `--help` and `info` (under 0.5 s); `query`'s model load vs search
      faiss        Flat vs HNSW, IVF, IVF-PQ on synthetic 384-d vectors: build time,
                   p50/p99 latency, recall@10 against exact search, memory
      stores       (only when named) the embedded store (FAISS) vs PostgreSQL (pgvector,
                   --postgres), exact and HNSW, through the Store interface: p50/p95
                   latency, recall@10
      scaling      index time and peak memory at growing numbers of chunks (plot)
      incremental  re-indexing a folder of many files after one changed
      fusion       (only when named) hybrid queries on --index with the default fusion
                   vs the 0.1 one (min-max, 0.4 dense), alternating: p50, p95, ratios
      quantize     (only when named) float32 vs int8 and binary spaces, flat and HNSW,
                   on --vectors: bytes per vector in memory, recall@10 against exact
                   float32, p50/p99, build time (1M vectors: about an hour)
      postgres     (only when named) PostgreSQL (--postgres) vector queries on the static
                   vectors of
                   --texts (a BEIR folder) or --vectors, probes from --queries: unfiltered
                   and with filters keeping 50%, 10%, 1%, exact scan vs graph: p50/p95,
                   recall@10; then the graph as float32, halfvec and binary
                   (`index --quantize`): build s, table + index bytes per vector,
                   recall@10, p50/p99
      peers        (only when named) `index` of the first --limit documents of --texts
                   (a BEIR corpus) side by side with llm, Chroma, txtai and bare
                   sentence-transformers (same model; each its own process, in
                   --rounds interleaved rounds; the peers in their own virtualenv):
                   docs/s, tokens encoded, tokens/s, peak RSS, ratio to the fastest
                   peer; a matmul probe and ctxsearch's share of the bf16 ceiling
      queries      (only when named) whole queries (`Searcher.search`) on --index per
                   mode, contextual, lexical and hybrid, alternating with
                   --baseline-index (the same documents in another store): p50/p95 ms
                   of the search (encoding left out), waits for PostgreSQL per query,
                   ratios
      readers      (only when named) a folder index of --store-size synthetic passages
                   and a `serve` on it, 10 writes of a few passages: seconds from each
                   commit to the first answer listing them (target 2 s), the server's
                   RSS before and after; a new generation read in full vs followed

    \b
    Examples:
      ctxsearch lab bench --only encoding,startup
      ctxsearch lab bench --texts ../shared/eval/scifact --limit 200 --out reports/bench.json
      ctxsearch lab bench --only faiss --faiss-sizes 10000,100000 --json
      ctxsearch lab bench --only fusion --index scifact.idx --queries ../shared/eval/scifact \\
          --limit 300
      ctxsearch lab bench --only quantize --vectors passages-1m.npy --quantize-size 100000
      ctxsearch lab bench --only postgres --texts ../shared/eval/scifact \\
          --queries ../shared/eval/scifact --limit 200 --postgres URL
      ctxsearch lab bench --only postgres --vectors passages-1m.npy --store-size 1000000 \\
          --queries ../shared/eval/scifact --limit 100 --postgres URL
      ctxsearch lab bench --only queries --index URL --baseline-index scifact.idx \\
          --queries ../shared/eval/scifact --limit 100
      ctxsearch lab bench --only readers --store-size 1000000
      ctxsearch lab bench --only peers --texts ../shared/eval/scifact
      ctxsearch lab bench --only peers --texts ../shared/eval/scifact --limit 200 \\
          --rounds 1 --peers chroma --setting '' --setting '--precision fp32'
    """
    sections = [part.strip() for part in only.split(",") if part.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        raise click.BadParameter(
            f"unknown section {', '.join(unknown)}; choose from {', '.join(SECTIONS)}",
            param_hint="--only",
        )
    for needy in ("fusion", "queries"):
        if needy in sections and (index_dir is None or queries_path is None):
            raise click.UsageError(f"the {needy} section needs --index and --queries")
    if "quantize" in sections and vectors_path is None:
        raise click.UsageError("the quantize section needs --vectors (a float32 .npy file)")
    forms = _quantize_forms(quantize_forms)
    peers = _peer_names(peer_names)
    if "peers" in sections and texts_path is None:
        raise click.UsageError(
            "the peers section needs --texts (a BEIR corpus, e.g. ../shared/eval/scifact)"
        )
    for needy in ("stores", "postgres"):
        if needy in sections and postgres is None:
            raise click.UsageError(
                f"the {needy} section needs --postgres URL ({THROWAWAY_POSTGRES})"
            )
    if "postgres" in sections and (
        queries_path is None or (texts_path is None and vectors_path is None)
    ):
        raise click.UsageError(
            "the postgres section needs --queries and --texts (BEIR) or --vectors (.npy)"
        )
    table: dict[str, Any] = {
        "texts": str(texts_path or "built-in sentences"),
        "sections": sections,
        "rows": [],
    }
    with tempfile.TemporaryDirectory(prefix="ctxsearch-bench-") as scratch:
        for section in sections:
            if section == "peers":
                assert texts_path is not None
                rows = peer_rows(
                    _beir_file(texts_path, "corpus.jsonl"),
                    limit or PEERS_LIMIT,
                    rounds,
                    _ctxsearch_settings(settings),
                    peers,
                    peers_venv or default_peers_venv(),
                    log=lambda line: click.echo(line, err=True),
                )
                table["rows"] += rows
                if not as_json:
                    _print_section(section, rows)
                continue
            rows = _run_section(
                section,
                texts_path,
                limit or DEFAULT_LIMIT,
                index_dir,
                Path(scratch),
                faiss_sizes=faiss_sizes,
                store_size=store_size,
                postgres=postgres,
                scale_sizes=scale_sizes,
                incremental_files=incremental_files,
                queries_path=queries_path,
                vectors_path=vectors_path,
                quantize_size=quantize_size,
                quantize_forms=forms,
                postgres_forms=postgres_forms,
                postgres_quantize=postgres_quantize,
                postgres_prewarm=postgres_prewarm,
                baseline_index=baseline_index,
            )
            table["rows"] += rows
            if section == "scaling" and out is not None:
                from lab.bench_indexing import scaling_plot

                plot = out.with_name(f"{out.stem}-scaling.png")
                scaling_plot(rows, plot)
                table["scaling_plot"] = str(plot)
            if not as_json:
                _print_section(section, rows)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(table, indent=2))
    if as_json:
        echo_json(table)


def _run_section(
    section: str,
    texts_path: Path | None,
    limit: int,
    index_dir: Target | None,
    scratch: Path,
    faiss_sizes: list[int],
    store_size: int,
    postgres: str | None,
    scale_sizes: list[int],
    incremental_files: int,
    queries_path: Path | None = None,
    vectors_path: Path | None = None,
    quantize_size: int | None = None,
    quantize_forms: tuple[str, ...] | None = None,
    postgres_forms: bool = True,
    postgres_quantize: str = "none",
    postgres_prewarm: bool = False,
    baseline_index: Target | None = None,
) -> list[dict[str, Any]]:
    from lab import bench, bench_indexing

    if section == "quantize":
        from lab.bench_quantize import FORMS, quantize_rows

        assert vectors_path is not None
        return quantize_rows(vectors_path, quantize_size, forms=quantize_forms or FORMS)

    if section == "readers":
        from lab.bench_readers import reader_rows

        return reader_rows(store_size, scratch)

    if section == "fusion":
        from lab.bench_fusion import fusion_latency_rows, read_queries

        assert index_dir is not None and queries_path is not None
        return fusion_latency_rows(index_dir, read_queries(queries_path, limit))

    if section == "queries":
        from lab.bench_fusion import read_queries
        from lab.bench_queries import query_rows

        assert index_dir is not None and queries_path is not None
        return query_rows(index_dir, read_queries(queries_path, limit), baseline_index)

    if section == "postgres":
        from lab.bench_postgres import postgres_rows

        assert queries_path is not None and postgres is not None
        return postgres_rows(
            _beir_file(texts_path, "corpus.jsonl") if texts_path else None,
            _beir_file(queries_path, "queries.jsonl"),
            postgres,
            store_size,
            limit,
            vectors_path=vectors_path,
            log=lambda line: click.echo(line, err=True),
            forms=postgres_forms,
            quantize=postgres_quantize,
            prewarm_server=postgres_prewarm,
        )

    sentences = bench_indexing.builtin_sentences()
    if section == "encoding":
        texts = bench.sample_texts(texts_path, limit) if texts_path else sentences[:limit]
        return bench.encoding_rows(texts)
    if section == "overhead":
        if texts_path is None:
            folder = scratch / "overhead"
            bench_indexing.write_synthetic_folder(folder, limit, sentences)
            return bench_indexing.overhead_rows(folder)
        folder = texts_path
        if not texts_path.is_dir() or (texts_path / "corpus.jsonl").exists():
            corpus = texts_path if texts_path.is_file() else texts_path / "corpus.jsonl"
            folder = bench_indexing.write_beir_folder(corpus, scratch / "overhead", limit)
        return bench_indexing.overhead_rows(folder)
    if section == "startup":
        return bench.startup_rows(index_dir)
    if section == "faiss":
        from lab.bench_faiss import faiss_rows

        return faiss_rows(faiss_sizes)
    if section == "stores":
        from lab.bench_stores import store_rows

        assert postgres is not None
        return store_rows(postgres, store_size)
    if section == "scaling":
        return bench_indexing.scaling_rows(scale_sizes, sentences, scratch)
    return bench_indexing.incremental_rows(incremental_files, sentences, scratch)


def _quantize_forms(text: str | None) -> tuple[str, ...] | None:
    """The forms named by --quantize-forms (None: all), each one the quantize section knows."""
    if text is None:
        return None
    from lab.bench_quantize import FORMS

    forms = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(set(forms) - set(FORMS))
    if unknown or not forms:
        raise click.BadParameter(
            f"unknown form {', '.join(unknown) or text!r}; choose from {', '.join(FORMS)}",
            param_hint="--quantize-forms",
        )
    return forms


def _peer_names(text: str) -> list[str]:
    """The peers named by --peers, each one the peers section knows."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(names) - set(PEERS))
    if unknown:
        raise click.BadParameter(
            f"unknown peer {', '.join(unknown)}; choose from {', '.join(PEERS)}",
            param_hint="--peers",
        )
    return names


def _ctxsearch_settings(given: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The ctxsearch rows of the peers section by name: `ctxsearch` and its options."""
    if not given:
        return dict(CTXSEARCH_SETTINGS)
    split = [tuple(shlex.split(options)) for options in given]
    return {" ".join(["ctxsearch", *options]): options for options in split}


def _beir_file(path: Path, name: str) -> Path:
    """A BEIR file given as itself or as its folder."""
    return path / name if path.is_dir() else path


_COLUMNS = {
    "faiss": ["build_seconds", "p50_ms", "p99_ms", "recall@10", "megabytes", "ratio"],
    "stores": ["build_seconds", "p50_ms", "p95_ms", "recall@10", "ratio"],
    "postgres": [
        "allowed",
        "build_seconds",
        "bytes_per_vector",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "recall@10",
        "ratio",
    ],
    "scaling": ["chunks", "seconds", "peak_megabytes", "chunks_per_second"],
    "fusion": ["queries", "p50_ms", "p95_ms", "ratio_p50", "ratio_p95"],
    "queries": ["queries", "p50_ms", "p95_ms", "total_p50_ms", "server_waits", "ratio"],
    "quantize": ["build_seconds", "bytes_per_vector", "recall@10", "p50_ms", "p99_ms", "ratio"],
    "readers": ["baseline_seconds", "seconds", "max_seconds", "ratio", "target"],
    "peers": [
        "seconds",
        "docs_per_second",
        "tokens",
        "tokens_per_second",
        "peak_megabytes",
        "ratio",
        "gflops",
        "share_of_bf16_ceiling",
    ],
}
_DEFAULT_COLUMNS = ["baseline_seconds", "seconds", "ratio", "target"]


def _print_section(section: str, rows: list[dict[str, Any]]) -> None:
    columns = _COLUMNS.get(section, _DEFAULT_COLUMNS)
    click.echo(f"\n[{section}]")
    click.echo(f"{'benchmark':<50} " + " ".join(f"{name:>14}" for name in columns))
    for row in rows:
        cells = " ".join(f"{_cell(row.get(name)):>14}" for name in columns)
        verdict = {True: "ok", False: "MISSED", None: ""}[row.get("meets_target")]
        click.echo(f"{row['benchmark']:<50} {cells}  {verdict}  {row.get('note', '')}".rstrip())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}" if value < 100 else f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else str(value)

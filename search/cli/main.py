"""The `ctxsearch` command line: a thin layer over `Indexer` and `Searcher`.

Nothing here imports torch at module level: `ctxsearch --help` and `ctxsearch info`
stay fast. Library errors become one line on stderr and an exit code:
2 for a usage mistake, 1 for a failure (see the README's table).
"""

from __future__ import annotations

import io
import re
from contextlib import nullcontext, redirect_stdout
from pathlib import Path

import click

from indexer.encoders.choices import STATIC_CHOICES
from indexer.settings import BATCH_CHUNKS
from indexer.store.base import Target
from indexer.store.index_types import HNSW_FROM_VECTORS, INDEX_TYPES
from indexer.version import __version__
from search.cli.bench import bench
from search.cli.common import (
    EXIT_PARTIAL,
    echo_json,
    index_option,
    json_option,
    translate_errors,
)
from search.cli.lab import eval_command, eval_index, neighbours, polysemy, sts, tune_fusion, wic
from search.cli.serve import loadtest, serve
from search.cli.watch import watch
from search.modes import DEFAULT_MODE, MODES, Mode
from search.paths import display_path
from search.text import terminal_text

RAY_NOTE = "(raylet)"  # how Ray marks the notes it prints on a driver (in colour or not)
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxsearch")
def cli() -> None:
    """Semantic search over your own folders of documents.

    \b
    Examples:
      ctxsearch index ~/notes
      ctxsearch query "how do tower cranes stay upright"
      ctxsearch query "bank erosion after a flood" --mode static -k 5
      ctxsearch compare "the python swallowed its prey"
      ctxsearch info
      ctxsearch serve --port 8765
    """


@cli.command()
@click.argument("path", type=click.Path(path_type=Path))
@index_option
@click.option(
    "--model", default=None, help="Model folder or hub name (new index: all-MiniLM-L6-v2)."
)
@click.option(
    "--pooling", default=None, help="mean (default), cls, max, or mean-lastK (e.g. mean-last4)."
)
@click.option(
    "--index-type",
    type=click.Choice(INDEX_TYPES),
    default=None,
    help="FAISS structure: flat (exact), hnsw (approximate graph), or auto: flat below "
    f"{HNSW_FROM_VECTORS:,} chunks, hnsw from there (new index: auto; an existing index "
    "keeps its type unless given).",
)
@click.option(
    "--static",
    type=click.Choice(STATIC_CHOICES),
    default=None,
    help="What the static space holds, chosen when an index is created: the model's token "
    "table (default), a Model2Vec model distilled from it, or GloVe 6B 50d "
    "(the last two need ctxsearch[classic]).",
)
@click.option(
    "--batch-chunks",
    type=click.IntRange(min=1),
    default=BATCH_CHUNKS,
    show_default=True,
    help="Chunks encoded (and written) per batch; on Ray, one batch is one actor call.",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="ADDRESS",
    envvar="CTXSEARCH_RAY",
    default=None,
    help="Encode on a Ray cluster: auto (the running cluster, else a local one) or its "
    "head's address, e.g. 10.0.0.5:6379. Needs pip install 'ctxsearch[ray]'. "
    "[env: CTXSEARCH_RAY]",
)
@click.option(
    "--ray-workers",
    type=click.IntRange(min=1),
    default=None,
    help="Encoding actors on the cluster (default: its CPUs / --ray-threads).",
)
@click.option(
    "--ray-threads",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="CPUs reserved and torch threads used by each encoding actor.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--wait", is_flag=True, help="If another process is writing the index, wait.")
@json_option
@translate_errors
def index(
    path: Path,
    target: Target,
    model: str | None,
    pooling: str | None,
    index_type: str | None,
    static: str | None,
    batch_chunks: int,
    ray_address: str | None,
    ray_workers: int | None,
    ray_threads: int,
    quiet: bool,
    wait: bool,
    as_json: bool,
) -> None:
    """Index the documents under PATH (again: only what changed is encoded).

    \b
    Reads .txt .md .rst .html .pdf .docx .pptx .odt .epub and common source files;
    skips hidden folders,
    .git and binary files. A file that fails is reported and the run goes on.

    \b
    Examples:
      ctxsearch index ~/notes
      ctxsearch index sample_corpus --index /tmp/ix --json
      ctxsearch index papers/ --index papers.idx --pooling mean-last4
      ctxsearch index ~/archive --index-type hnsw
      ctxsearch index ~/notes --index notes.idx --static model2vec
      ctxsearch index ~/archive --ray auto --json
      ctxsearch index ~/archive --ray 10.0.0.5:6379 --index postgresql+psycopg://me@db/search
    """
    from indexer.pipeline import Indexer
    from search.cli.progress import ProgressBars

    bars = ProgressBars(enabled=not quiet and not as_json)
    # Ray prints its own notes (a worker it restarts, say, with a traceback) on stdout:
    # keep stdout for the summary and --json, and sum the notes up in one line.
    ray_notes = io.StringIO()
    try:
        indexer = Indexer(
            target,
            model=model,
            pooling=pooling,
            index_type=index_type,
            static=static,
            batch_chunks=batch_chunks,
            ray=ray_address or None,
            ray_workers=ray_workers,
            ray_threads=ray_threads,
        )
        with redirect_stdout(ray_notes) if ray_address else nullcontext():
            summary = indexer.index_folder(path, progress=bars, wait=wait)
    finally:
        bars.close()
        _sum_up_ray_notes(ray_notes.getvalue())
    if as_json:
        echo_json(summary.to_dict())
    for failure in summary.failures:
        reason = terminal_text(failure.reason)
        click.echo(f"failed {display_path(failure.path)}: {reason}", err=True)
    for skipped in summary.skipped_files:
        reason = terminal_text(skipped.reason)
        click.echo(f"skipped {display_path(skipped.path)}: {reason}", err=True)
    if not as_json:
        click.echo(
            f"{summary.added} added, {summary.updated} updated, {summary.removed} removed, "
            f"{summary.unchanged} unchanged, {summary.failed} failed, {summary.skipped} "
            f"skipped; {summary.chunks} chunks "
            f"encoded in {summary.seconds:.1f}s. The index holds {summary.total_documents} "
            f"documents, {summary.total_chunks} chunks."
        )
    if summary.failed:
        raise click.exceptions.Exit(EXIT_PARTIAL)


def _sum_up_ray_notes(notes: str) -> None:
    """One line on stderr for what Ray reported during a run (its logs have the rest)."""
    lines = [_COLOUR.sub("", line) for line in notes.splitlines()]
    lines = [line for line in lines if line.startswith(RAY_NOTE)]
    if lines:
        first = lines[0].removeprefix(RAY_NOTE).strip().split(". ")[0][:160]
        click.echo(
            f"ctxsearch: Ray reported {len(lines)} event(s) on the cluster, such as: {first}",
            err=True,
        )


def mode_option(default: Mode, help_text: str, name: str = "--mode"):  # -> click decorator
    """A --mode style option over every search mode."""
    return click.option(
        name,
        type=click.Choice(MODES),
        default=default.value,
        show_default=True,
        help=help_text,
    )


@cli.command()
@click.argument("text")
@index_option
@click.option("-k", "k", default=10, show_default=True, help="How many results (at most 1000).")
@mode_option(DEFAULT_MODE, "hybrid fuses contextual and lexical (BM25) results.")
@click.option("--space", type=click.Choice(MODES), hidden=True, help="Old name of --mode.")
@click.option("--all-chunks", is_flag=True, help="Show every matching chunk, not one per document.")
@click.option(
    "--dense-weight",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="hybrid only: the contextual side's share of the fused score, 0 to 1 "
    "(default: weighed per query from both result lists).",
)
@json_option
@translate_errors
def query(
    text: str,
    target: Target,
    k: int,
    mode: str,
    space: str | None,
    all_chunks: bool,
    dense_weight: float | None,
    as_json: bool,
) -> None:
    """Search the index for TEXT, best match first.

    \b
    Examples:
      ctxsearch query "where do I open a savings account"
      ctxsearch query "python swallowed its prey" -k 3 --json
      ctxsearch query "tower crane safety" --mode lexical --all-chunks
      ctxsearch query "error code E1234 in the pump manual" --dense-weight 0.2
    """
    from search.engine import Searcher

    with Searcher(target) as searcher:
        response = searcher.search(
            text, k=k, mode=space or mode, all_chunks=all_chunks, dense_weight=dense_weight
        )
    if as_json:
        echo_json(response.to_dict())
        return
    if not response.results:
        click.echo("No results.")
        return
    click.echo(f"{'#':>3}  {'score':>6}  {'chars':>11}  document")
    for hit in response.results:
        chars = f"{hit.start}-{hit.end}"
        found = ", ".join(f"{name} #{rank}" for name, rank in hit.found_by.items())
        click.echo(
            f"{hit.rank:>3}  {hit.score:6.3f}  {chars:>11}  "
            + click.style(display_path(hit.path), bold=True)
            + (f"  ({found})" if found else "")
        )
        click.echo(f"{'':>26}" + highlighted(hit.snippet, hit.highlights))
    timings = response.timings
    click.echo(
        f"({response.mode}; model load {timings['model_load_seconds']:.2f}s, "
        f"encode {timings['encode_seconds'] * 1000:.0f} ms, "
        f"search {timings['search_seconds'] * 1000:.0f} ms)",
        err=True,
    )


def highlighted(snippet: str, spans: list[tuple[int, int]]) -> str:
    """The snippet with its highlighted spans in bold yellow (plain when not a terminal),
    every piece terminal-safe (a document may hold escape sequences)."""
    pieces, position = [], 0
    for start, end in spans:
        marked = click.style(terminal_text(snippet[start:end]), fg="yellow", bold=True)
        pieces += [terminal_text(snippet[position:start]), marked]
        position = end
    return "".join([*pieces, terminal_text(snippet[position:])])


@cli.command()
@click.argument("text")
@index_option
@click.option(
    "-k", "k", default=10, show_default=True, help="How many results in each list (at most 1000)."
)
@mode_option(Mode.CONTEXTUAL, "The mode shown on the right.")
@mode_option(Mode.STATIC, "The baseline shown on the left.", name="--against")
@json_option
@translate_errors
def compare(text: str, target: Target, k: int, mode: str, against: str, as_json: bool) -> None:
    """Show two modes' results for TEXT side by side (static vs contextual by default).

    \b
    Markers on the right: ▲n moved up n places from its rank on the left, ▼n moved
    down, = same rank, new = not in the left top k. On the left, gone = not in the
    right top k.

    \b
    Examples:
      ctxsearch compare "the bank of the river eroded in the flood"
      ctxsearch compare "jaguar top speed" -k 5 --json
      ctxsearch compare "pitch of a roof" --mode hybrid --against lexical
    """
    from search.cli.comparison_view import side_by_side
    from search.comparison import compare_modes
    from search.engine import Searcher

    if mode == against:
        raise click.UsageError("--mode and --against must differ")
    with Searcher(target) as searcher:
        comparison = compare_modes(searcher, text, k=k, mode=mode, against=against)
    if as_json:
        echo_json(comparison)
    else:
        click.echo(side_by_side(comparison, left=against, right=mode))


@cli.command()
@index_option
@json_option
@translate_errors
def info(target: Target, as_json: bool) -> None:
    """Show how an index was built and what it holds (fast: loads no model).

    \b
    Examples:
      ctxsearch info
      ctxsearch info --index /tmp/ix --json
    """
    from indexer.store.base import describe_store

    description = describe_store(target)
    if as_json:
        echo_json(description)
        return
    for key, value in description.items():
        if isinstance(value, dict):
            click.echo(f"{key}:")
            for name, item in value.items():
                click.echo(terminal_text(f"  {name}: {item}"))
        else:
            click.echo(terminal_text(f"{key}: {value}"))


@cli.command()
@index_option
@json_option
@translate_errors
def verify(target: Target, as_json: bool) -> None:
    """Check that SQL, every vector space and the lexical space agree (exit 1 if not).

    \b
    Examples:
      ctxsearch verify
      ctxsearch verify --index /tmp/ix --json
    """
    from dataclasses import asdict

    from indexer.store.base import verify_target

    report = verify_target(target)
    if as_json:
        echo_json({**asdict(report), "consistent": report.consistent})
    else:
        counts = ", ".join(f"{name} {value}" for name, value in report.counts.items())
        click.echo(terminal_text(f"{report.directory}: {counts}"))
        for problem in report.problems:
            click.echo(f"problem: {terminal_text(problem)}")
        for note in report.notes:
            click.echo(f"note: {terminal_text(note)}")
        click.echo("consistent" if report.consistent else "INCONSISTENT")
    if not report.consistent:
        raise click.exceptions.Exit(1)


@cli.command()
@index_option
@click.option("--wait", is_flag=True, help="If another process is writing the index, wait.")
@json_option
@translate_errors
def repair(target: Target, wait: bool, as_json: bool) -> None:
    """Rebuild the vector spaces and the lexical space from the stored chunks.

    \b
    The documents and chunks in SQL are the source of truth; the source folder is not
    read again. The rebuilt index is published atomically, like an indexing run.

    \b
    Examples:
      ctxsearch verify || ctxsearch repair
      ctxsearch repair --index /tmp/ix --json
    """
    from indexer.repair import repair_index
    from indexer.store.base import verify_target

    result = repair_index(target, wait=wait)
    report = verify_target(target)
    result = {**result, "consistent": report.consistent, "problems": report.problems}
    if as_json:
        echo_json(result)
    else:
        click.echo(
            f"re-encoded {result['chunks']} chunks into generation {result['generation']}; "
            + (
                "consistent"
                if report.consistent
                else "still inconsistent: " + terminal_text("; ".join(report.problems))
            )
        )
    if not report.consistent:
        raise click.exceptions.Exit(1)


for command, name in (
    (eval_command, "eval"),
    (eval_index, "eval-index"),
    (sts, "sts"),
    (wic, "wic"),
    (polysemy, "polysemy"),
    (neighbours, "neighbours"),
    (tune_fusion, "tune-fusion"),
    (serve, "serve"),
    (loadtest, "loadtest"),
    (bench, "bench"),
    (watch, "watch"),
):
    cli.add_command(command, name)


def main() -> None:
    """Entry point of the `ctxsearch` console script."""
    cli(prog_name="ctxsearch")


if __name__ == "__main__":
    main()

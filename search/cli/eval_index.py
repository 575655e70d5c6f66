"""`eval-index`: static against contextual (and every other mode) on a judged collection,
measured through the user's own index and query path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from indexer import config
from indexer.encoders.choices import QUERY_ENCODERS
from indexer.encoders.precision import DEFAULT_PRECISION, PRECISIONS
from search.cli.common import echo_json, index_option, json_option, translate_errors
from search.modes import MODES


@click.command()
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@index_option
@click.option("--split", default="test", show_default=True, help="Which qrels/SPLIT.tsv to use.")
@click.option(
    "--modes",
    default=",".join(MODES),
    show_default=True,
    help="Comma-separated search modes to score.",
)
@click.option(
    "--files-dir",
    type=click.Path(path_type=Path),
    default=None,
    help=f"Where a BEIR corpus is written as files [${config.EVAL_CACHE.name}/files].",
)
@click.option(
    "--precision",
    type=click.Choice(PRECISIONS),
    default=DEFAULT_PRECISION,
    show_default=True,
    help="What the contextual encoder computes in while indexing (see `index --precision`).",
)
@click.option(
    "--query-encoder",
    type=click.Choice(QUERY_ENCODERS),
    default="auto",
    show_default=True,
    help="What encodes the queries (see `query --query-encoder`).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@translate_errors
def eval_index(
    dataset_dir: Path,
    target: Any,
    split: str,
    modes: str,
    files_dir: Path | None,
    precision: str,
    query_encoder: str,
    quiet: bool,
    as_json: bool,
) -> None:
    """Score each search mode, static against contextual among them, on a judged
    collection, through the real index and query path (any backend).

    \b
    DATASET_DIR holds queries.jsonl and qrels/SPLIT.tsv (or qrels.tsv) beside its
    documents: a folder of them in any readable format (like sample_corpus/), indexed
    where it is, a document's id its path without extension; or BEIR's corpus.jsonl,
    written first as one file per document. They are indexed into --index like any
    folder (only what changed, on later runs), and every judged query runs through
    `ctxsearch query`'s code in each mode. Prints nDCG@10, MRR@10, Recall@100, MAP@100
    and query latency per mode.

    \b
    Examples:
      ctxsearch eval-index sample_corpus --index /tmp/sample-ix
      ctxsearch eval-index ../shared/eval/scifact --index /tmp/scifact-ix
      ctxsearch eval-index ../shared/eval/scifact \\
          --index postgresql+psycopg://me@127.0.0.1:5432/search?index=scifact --json
    """
    from search.cli.progress import ProgressBars
    from search.judged.through_index import evaluate_index

    chosen = [mode.strip() for mode in modes.split(",") if mode.strip()]
    unknown = sorted(set(chosen) - set(MODES))
    if unknown:
        raise click.BadParameter(f"unknown mode {', '.join(unknown)}", param_hint="--modes")
    bars = ProgressBars(enabled=not quiet and not as_json)
    try:
        result = evaluate_index(
            dataset_dir,
            target,
            files_dir or config.eval_cache_dir() / "files",
            split=split,
            modes=chosen,
            progress=bars,
            precision=precision,
            query_encoder=query_encoder,
        )
    finally:
        bars.close()
    if as_json:
        echo_json(result)
        return
    click.echo(
        f"{result['dataset']} ({result['split']}, {result['queries']} queries) in "
        f"{result['index']}: {result['documents']} documents, {result['chunks']} chunks, "
        f"encoded in {result['precision']}; queries encoded by "
        f"{', '.join(f'{k} {v}' for k, v in result['query_encoder'].items()) or 'nothing'}"
    )
    click.echo(f"{'mode':<12}{'nDCG@10':>9}{'MRR@10':>9}{'R@100':>9}{'p50 ms':>9}{'p95 ms':>9}")
    for mode, row in result["modes"].items():
        click.echo(
            f"{mode:<12}{row['ndcg@10']:>9.4f}{row['mrr@10']:>9.4f}{row['recall@100']:>9.4f}"
            f"{row['p50_ms']:>9.1f}{row['p95_ms']:>9.1f}"
        )

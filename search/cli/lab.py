"""Commands that measure what context buys: eval, sts, wic and polysemy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from search.cli.common import echo_json, json_option, translate_errors
from search.modes import MODES

model_option = click.option(
    "--model", default=None, help="Model folder or hub name (default all-MiniLM-L6-v2)."
)


@click.command()
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option("--split", default="test", show_default=True, help="Which qrels/SPLIT.tsv to use.")
@click.option(
    "--methods",
    default=None,
    help="Comma-separated methods (default: all). static, contextual, cls, max, mean-last2, "
    "mean-last4, layer-0 ... layer-L (`layers`: every layer), lexical, hybrid (the default "
    "fusion), hybrid-linear (0.1's), hybrid-rrf, hybrid-zscore.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default=None,
    help="Evaluate this search mode (added to --methods).",
)
@click.option("--out", type=click.Path(path_type=Path), help="Write report.md/.html, plots, JSON.")
@click.option(
    "--work-dir",
    type=click.Path(path_type=Path),
    help="Cache of encoded corpora [$CTXSEARCH_EVAL_CACHE or ~/.cache/ctxsearch/eval].",
)
@model_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@translate_errors
def eval_command(
    dataset_dir: Path,
    split: str,
    methods: str | None,
    mode: str | None,
    out: Path | None,
    work_dir: Path | None,
    model: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Measure retrieval quality of every method on a BEIR-layout DATASET_DIR.

    \b
    DATASET_DIR holds corpus.jsonl, queries.jsonl and qrels/SPLIT.tsv, or is a folder
    of documents with queries.jsonl and qrels.tsv (like sample_corpus/). The corpus is
    encoded once for all methods and cached: a second run re-encodes nothing.
    Metrics follow trec_eval: nDCG@10, MRR@10, Recall@100, MAP@100.

    \b
    Examples:
      ctxsearch eval sample_corpus
      ctxsearch eval ../shared/eval/scifact --split test --out reports/scifact
      ctxsearch eval ../shared/eval/scifact --methods static,contextual --json
      ctxsearch eval ../shared/eval/scifact --mode hybrid --methods lexical,contextual
    """
    from search.cli.progress import ProgressBars
    from search.lab.evaluation import evaluate_retrieval

    bars = ProgressBars(enabled=not quiet and not as_json)
    try:
        result = evaluate_retrieval(
            dataset_dir,
            split=split,
            methods=_expand_methods(methods, mode),
            work_dir=work_dir,
            model=model,
            progress=lambda stage, done, total: bars.report(stage, done, total),
        )
    finally:
        bars.close()
    if out is not None:
        from search.lab.report import write_report

        report = write_report(result, out)
        (out / "results.json").write_text(_json_text(result))
        click.echo(f"report written to {report}", err=True)
    if as_json:
        echo_json(result)
    else:
        click.echo(_methods_table(result))


def _expand_methods(methods: str | None, mode: str | None) -> list[str] | None:
    names = [part.strip() for part in (methods or "").split(",") if part.strip()]
    if mode is not None and mode not in names:
        names.insert(0, mode)
    return names or None


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, indent=2)


def _methods_table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['dataset']} ({result.get('split')}): {result['documents']} documents, "
        f"{result['queries']} queries, {result['wall_seconds']:.0f}s",
        f"{'method':<12} {'nDCG@10':>8} {'MRR@10':>8} {'R@100':>8} {'MAP@100':>8} "
        f"{'docs/s':>8} {'query ms':>9}",
    ]
    for name, values in result["methods"].items():
        rate = values.get("docs_per_second")
        latency = values.get("query_ms")
        lines.append(
            f"{name:<12} {values['ndcg@10']:>8.4f} {values['mrr@10']:>8.4f} "
            f"{values['recall@100']:>8.4f} {values['map@100']:>8.4f} "
            f"{(f'{rate:.0f}' if rate else '-'):>8} {(f'{latency:.1f}' if latency else '-'):>9}"
        )
    return "\n".join(lines)


def _dataset_split(value: str, default_split: str = "test") -> tuple[Path, str]:
    """DIR or DIR:SPLIT (a BEIR folder or a document folder, and one of its qrels)."""
    folder, _, split = value.rpartition(":") if ":" in value else (value, "", "")
    return Path(folder), split or default_split


@click.command()
@click.argument("datasets", nargs=-1, required=True)
@click.option(
    "--eval-only",
    "eval_only",
    multiple=True,
    help="DIR:SPLIT measured and left out with its collection, never tuned on "
    "(e.g. SciFact test). Repeatable.",
)
@click.option(
    "--depths",
    default=",".join(str(depth) for depth in (20, 50, 100, 200)),
    show_default=True,
    help="Candidate depths per side to try.",
)
@click.option("--work-dir", type=click.Path(path_type=Path), help="Cache of encoded corpora.")
@click.option("--all", "show_all", is_flag=True, help="Print every variant, not only the best.")
@model_option
@json_option
@translate_errors
def tune_fusion(
    datasets: tuple[str, ...],
    eval_only: tuple[str, ...],
    depths: str,
    work_dir: Path | None,
    show_all: bool,
    model: str | None,
    as_json: bool,
) -> None:
    """Choose hybrid fusion across collections, leaving one collection out at a time.

    \b
    DATASETS are DIR or DIR:SPLIT (default split: test). Every fusion variant
    (min-max, z-score and distribution-based weights 0 to 1, RRF for several k, the
    query-adaptive z-score fusion, each at several candidate depths) is measured on
    every split. A variant's objective over a set of splits is its mean nDCG@10
    margin over the better of contextual and lexical alone, plus its worst margin.
    For each collection (a folder: all its splits together), the variant with the
    best objective on the *other* collections is chosen and measured on the one left
    out: those are the leave-one-collection-out figures. Splits given with
    --eval-only are measured but never tuned on.

    \b
    Examples:
      ctxsearch tune-fusion ../shared/eval/scifact:train ../shared/eval/lisa \\
          ../shared/eval/stsb-retrieval sample_corpus sample_corpus:questions \\
          --eval-only ../shared/eval/scifact:test
      ctxsearch tune-fusion sample_corpus sample_corpus:questions --depths 100 --json
    """
    from indexer.encoders.loading import load_model
    from search.lab.fusion_tuning import load_split, sweep, variants

    try:
        chosen_depths = [int(part) for part in depths.split(",") if part.strip()]
    except ValueError:
        raise click.UsageError(
            f"--depths: whole numbers separated by commas, not {depths!r}"
        ) from None
    loaded = load_model(model)
    specs = [(*_dataset_split(d), False) for d in datasets]
    specs += [(*_dataset_split(d), True) for d in eval_only]
    splits = [
        load_split(folder, split, only, work_dir=work_dir, loaded=loaded)
        for folder, split, only in specs
    ]
    result = sweep(splits, variants(chosen_depths))
    if as_json:
        echo_json(result)
        return
    click.echo(_tuning_report(result, show_all))


def _tuning_report(result: dict[str, Any], show_all: bool) -> str:
    from search.lab.fusion_tuning import OLD_HYBRID

    labels = result["splits"]
    width = max(len(label) for label in labels)
    names = list(result["variants"]) if show_all else []
    if not show_all:
        names = [OLD_HYBRID] if OLD_HYBRID in result["variants"] else []
        names += [family["chosen_on_all"] for family in result["families"].values()]
        names.append(result["chosen"])
    first = max(len(name) for name in [*names, "nDCG@10 / R@100"]) + 2
    header = f"{'nDCG@10 / R@100':<{first}}" + "".join(f"{label:>{width + 2}}" for label in labels)
    lines = [header]

    def row(name: str, figures: dict[str, dict[str, float]]) -> str:
        cells = "".join(
            f"{figures[label]['ndcg@10']:.3f}/{figures[label]['recall@100']:.3f}".rjust(width + 2)
            for label in labels
        )
        return f"{name:<{first}}{cells}"

    for part in ("contextual", "lexical"):
        lines.append(row(part, {label: result["parts"][label][part] for label in labels}))
    for name in dict.fromkeys(names):
        mark = " *" if name == result["chosen"] else ""
        lines.append(row(name + mark, result["variants"][name]))
    lines.append("")
    lines.append("leave one collection out (chosen on the others; margin = nDCG@10 - better part):")
    for fold in result["folds"]:
        held = "  ".join(
            f"{label} {values['ndcg@10']:.3f} ({values['margin']:+.3f})"
            for label, values in fold["held_out_figures"].items()
        )
        lines.append(f"  {fold['held_out']:<16} {fold['chosen']:<36} {held}")
    lines.append(f"chosen on every tuning split (*): {result['chosen']}")
    return "\n".join(lines)


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--split", default="test", show_default=True, help="train, dev or test.")
@model_option
@json_option
@translate_errors
def sts(path: Path, split: str, model: str | None, as_json: bool) -> None:
    """Spearman correlation of cosine similarity with STS-B gold scores, static vs contextual.

    \b
    PATH is an STS-B folder (sts-SPLIT.csv inside) or one such file.

    \b
    Examples:
      ctxsearch sts ../shared/eval/stsb
      ctxsearch sts ../shared/eval/stsb --split dev --json
    """
    from indexer.encoders.loading import load_model
    from search.lab.datasets import load_sts
    from search.lab.similarity import sts_correlation

    file = path / f"sts-{split}.csv" if path.is_dir() else path
    if not file.exists():
        raise click.UsageError(f"{file}: no such STS-B file")
    result = {"file": str(file), **sts_correlation(load_model(model), load_sts(file))}
    if as_json:
        echo_json(result)
    else:
        click.echo(f"STS-B {file.name}: {result['pairs']} pairs, Spearman x100")
        click.echo(f"  static      {result['static'] * 100:6.2f}")
        click.echo(f"  contextual  {result['contextual'] * 100:6.2f}")


@click.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="dev", show_default=True, help="The split to report on.")
@click.option("--train-split", default="train", show_default=True, help="Fits the threshold.")
@model_option
@json_option
@translate_errors
def wic(folder: Path, split: str, train_split: str, model: str | None, as_json: bool) -> None:
    """Word-in-Context: does the target word's vector tell its senses apart?

    \b
    For each pair, the cosine of the word's vectors in its two sentences: static (the
    embedding table: always 1.0) and contextual (the last layer, and every layer).
    Reports AUC, and accuracy with the threshold chosen on the train split.

    \b
    Examples:
      ctxsearch wic ../shared/eval/wic
      ctxsearch wic ../shared/eval/wic --split dev --json
    """
    from indexer.encoders.loading import load_model
    from search.lab.datasets import load_wic
    from search.lab.similarity import wic_evaluation

    for name in (split, train_split):
        if not (folder / name / f"{name}.data.txt").exists():
            raise click.UsageError(f"{folder / name}: no WiC {name} split here")
    result = wic_evaluation(
        load_model(model), load_wic(folder, train_split), load_wic(folder, split)
    )
    result = {"split": split, **result}
    if as_json:
        echo_json(result)
        return
    click.echo(f"WiC {split}: {result['items']} pairs (threshold fitted on {train_split})")
    click.echo(f"{'method':<12} {'AUC':>7} {'accuracy':>9} {'threshold':>10}")
    for name, values in result["methods"].items():
        click.echo(
            f"{name:<12} {values['auc']:>7.4f} {values['accuracy']:>9.4f} "
            f"{values['threshold']:>10.4f}"
        )


@click.command()
@click.argument("word")
@click.argument("sentences", nargs=-1, required=True)
@model_option
@json_option
@translate_errors
def polysemy(word: str, sentences: tuple[str, ...], model: str | None, as_json: bool) -> None:
    """Cosine matrix of WORD's vectors across SENTENCES, static next to contextual.

    \b
    The static vector of a word is one row of the embedding table, whatever the
    sentence; the contextual one comes from the transformer's last layer.

    \b
    Examples:
      ctxsearch polysemy bank "We sat on the bank of the river." \\
          "I deposited the cheque at the bank." "The bank approved the loan."
    """
    from indexer.encoders.loading import load_model
    from search.lab.similarity import polysemy_matrices

    if len(sentences) < 2:
        raise click.UsageError("give at least two sentences")
    result = polysemy_matrices(load_model(model), word, list(sentences))
    if as_json:
        echo_json(result)
        return
    for number, sentence in enumerate(sentences, start=1):
        click.echo(f"  S{number}: {sentence}")
    click.echo(_matrix_pair(result["static"], result["contextual"]))


def _matrix_pair(static: list[list[float]], contextual: list[list[float]]) -> str:
    size = len(static)
    header = "     " + "".join(f"{f'S{i + 1}':>7}" for i in range(size))
    lines = [f"{'static':<{len(header)}}   contextual", f"{header}   {header}"]
    for row in range(size):
        left = f"S{row + 1:<3} " + "".join(f"{value:7.3f}" for value in static[row])
        right = f"S{row + 1:<3} " + "".join(f"{value:7.3f}" for value in contextual[row])
        lines.append(f"{left}   {right}")
    return "\n".join(lines)

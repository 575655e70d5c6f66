"""The lab's commands that measure what context buys: eval, tune-fusion, sts, wic, polysemy
and neighbours (`words` and `classify` are in `lab.cli.words`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from indexer import config
from lab.cli.errors import translate_lab_errors
from search.cli.common import BadInputError, echo_json, json_option
from search.modes import MODES

model_option = click.option(
    "--model", default=None, help="Model folder or hub name (default all-MiniLM-L6-v2)."
)
work_dir_option = click.option(
    "--work-dir",
    type=click.Path(path_type=Path),
    help="Cache of encoded corpora, trained word vectors and distilled models "
    f"[${config.EVAL_CACHE.name}, else ${config.CACHE.name}/eval, "
    "else ~/.cache/ctxsearch/eval].",
)
STATIC_HELP = (
    "glove, word2vec, fasttext (trained on the corpus), static (the model's token table), "
    "model2vec (distilled from the model)"
)


def similarity_methods_option(default_text: str) -> Any:
    return click.option(
        "--methods",
        default=None,
        help=f"Comma-separated methods (default: {default_text}): {STATIC_HELP}, contextual.",
    )


def method_names(methods: str | None) -> list[str] | None:
    names = [part.strip() for part in (methods or "").split(",") if part.strip()]
    return names or None


def show_result(
    result: dict[str, Any],
    out: Path | None,
    write_report: Callable[[dict[str, Any], Path], Path],
    as_json: bool,
    table: Callable[[dict[str, Any]], str],
) -> None:
    """A lab command's ending: its note, the report in `out` (with results.json) when
    asked for, then the result as JSON or as the command's table."""
    echo_note(result)
    if out is not None:
        written = write_report(result, out)
        (out / "results.json").write_text(json_text(result))
        click.echo(f"report written to {written}", err=True)
    if as_json:
        echo_json(result)
    else:
        click.echo(table(result))


def echo_note(result: dict[str, Any]) -> None:
    if result.get("note"):
        click.echo(f"note: {result['note']}", err=True)


@click.command()
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option("--split", default="test", show_default=True, help="Which qrels/SPLIT.tsv to use.")
@click.option(
    "--methods",
    default=None,
    help="Comma-separated methods (default: all). glove, word2vec, fasttext, static, "
    "model2vec, contextual, cls, max, mean-last2, mean-last4, layer-0 ... layer-L "
    "(`layers`: every layer), lexical, hybrid (the default fusion), hybrid-linear (0.1's), "
    "hybrid-rrf, hybrid-zscore.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default=None,
    help="Evaluate this search mode (added to --methods).",
)
@click.option("--out", type=click.Path(path_type=Path), help="Write report.md/.html, plots, JSON.")
@work_dir_option
@model_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@translate_lab_errors
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
    Static methods: glove, word2vec and fasttext (trained on the corpus), static (the
    model's token table) and model2vec (distilled from the model); all but static need
    `pip install 'ctxsearch[classic]'`.

    \b
    Examples:
      ctxsearch lab eval sample_corpus
      ctxsearch lab eval ../shared/eval/scifact --split test --out reports/scifact
      ctxsearch lab eval ../shared/eval/scifact --methods static,contextual --json
      ctxsearch lab eval ../shared/eval/scifact --methods glove,word2vec,fasttext,model2vec
      ctxsearch lab eval ../shared/eval/scifact --mode hybrid --methods lexical,contextual
    """
    from lab.evaluation import evaluate_retrieval
    from search.cli.progress import ProgressBars

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
    from lab.report import write_report

    show_result(result, out, write_report, as_json, _methods_table)


def _expand_methods(methods: str | None, mode: str | None) -> list[str] | None:
    names = [part.strip() for part in (methods or "").split(",") if part.strip()]
    if mode is not None and mode not in names:
        names.insert(0, mode)
    return names or None


def json_text(value: Any) -> str:
    import json

    return json.dumps(value, indent=2)


def _methods_table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['dataset']} ({result.get('split')}): {result['documents']} documents, "
        f"{result['queries']} queries, {result['wall_seconds']:.0f}s",
        f"{'method':<13} {'nDCG@10':>8} {'MRR@10':>8} {'R@100':>8} {'MAP@100':>8} "
        f"{'docs/s':>8} {'query ms':>9} {'setup s':>8}",
    ]
    for name, values in result["methods"].items():
        rate = values.get("docs_per_second")
        latency = values.get("query_ms")
        setup = values.get("setup_seconds")
        lines.append(
            f"{name:<13} {values['ndcg@10']:>8.4f} {values['mrr@10']:>8.4f} "
            f"{values['recall@100']:>8.4f} {values['map@100']:>8.4f} "
            f"{(f'{rate:.0f}' if rate else '-'):>8} {(f'{latency:.1f}' if latency else '-'):>9} "
            f"{(f'{setup:.1f}' if setup is not None else '-'):>8}"
        )
    lines.append(
        "setup s: training on this corpus (word2vec, fasttext) or distilling (model2vec), "
        "once, cached; not in docs/s"
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
@translate_lab_errors
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
    DATASETS are DIR or DIR:SPLIT (default split: test): a BEIR folder (corpus.jsonl,
    each document encoded whole, as MTEB does), or a folder of documents with
    queries.jsonl and qrels (indexed by the real indexer in the work dir, so its
    lists are chunks, as search reads them). Every fusion variant (min-max, z-score
    and distribution-based weights 0 to 1, RRF for several k, the query-adaptive
    z-score fusion, each at several candidate depths; the "+exact" families look up
    each candidate's missing score, as hybrid search does, and weigh questions) is
    measured on every split. A variant's objective over a set of splits is its mean nDCG@10
    margin over the better of contextual and lexical alone, plus its worst margin.
    For each collection (a folder: all its splits together), the variant with the
    best objective on the *other* collections is chosen and measured on the one left
    out: those are the leave-one-collection-out figures. Splits given with
    --eval-only are measured but never tuned on.

    \b
    Examples:
      ctxsearch lab tune-fusion ../shared/eval/scifact:train ../shared/eval/lisa \\
          ../shared/eval/stsb-retrieval sample_corpus sample_corpus:questions \\
          --eval-only ../shared/eval/scifact:test
      ctxsearch lab tune-fusion sample_corpus sample_corpus:questions --depths 100 --json

    \b
    docs/questions/python-docs.sh OUT builds two more sets, questions over Python's
    documentation (from the python3-doc package): OUT/python-library, OUT/python-guides.
    """
    from indexer.encoders.loading import load_model
    from lab.fusion_tuning import load_split, sweep, variants

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
    from lab.fusion_tuning import OLD_HYBRID

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
@similarity_methods_option("every installed one")
@work_dir_option
@model_option
@json_option
@translate_lab_errors
def sts(
    path: Path,
    split: str,
    methods: str | None,
    work_dir: Path | None,
    model: str | None,
    as_json: bool,
) -> None:
    """Spearman correlation of cosine similarity with STS-B gold scores, per method.

    \b
    PATH is an STS-B folder (sts-SPLIT.csv inside) or one such file. Word2Vec and
    FastText are trained on the sentences of every sts-*.csv file in the folder (or
    of the one file given); the scores are never used for training.

    \b
    Examples:
      ctxsearch lab sts ../shared/eval/stsb
      ctxsearch lab sts ../shared/eval/stsb --split dev --json
      ctxsearch lab sts ../shared/eval/stsb --methods glove,fasttext,contextual
    """
    from indexer.encoders.loading import load_model
    from lab.datasets import load_sts, sts_sentences
    from lab.similarity import sts_correlation

    file = path / f"sts-{split}.csv" if path.is_dir() else path
    if not file.exists():
        raise BadInputError(f"{file}: no such STS-B file")
    corpus = sts_sentences(path)
    result = {
        "file": str(file),
        **sts_correlation(
            load_model(model), load_sts(file), method_names(methods), work_dir, corpus=corpus
        ),
    }
    echo_note(result)
    if as_json:
        echo_json(result)
        return
    click.echo(f"STS-B {file.name}: {result['pairs']} pairs, Spearman x100")
    for name in _similarity_names(result):
        click.echo(f"  {name:<11} {result[name] * 100:6.2f}")


def _similarity_names(result: dict[str, Any]) -> list[str]:
    from lab.similarity import SIMILARITY_METHODS

    return [name for name in SIMILARITY_METHODS if name in result]


@click.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="dev", show_default=True, help="The split to report on.")
@click.option("--train-split", default="train", show_default=True, help="Fits the threshold.")
@similarity_methods_option("every installed one")
@work_dir_option
@model_option
@json_option
@translate_lab_errors
def wic(
    folder: Path,
    split: str,
    train_split: str,
    methods: str | None,
    work_dir: Path | None,
    model: str | None,
    as_json: bool,
) -> None:
    """Word-in-Context: does the target word's vector tell its senses apart?

    \b
    For each pair, the cosine of the word's vectors in its two sentences: each static
    method's one vector per word (so always 1.0, or 0.0 with no vector for the word)
    and contextual (the last layer, and every layer). Reports AUC, and accuracy with
    the threshold chosen on the train split. Word2Vec and FastText are trained on the
    sentences of both splits (labels unused).

    \b
    Examples:
      ctxsearch lab wic ../shared/eval/wic
      ctxsearch lab wic ../shared/eval/wic --split dev --json
      ctxsearch lab wic ../shared/eval/wic --methods static,glove,contextual
    """
    from indexer.encoders.loading import load_model
    from lab.datasets import load_wic
    from lab.similarity import wic_evaluation

    for name in (split, train_split):
        if not (folder / name / f"{name}.data.txt").exists():
            raise BadInputError(f"{folder / name}: no WiC {name} split here")
    result = wic_evaluation(
        load_model(model),
        load_wic(folder, train_split),
        load_wic(folder, split),
        methods=method_names(methods),
        work_dir=work_dir,
    )
    result = {"split": split, **result}
    echo_note(result)
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
@similarity_methods_option("every installed one")
@click.option(
    "--corpus",
    type=click.Path(exists=True, path_type=Path),
    help="More text to train word2vec and fasttext on, with the sentences: a BEIR folder, "
    "a folder of documents or a file of one text per line (default: the 424 sentences "
    "that ship with ctxsearch).",
)
@work_dir_option
@model_option
@json_option
@translate_lab_errors
def polysemy(
    word: str,
    sentences: tuple[str, ...],
    methods: str | None,
    corpus: Path | None,
    work_dir: Path | None,
    model: str | None,
    as_json: bool,
) -> None:
    """Cosine matrix of WORD's vectors across SENTENCES, each static method and contextual.

    \b
    A static method has one vector per word, whatever the sentence (the token table,
    GloVe, Word2Vec, FastText, Model2Vec), so its matrix is all 1.0 when the word's
    form is the same; the contextual one comes from the transformer's last layer.
    A dash means the method has no vector for that form of the word.

    \b
    Examples:
      ctxsearch lab polysemy bank "We sat on the bank of the river." \\
          "I deposited the cheque at the bank." "The bank approved the loan."
      ctxsearch lab polysemy cell "The cell divides." "He sat in his cell." \\
          --methods glove,fasttext,contextual --corpus ../shared/eval/scifact
    """
    from indexer.encoders.loading import load_model
    from lab.datasets import load_texts
    from lab.similarity import polysemy_matrices

    if len(sentences) < 2:
        raise click.UsageError("give at least two sentences")
    result = polysemy_matrices(
        load_model(model),
        word,
        list(sentences),
        methods=method_names(methods),
        work_dir=work_dir,
        corpus=load_texts(corpus) if corpus is not None else None,
    )
    echo_note(result)
    if as_json:
        echo_json(result)
        return
    for number, sentence in enumerate(sentences, start=1):
        click.echo(f"  S{number}: {sentence}")
    names = result["methods"]
    for first in range(0, len(names), 3):
        click.echo(_matrices([(name, result[name]) for name in names[first : first + 3]]))
    for name, forms in result["vocabulary"].items():
        click.echo(f"{name}: " + "; ".join(_vocabulary_line(f, r) for f, r in forms.items()))
    if {"word2vec", "fasttext"} & set(names):
        click.echo(
            f"word2vec and fasttext were trained on {result['training_sentences']} texts: "
            f"the {len(sentences)} sentences and "
            + (f"{corpus}" if corpus is not None else "the 424 bundled ones (--corpus for more)")
        )


def _matrices(matrices: list[tuple[str, list[list[float | None]]]]) -> str:
    size = len(matrices[0][1])
    header = "     " + "".join(f"{f'S{i + 1}':>7}" for i in range(size))
    lines = ["", "   ".join(f"{name:<{len(header)}}" for name, _ in matrices).rstrip()]
    lines.append("   ".join(header for _ in matrices))
    for row in range(size):
        cells = [
            f"S{row + 1:<3} " + "".join(_cell(value) for value in matrix[row])
            for _, matrix in matrices
        ]
        lines.append("   ".join(cells))
    return "\n".join(lines)


def _cell(value: float | None) -> str:
    return f"{'-':>7}" if value is None else f"{value:7.3f}"


def _vocabulary_line(form: str, report: dict[str, Any]) -> str:
    if report.get("in_vocabulary"):
        return f"'{form}' in its vocabulary"
    if report.get("built_from_ngrams"):
        return f"'{form}' unseen, built from {report['built_from_ngrams']} character n-grams"
    return f"'{form}' not in its vocabulary: no vector"


@click.command()
@click.argument("words", nargs=-1, required=True)
@click.option(
    "--corpus",
    type=click.Path(exists=True, path_type=Path),
    help="What word2vec and fasttext are trained on: a BEIR folder, a folder of documents "
    "or a file of one text per line (default: the 424 sentences that ship with ctxsearch).",
)
@click.option(
    "--methods", default=None, help="Comma-separated: glove, word2vec, fasttext (default: all)."
)
@click.option("-k", "count", default=5, show_default=True, help="How many neighbours.")
@work_dir_option
@json_option
@translate_lab_errors
def neighbours(
    words: tuple[str, ...],
    corpus: Path | None,
    methods: str | None,
    count: int,
    work_dir: Path | None,
    as_json: bool,
) -> None:
    """Does each word-vector method know WORDS, and which known words are nearest?

    \b
    GloVe knows its 400,000 words; Word2Vec only the words of the corpus it was trained
    on; FastText builds a vector for any word from its character n-grams, so a word it
    never saw still lands near its relatives.

    \b
    Examples:
      ctxsearch lab neighbours immunotherapies --corpus ../shared/eval/scifact
      ctxsearch lab neighbours riverbanks bank --methods word2vec,fasttext --json
    """
    from lab.datasets import load_texts
    from lab.similarity import bundled_sentences, word_neighbours

    if count < 1:
        raise click.UsageError("-k must be at least 1")
    texts = load_texts(corpus) if corpus is not None else bundled_sentences()
    result = word_neighbours(
        list(words), texts, methods=method_names(methods), work_dir=work_dir, count=count
    )
    echo_note(result)
    if as_json:
        echo_json(result)
        return
    for word, reports in result["words"].items():
        click.echo(word)
        for name, report in reports.items():
            line = _vocabulary_line(word.lower(), report)
            near = ", ".join(f"{other} {score:.3f}" for other, score in report["neighbours"])
            click.echo(f"  {name:<9} {line}" + (f"; nearest: {near}" if near else ""))

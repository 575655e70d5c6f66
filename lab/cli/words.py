"""The seed's word-level evaluations: `words` (analogies and word similarity, intrinsic)
and `classify` (a probe on frozen sentence vectors, extrinsic)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from lab.cli.errors import translate_lab_errors
from lab.cli.research import method_names, model_option, show_result, work_dir_option
from search.cli.common import BadInputError, json_option


@click.command()
@click.option(
    "--methods",
    default=None,
    help="Comma-separated (default: every installed one but the layers): glove, word2vec, "
    "fasttext, static, model2vec, contextual (the word alone through the model), "
    "contextual-corpus (its vectors averaged over the corpus), layer-0 ... layer-L "
    "(`layers`: each hidden layer, the word alone).",
)
@click.option(
    "--corpus",
    "corpora",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="What word2vec and fasttext are trained on and contextual-corpus averages over: a "
    "BEIR folder, a classification folder (the texts of its train.tsv), a folder of "
    "documents or a file of one text per line; repeatable (default: the 424 sentences "
    "that ship with ctxsearch).",
)
@click.option(
    "--vocabulary",
    default=30_000,
    show_default=True,
    help="Analogy answers come from GloVe 6B's this many most frequent words.",
)
@click.option(
    "--unrestricted",
    is_flag=True,
    help="Also answer analogies among all words of glove, word2vec and fasttext (slow: "
    "GloVe has 400,000).",
)
@click.option(
    "--per-word",
    default=10,
    show_default=True,
    help="contextual-corpus: occurrences averaged per word, at most.",
)
@click.option(
    "--analogies",
    type=click.Path(path_type=Path),
    help="An analogy file in questions-words.txt layout [gensim's test data].",
)
@click.option(
    "--wordsim353", type=click.Path(path_type=Path), help="Word pairs [gensim's wordsim353.tsv]."
)
@click.option(
    "--simlex999", type=click.Path(path_type=Path), help="Word pairs [gensim's simlex999.txt]."
)
@click.option("--out", type=click.Path(path_type=Path), help="Write report.md/.html, plot, JSON.")
@work_dir_option
@model_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@translate_lab_errors
def words_command(
    methods: str | None,
    corpora: tuple[Path, ...],
    vocabulary: int,
    unrestricted: bool,
    per_word: int,
    analogies: Path | None,
    wordsim353: Path | None,
    simlex999: Path | None,
    out: Path | None,
    work_dir: Path | None,
    model: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Intrinsic evaluation of word vectors: analogies, WordSim-353, SimLex-999.

    \b
    Analogies (Google's 19,544 questions) are answered by 3CosAdd among GloVe 6B's
    30,000 most frequent words that the method has a vector for; accuracy overall,
    semantic and syntactic, with coverage (the questions all of whose words are there).
    Word pairs: Spearman correlation of cosine with the human scores, with coverage.
    The test sets are read from gensim's test data (the classic extra). A word split
    into several tokens gets the mean of its tokens' vectors (static, model2vec) or of
    their hidden states (contextual).

    \b
    Examples:
      ctxsearch lab words
      ctxsearch lab words --methods glove --unrestricted --json
      ctxsearch lab words --corpus ../shared/eval/sst2 --out reports/words
      ctxsearch lab words --methods static,contextual,layers
    """
    from lab.datasets import load_texts
    from lab.intrinsic import evaluate_words
    from lab.similarity import bundled_sentences
    from search.cli.progress import ProgressBars

    texts = [text for corpus in corpora for text in load_texts(corpus)] or bundled_sentences()
    bars = ProgressBars(enabled=not quiet and not as_json)
    try:
        result = evaluate_words(
            method_names(methods),
            model=model,
            corpus=texts,
            work_dir=work_dir,
            vocabulary=vocabulary,
            analogies=analogies,
            pair_files={"wordsim353": wordsim353, "simlex999": simlex999},
            unrestricted=unrestricted,
            per_word=per_word,
            progress=lambda stage, done, total: bars.report(stage, done, total),
        )
    finally:
        bars.close()
    result["corpus"]["from"] = [str(corpus) for corpus in corpora] or ["bundled sentences"]
    from lab.word_report import write_words_report

    show_result(result, out, write_words_report, as_json, _words_table)


def _words_table(result: dict[str, Any]) -> str:
    from lab.word_report import reference_sentence

    vocabulary = result["vocabulary"]
    lines = [
        f"{result['questions']:,} analogy questions, answers among {vocabulary['source']}; "
        f"WordSim-353 {result['pairs']['wordsim353']} pairs, SimLex-999 "
        f"{result['pairs']['simlex999']} pairs; {result['wall_seconds']:.0f}s",
        f"{'method':<18} {'analogy':>7} {'sem':>6} {'syn':>6} {'answered':>8} "
        f"{'WS353':>7} {'pairs':>6} {'SimLex':>7} {'pairs':>6} {'setup s':>8}",
    ]
    for name, values in result["methods"].items():
        lines.append(
            f"{name:<18} {_figure(values['analogy']):>7} "
            f"{_figure(values['analogy_semantic'], 3):>6} "
            f"{_figure(values['analogy_syntactic'], 3):>6} {values['analogy_coverage']:>8.1%} "
            f"{_figure(values['wordsim353']):>7} {values['wordsim353_coverage']:>6.1%} "
            f"{_figure(values['simlex999']):>7} {values['simlex999_coverage']:>6.1%} "
            f"{_figure(values.get('setup_seconds'), 1):>8}"
        )
        if values.get("analogy_unrestricted") is not None:
            lines.append(
                f"{'':<18} unrestricted (all {values['analogy_unrestricted_candidates']:,} "
                f"words): {values['analogy_unrestricted']:.4f}, answered "
                f"{values['analogy_unrestricted_coverage']:.1%}"
            )
    if "reference" in result:
        lines.append(reference_sentence(result["reference"]))
    return "\n".join(lines)


def _figure(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@click.command()
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option(
    "--methods",
    default=None,
    help="Comma-separated (default: all but the layers): glove, word2vec, fasttext, static, "
    "model2vec, contextual (mean pooling), cls, max, mean-last2, mean-last4, layer-0 ... "
    "layer-L (`layers`: every layer), tfidf (the lexical baseline).",
)
@click.option(
    "--intrinsic",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The JSON of `ctxsearch lab words --json`: --out then also draws the two side by side.",
)
@click.option("--out", type=click.Path(path_type=Path), help="Write report.md/.html, plots, JSON.")
@work_dir_option
@model_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@translate_lab_errors
def classify_command(
    dataset_dir: Path,
    methods: str | None,
    intrinsic: Path | None,
    out: Path | None,
    work_dir: Path | None,
    model: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Sentence classification by a linear probe on each method's frozen text vectors.

    \b
    DATASET_DIR holds train.tsv, optional dev.tsv and test.tsv: tab-separated, a header
    line, a column named `label` (any labels) and one text column (SST-2's layout). A
    logistic regression is trained on train, its C chosen on dev (without dev.tsv: on a
    tenth held out of train), and scored once on test: accuracy and macro-F1. The model
    is never fine-tuned. Word2Vec and FastText are trained on the training texts.

    \b
    Examples:
      ctxsearch lab classify ../shared/eval/sst2
      ctxsearch lab classify ../shared/eval/sst2 --methods static,contextual,tfidf --json
      ctxsearch lab classify ../shared/eval/sst2 --out reports/sst2 --intrinsic words.json
    """
    import json

    from lab.classification import evaluate_classification
    from search.cli.progress import ProgressBars

    words = None
    if intrinsic is not None:
        try:
            words = json.loads(intrinsic.read_text(encoding="utf-8"))
            words["methods"].items()
        except (ValueError, KeyError, TypeError, AttributeError):
            raise BadInputError(
                f"{intrinsic}: not the JSON of `ctxsearch lab words --json`"
            ) from None
    bars = ProgressBars(enabled=not quiet and not as_json)
    try:
        result = evaluate_classification(
            dataset_dir,
            methods=method_names(methods),
            model=model,
            work_dir=work_dir,
            progress=lambda stage, done, total: bars.report(stage, done, total),
        )
    finally:
        bars.close()
    from lab.word_report import write_classification_report

    def write(result: dict[str, Any], out: Path) -> Path:
        return write_classification_report(result, out, words)

    show_result(result, out, write, as_json, _classification_table)


def _classification_table(result: dict[str, Any]) -> str:
    labels = ", ".join(f"{label} {count:,}" for label, count in result["labels"].items())
    lines = [
        f"{result['dataset']}: train {result['train']:,}, dev {result['dev']:,} "
        f"({result['dev_source']}), test {result['test']:,}; labels {labels}; "
        f"majority class {result['majority_accuracy']:.4f}; {result['wall_seconds']:.0f}s",
        f"{'method':<12} {'accuracy':>8} {'macro-F1':>8} {'C':>6} {'dev acc':>8} "
        f"{'C=1 acc':>8} {'encode s':>9} {'probe s':>8}",
    ]
    for name, values in result["methods"].items():
        lines.append(
            f"{name:<12} {values['accuracy']:>8.4f} {values['macro_f1']:>8.4f} "
            f"{values['C']:>6g} {values['dev_accuracy']:>8.4f} {values['c1_accuracy']:>8.4f} "
            f"{_figure(values.get('encode_seconds'), 1):>9} {values['probe_seconds']:>8.1f}"
        )
    lines.append("C chosen on dev by accuracy; C=1 acc: the reference setting, on test")
    return "\n".join(lines)

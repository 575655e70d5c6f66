"""Reports of `words` and `classify` in the style of `eval --out`: Markdown, HTML, PNG plots.

`write_words_report` draws the intrinsic figures of each method (`words.png`);
`write_classification_report` the test accuracy and macro-F1 of each probe
(`classification.png`) and, given the `words` result too, the two side by side per
method (`intrinsic-vs-extrinsic.png`), with a table of where their rankings disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab.agreement import INTRINSIC_MEASURES, compare_rankings
from lab.report import (
    FIGURE_WIDTH_IN,
    KIND_COLOURS,
    LAYER_COLOUR,
    MISSING,
    REPORT_HTML,
    REPORT_MD,
    STATIC_COLOUR,
    Cell,
    human_seconds,
    plot_style,
    pyplot,
    render_html,
    render_markdown,
)

WORDS_PNG = "words.png"
CLASSIFICATION_PNG = "classification.png"
SIDE_BY_SIDE_PNG = "intrinsic-vs-extrinsic.png"
KIND_COLOUR = {
    "static": STATIC_COLOUR,
    "contextual": KIND_COLOURS["pooling"],
    "pooling": KIND_COLOURS["pooling"],
    "layer": LAYER_COLOUR,
    "lexical": KIND_COLOURS["lexical"],
}

DISAGREEMENT_COLOUR = "#c00000"

Block = tuple[str, Any]


def write_words_report(result: dict[str, Any], out_dir: Path) -> Path:
    """report.md, report.html and words.png of a `words` result; returns report.md."""
    out_dir = _folder(out_dir)
    methods = result["methods"]
    title = f"Word-level intrinsic evaluation — {result.get('model') or 'word vectors'}"
    vocabulary = result["vocabulary"]
    blocks: list[Block] = [
        ("h1", title),
        ("p", [(words_protocol(result), "")]),
        ("table", _words_table(methods)),
    ]
    if "reference" in result:
        blocks.append(("p", [(reference_sentence(result["reference"]), "")]))
    panels = [
        (
            f"analogy accuracy\n(answers among {vocabulary['size']:,} words)",
            [methods[m].get("analogy") for m in methods],
        ),
        ("WordSim-353 Spearman", [methods[m].get("wordsim353") for m in methods]),
        ("SimLex-999 Spearman", [methods[m].get("simlex999") for m in methods]),
    ]
    _bar_panels(
        list(methods),
        [methods[m].get("kind", "") for m in methods],
        panels,
        out_dir / WORDS_PNG,
        "Intrinsic evaluation of word vectors",
    )
    blocks.append(("img", (WORDS_PNG, "Analogy accuracy and word-pair Spearman of each method")))
    return _write(blocks, title, out_dir)


def words_protocol(result: dict[str, Any]) -> str:
    """One paragraph saying what the `words` figures measure and how."""
    vocabulary = result["vocabulary"]
    return (
        f"{result['questions']:,} analogy questions (Google's questions-words.txt), answered "
        "by 3CosAdd: the word nearest to b - a + c, the three question words excluded. "
        f"Answers are searched among {vocabulary['source']} that the method has a vector "
        "for, and a question counts when its four words are among them (coverage). "
        "WordSim-353 and SimLex-999: Spearman correlation of the cosine of each pair with "
        "the human score, over the pairs both of whose words have a vector. A word the "
        "tokenizer splits into several tokens gets the mean of its tokens' vectors (token "
        "table, Model2Vec) or of their hidden states (contextual, special tokens left out); "
        "contextual is the word alone through the model, contextual-corpus its vectors "
        f"averaged over up to {result.get('per_word', 10)} sentences of the corpus "
        f"({result['corpus']['texts']:,} texts) that hold it."
    )


def reference_sentence(reference: dict[str, Any]) -> str:
    """GloVe's figures here against gensim's, in one sentence."""
    parts = [
        f"{name} {reference['measured'][name]:.4f} (gensim {expected:.4f})"
        for name, expected in reference["expected"].items()
        if reference["measured"].get(name) is not None
    ]
    verdict = "reproduced" if reference["reproduced"] else "NOT reproduced"
    return (
        f"GloVe 6B 50d against gensim's KeyedVectors: {', '.join(parts)}: {verdict} "
        f"within {reference['tolerance']}."
    )


def _words_table(methods: dict[str, Any]) -> tuple[list[Cell], list[list[Cell]]]:
    names = [
        "method",
        "analogy",
        "semantic",
        "syntactic",
        "answered",
        "WS-353",
        "pairs",
        "SimLex",
        "pairs",
        "setup",
    ]
    header = [Cell(names[0])] + [Cell(name, numeric=True) for name in names[1:]]
    body = []
    for name, values in methods.items():
        body.append(
            [
                Cell(name),
                _number(values.get("analogy")),
                _number(values.get("analogy_semantic")),
                _number(values.get("analogy_syntactic")),
                _share(values.get("analogy_coverage")),
                _number(values.get("wordsim353")),
                _share(values.get("wordsim353_coverage")),
                _number(values.get("simlex999")),
                _share(values.get("simlex999_coverage")),
                Cell(_seconds(values.get("setup_seconds")), numeric=True),
            ]
        )
    return header, body


def write_classification_report(
    result: dict[str, Any], out_dir: Path, words: dict[str, Any] | None = None
) -> Path:
    """report.md, report.html, classification.png (and, with the `words` result,
    intrinsic-vs-extrinsic.png) of a `classify` result; returns report.md."""
    out_dir = _folder(out_dir)
    methods = result["methods"]
    title = f"Sentence classification: {result['dataset']} — {result['model']}"
    blocks: list[Block] = [
        ("h1", title),
        ("p", [(classification_protocol(result), "")]),
        ("table", _classification_table(methods)),
    ]
    _bar_panels(
        list(methods),
        [methods[m].get("kind", "") for m in methods],
        [
            ("test accuracy", [methods[m]["accuracy"] for m in methods]),
            ("test macro-F1", [methods[m]["macro_f1"] for m in methods]),
        ],
        out_dir / CLASSIFICATION_PNG,
        f"Linear probe on frozen vectors — {result['dataset']}",
        baseline=(0, result.get("majority_accuracy")),
    )
    blocks.append(("img", (CLASSIFICATION_PNG, "Test accuracy and macro-F1 of each probe")))
    (out_dir / SIDE_BY_SIDE_PNG).unlink(missing_ok=True)
    if words is not None:
        comparison = compare_rankings(words, result)
        blocks += [("h2", "Intrinsic beside extrinsic"), ("table", _agreement_table(comparison))]
        blocks += [("p", [(line, "")]) for line in disagreement_lines(comparison)]
        draw_side_by_side(words, result, out_dir / SIDE_BY_SIDE_PNG)
        blocks.append(("img", (SIDE_BY_SIDE_PNG, "Intrinsic and extrinsic figures per method")))
    return _write(blocks, title, out_dir)


def classification_protocol(result: dict[str, Any]) -> str:
    """One paragraph saying how the `classify` figures were measured."""
    labels = ", ".join(f"{label} ({count:,})" for label, count in result["labels"].items())
    grid = ", ".join(f"{c:g}" for c in result["grid"])
    return (
        f"A logistic regression on each method's frozen text vectors, trained on "
        f"{result['train']:,} texts, its C chosen among {grid} by accuracy on "
        f"{result['dev']:,} dev texts ({result['dev_source']}), scored once on "
        f"{result['test']:,} test texts; the model is never fine-tuned. Training labels: "
        f"{labels}; always answering the most frequent one scores "
        f"{result['majority_accuracy']:.4f}. The C=1 column is the reference setting. "
        f"Wall time {human_seconds(result['wall_seconds'])}."
    )


def _classification_table(methods: dict[str, Any]) -> tuple[list[Cell], list[list[Cell]]]:
    names = ["method", "accuracy", "macro-F1", "C", "dev acc", "C=1 acc", "encode", "probe"]
    header = [Cell(names[0])] + [Cell(name, numeric=True) for name in names[1:]]
    best = max(values["accuracy"] for values in methods.values())
    body = []
    for name, values in methods.items():
        top = values["accuracy"] == best
        body.append(
            [
                Cell(name, bold=top),
                Cell(f"{values['accuracy']:.4f}", bold=top, numeric=True),
                _number(values.get("macro_f1")),
                Cell(f"{values['C']:g}", numeric=True),
                _number(values.get("dev_accuracy")),
                _number(values.get("c1_accuracy")),
                Cell(_seconds(values.get("encode_seconds")), numeric=True),
                Cell(_seconds(values.get("probe_seconds")), numeric=True),
            ]
        )
    return header, body


def _agreement_table(comparison: dict[str, Any]) -> tuple[list[Cell], list[list[Cell]]]:
    header = [Cell("intrinsic measure"), Cell("methods", numeric=True)]
    header += [Cell("Spearman with accuracy", numeric=True), Cell("pairs in opposite order")]
    body = []
    for measure, values in comparison["measures"].items():
        rho = values["spearman"]
        body.append(
            [
                Cell(INTRINSIC_MEASURES[measure]),
                Cell(str(values["methods"]), numeric=True),
                Cell(MISSING if rho is None else f"{rho:+.2f}", numeric=True),
                Cell(str(len(values["inversions"]))),
            ]
        )
    return header, body


def disagreement_lines(comparison: dict[str, Any], most: int = 3) -> list[str]:
    """The widest disagreements of each measure, one sentence each."""
    lines = []
    for measure, values in comparison["measures"].items():
        for item in values["inversions"][:most]:
            lines.append(
                f"{INTRINSIC_MEASURES[measure]}: {item['intrinsic_better']} beats "
                f"{item['extrinsic_better']} by {item['intrinsic_gap']:.3f}, yet classifies "
                f"{item['extrinsic_gap']:.3f} worse (accuracy)."
            )
    return lines


def draw_side_by_side(words: dict[str, Any], classify: dict[str, Any], path: Path) -> None:
    """One row per method measured by both: analogy, WS-353, SimLex, then test accuracy,
    each bar labelled with the method's rank in that panel, so that a rank that changes
    from the intrinsic panels to the extrinsic one shows where they disagree."""
    intrinsic, extrinsic = words["methods"], classify["methods"]
    shared = [m for m in intrinsic if m in extrinsic]
    panels = [
        (INTRINSIC_MEASURES[measure], [intrinsic[m].get(measure) for m in shared])
        for measure in INTRINSIC_MEASURES
    ]
    accuracy = [extrinsic[m]["accuracy"] for m in shared]
    panels.append((f"{classify['dataset']} test accuracy", accuracy))
    _bar_panels(
        shared,
        [intrinsic[m].get("kind", "") for m in shared],
        panels,
        path,
        f"Intrinsic (words) beside extrinsic (classification) — {classify['model']}",
        ranks=True,
        baseline=(len(panels) - 1, classify.get("majority_accuracy")),
    )


def _bar_panels(
    names: Sequence[str],
    kinds: Sequence[str],
    panels: Sequence[tuple[str, Sequence[float | None]]],
    path: Path,
    title: str,
    ranks: bool = False,
    baseline: tuple[int, float | None] | None = None,
) -> None:
    """Horizontal bars, one row per method (first on top), one panel per measure.

    `baseline` (panel, value) draws a dashed line there (the majority class's accuracy).
    With `ranks`, each bar is labelled with its rank in its panel, in red where that
    differs from its rank in the last panel."""
    plt = pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows = list(range(len(names)))[::-1]
    height = max(3.6, 1.8 + 0.42 * len(names))
    with plt.rc_context(plot_style()):
        fig, axes = plt.subplots(
            1,
            len(panels),
            figsize=(FIGURE_WIDTH_IN * (1.2 if len(panels) > 3 else 1.0), height),
            sharey=True,
            squeeze=False,
            layout="constrained",
        )
        try:
            colours = [KIND_COLOUR.get(kind, "#7f7f7f") for kind in kinds]
            last = _ranks(panels[-1][1]) if ranks else {}
            for number, (ax, (label, values)) in enumerate(zip(axes[0], panels, strict=True)):
                drawn = [math.nan if v is None else float(v) for v in values]
                bars = ax.barh(rows, [0.0 if math.isnan(v) else v for v in drawn], color=colours)
                order = _ranks(values) if ranks else {}
                texts = ax.bar_label(
                    bars,
                    labels=[
                        MISSING
                        if v is None
                        else f"{v:.3f}" + (f"  #{order[i]}" if i in order else "")
                        for i, v in enumerate(values)
                    ],
                    padding=3,
                    fontsize=9,
                )
                for i, text in enumerate(texts):
                    if i in order and i in last and order[i] != last[i]:
                        text.set_color(DISAGREEMENT_COLOUR)  # ranked otherwise by accuracy
                known = [v for v in drawn if not math.isnan(v)]
                top = max(known, default=1.0)
                ax.set_xlim(min(0.0, min(known, default=0.0)), max(top, 0.05) * 1.3)
                # Room for the labels on the right, but no tick past a score's 1.0.
                ax.set_xticks([tick for tick in ax.get_xticks() if tick <= 1.0])
                if baseline is not None and baseline[1] is not None and number == baseline[0]:
                    ax.axvline(baseline[1], linestyle="--", color="#555555", linewidth=1)
                ax.set_title(label, fontsize=11)
                ax.grid(axis="x", alpha=0.3)
            legend = [
                Patch(color=KIND_COLOUR[kind], label=kind)
                for kind in dict.fromkeys(kinds)
                if kind in KIND_COLOUR
            ]
            if baseline is not None and baseline[1] is not None:
                legend.append(
                    Line2D([], [], linestyle="--", color="#555555", label="majority class")
                )
            if ranks:
                legend.append(Patch(color=DISAGREEMENT_COLOUR, label="rank unlike accuracy's"))
            fig.legend(handles=legend, loc="outside lower center", ncols=len(legend), frameon=False)
            axes[0][0].set_yticks(rows, list(names))
            fig.suptitle(title, fontsize=13)
            fig.savefig(path)
        finally:
            plt.close(fig)


def _ranks(values: Sequence[float | None]) -> dict[int, int]:
    known = sorted((v for v in values if v is not None), reverse=True)
    return {i: known.index(v) + 1 for i, v in enumerate(values) if v is not None}


def _number(value: Any) -> Cell:
    return Cell(MISSING if value is None else f"{value:.4f}", numeric=True)


def _share(value: Any) -> Cell:
    return Cell(MISSING if value is None else f"{value:.1%}", numeric=True)


def _seconds(value: Any) -> str:
    return MISSING if value is None else human_seconds(float(value))


def _folder(out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir


def _write(blocks: list[Block], title: str, out_dir: Path) -> Path:
    markdown = out_dir / REPORT_MD
    markdown.write_text(render_markdown(blocks), encoding="utf-8")
    (out_dir / REPORT_HTML).write_text(render_html(blocks, title), encoding="utf-8")
    return markdown

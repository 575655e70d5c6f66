"""Turn a retrieval evaluation result into a Markdown + HTML report with PNG plots.

    from lab.report import write_report
    write_report(json.loads(Path("eval.json").read_text()), Path("report/"))

The input is the JSON object `ctxsearch lab eval --json` prints. matplotlib is imported inside
the plotting functions, so importing this module stays cheap.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

METRICS = (
    ("ndcg@10", "nDCG@10"),
    ("mrr@10", "MRR@10"),
    ("recall@100", "Recall@100"),
    ("map@100", "MAP@100"),
)
HEADLINE = "ndcg@10"
MISSING = "\u2014"  # an em dash, shown for values the result does not have

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
METHODS_PNG = "methods.png"
LAYERS_PNG = "layers.png"
STATIC_VS_CONTEXTUAL_PNG = "static-vs-contextual.png"

# 10 in at 100 dpi: 1000 px wide, the size the plots are meant to be read at.
FIGURE_WIDTH_IN = 10.0
FIGURE_DPI = 100

STATIC_COLOUR = "#d95f02"
KIND_COLOURS = {"pooling": "#1f77b4", "lexical": "#2ca02c", "hybrid": "#7b3294"}
OTHER_COLOUR = "#7f7f7f"
LAYER_COLOUR = "#6baed6"

# The static methods in the order of the story: classic word vectors, then the model's
# own token table, then the table distilled from the whole model.
STATIC_ORDER = ("glove", "word2vec", "fasttext", "static", "model2vec")
STATIC_LABELS = {
    "glove": "GloVe 6B 50d",
    "word2vec": "Word2Vec (trained on corpus)",
    "fasttext": "FastText (trained on corpus)",
    "static": "token table (static)",
    "model2vec": "Model2Vec (distilled)",
}
METRIC_COLOURS = {"ndcg@10": "#1f77b4", "recall@100": "#2ca02c", "mrr@10": "#9467bd"}

_LAYER_NAME = re.compile(r"^layer-(\d+)$")


@dataclass(frozen=True)
class Method:
    """One row of the result: a method's name, kind, layer (if any) and its numbers."""

    name: str
    kind: str
    layer: int | None
    values: dict[str, Any] = field(default_factory=dict)

    def metric(self, key: str) -> float | None:
        """The value of a metric as a float, or None when missing or not a number."""
        value = self.values.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return None if math.isnan(value) else float(value)


def write_report(result: dict, out_dir: Path) -> Path:
    """Write report.md, report.html, methods.png and layers.png into out_dir; return report.md.

    layers.png is only written (and referenced) when the result has per-layer methods, and
    methods.png only when at least one non-layer method has an nDCG@10.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    methods, layers = split_methods(result.get("methods") or {})

    images: list[tuple[str, str]] = []
    if any(m.metric(HEADLINE) is not None for m in methods):
        _plot_methods(result, methods, out_dir / METHODS_PNG)
        images.append((METHODS_PNG, "nDCG@10 and Recall@100 of each method"))
    if any(m.metric(HEADLINE) is not None for m in layers):
        _plot_layers(result, layers, _find(methods, "static"), out_dir / LAYERS_PNG)
        images.append((LAYERS_PNG, "Retrieval quality of each hidden layer, mean-pooled"))
    groups = static_vs_contextual_groups(methods, layers)
    if groups[0][1] and any(rows for _, rows in groups[1:]):
        _plot_static_vs_contextual(result, groups, out_dir / STATIC_VS_CONTEXTUAL_PNG)
        images.append(
            (
                STATIC_VS_CONTEXTUAL_PNG,
                "Static vs contextual: nDCG@10 and documents encoded per second, per method",
            )
        )
    for stale in {METHODS_PNG, LAYERS_PNG, STATIC_VS_CONTEXTUAL_PNG} - {name for name, _ in images}:
        # A plot left over from an earlier run in the same folder would contradict the report.
        (out_dir / stale).unlink(missing_ok=True)

    blocks = _build_blocks(result, methods, layers, images)
    markdown_path = out_dir / REPORT_MD
    markdown_path.write_text(render_markdown(blocks), encoding="utf-8")
    (out_dir / REPORT_HTML).write_text(render_html(blocks, _title(result)), encoding="utf-8")
    return markdown_path


def split_methods(raw: dict[str, dict]) -> tuple[list[Method], list[Method]]:
    """Non-layer methods sorted by nDCG@10 (best first), and layer methods in layer order."""
    methods: list[Method] = []
    layers: list[Method] = []
    for name, values in raw.items():
        values = values if isinstance(values, dict) else {}
        match = _LAYER_NAME.match(name)
        kind = values.get("kind") or _default_kind(name)
        if kind == "layer":
            layer = values.get("layer")
            if not isinstance(layer, int):
                layer = int(match.group(1)) if match else None
            layers.append(Method(name, kind, layer, values))
        else:
            methods.append(Method(name, str(kind), None, values))
    methods.sort(key=lambda m: (m.metric(HEADLINE) is None, -(m.metric(HEADLINE) or 0.0)))
    layers.sort(key=lambda m: (m.layer is None, m.layer if m.layer is not None else 0, m.name))
    return methods, layers


def static_vs_contextual_groups(
    methods: list[Method], layers: list[Method]
) -> list[tuple[str, list[Method]]]:
    """The scored methods in the figure's groups: static, contextual, lexical.

    Static in the order of STATIC_ORDER; contextual as poolings, layers, then hybrids.
    """
    scored = [m for m in methods + layers if m.metric(HEADLINE) is not None]
    static = sorted(
        (m for m in scored if m.kind == "static"),
        key=lambda m: (STATIC_ORDER.index(m.name) if m.name in STATIC_ORDER else 99, m.name),
    )
    contextual = [m for m in scored if m.kind == "pooling"]
    contextual.sort(key=lambda m: (m.name != "contextual", m.name))
    contextual += sorted(
        (m for m in scored if m.kind == "layer"), key=lambda m: (m.layer or 0, m.name)
    )
    contextual += [m for m in scored if m.kind == "hybrid"]
    lexical = [m for m in scored if m.kind == "lexical"]
    return [("static", static), ("contextual", contextual), ("lexical", lexical)]


def _default_kind(name: str) -> str:
    """The kind of a method whose result has no "kind", guessed from its name."""
    if name in STATIC_ORDER:
        return "static"
    if _LAYER_NAME.match(name):
        return "layer"
    if name in ("contextual", "cls", "max", "mean") or name.startswith("mean-last"):
        return "pooling"
    return "other"


def human_bytes(size: float | None) -> str:
    """A byte count as a short human-readable size in binary units, e.g. 7960000 -> '7.6 MB'."""
    if size is None:
        return MISSING
    if size < 1024:
        return f"{size:.0f} B"
    for unit in ("KB", "MB", "GB", "TB"):
        size /= 1024
        if size < 1024 or unit == "TB":
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")


def human_seconds(seconds: float) -> str:
    """A duration as '41.2 s', '6 min 52 s' or '1 h 02 min'."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


# --- content, independent of the output format ------------------------------------------------

# A paragraph is a list of (text, style) runs, style one of "", "strong", "code".
Runs = list[tuple[str, str]]


@dataclass
class Cell:
    """One table cell: its text, whether it is bold and whether it is a number (right-aligned)."""

    text: str
    bold: bool = False
    numeric: bool = False


def _title(result: dict) -> str:
    dataset = str(result.get("dataset", "unknown dataset"))
    split = f" ({result['split']})" if result.get("split") else ""
    model = f" — {result['model']}" if result.get("model") else ""
    return f"Retrieval evaluation: {dataset}{split}{model}"


def _build_blocks(
    result: dict, methods: list[Method], layers: list[Method], images: list[tuple[str, str]]
) -> list[tuple[str, Any]]:
    blocks: list[tuple[str, Any]] = [("h1", _title(result))]
    blocks.append(("p", _explanation(methods, layers)))
    setup = _setup_line(result)
    if setup:
        blocks.append(("p", setup))
    blocks.append(("h2", "Results"))
    blocks.append(("p", [(_METRICS_NOTE, "")]))
    blocks.append(("table", _table(methods + layers)))
    for sentence in _findings(methods, layers):
        blocks.append(("p", sentence))
    if images:
        blocks.append(("h2", "Plots"))
        for src, alt in images:
            blocks.append(("img", (src, alt)))
    return blocks


_METRICS_NOTE = (
    "nDCG@10 and MRR@10 reward putting relevant documents near the top of the first ten hits; "
    "Recall@100 is the share of relevant documents found in the first hundred; MAP@100 "
    "averages precision over them. Higher is better for all four."
)


def _explanation(methods: list[Method], layers: list[Method]) -> Runs:
    runs: Runs = [
        ("Static", "strong"),
        (
            " embeddings look every token up in the model's input token-embedding table and "
            "average the vectors, with no context: a word gets the same vector wherever it "
            "appears, so the “bank” of a river and a savings bank are one point. ",
            "",
        ),
        ("Contextual", "strong"),
        (
            " embeddings run the whole transformer and mean-pool its last layer, so each "
            "token's vector depends on the words around it.",
            "",
        ),
    ]
    classic = [m.name for m in methods if m.kind == "static" and m.name != "static"]
    if classic:
        runs.append((" The other static rows (", ""))
        for i, name in enumerate(sorted(classic, key=_static_rank)):
            runs += [(", ", "")] if i else []
            runs.append((name, "code"))
        runs.append(
            (
                ") are static too: GloVe's pre-trained word vectors, Word2Vec and FastText "
                "trained on this corpus (FastText builds unseen words from character "
                "n-grams), and Model2Vec, a token table distilled from the transformer.",
                "",
            )
        )
    others = [m.name for m in methods if m.kind == "pooling" and m.name != "contextual"]
    if others:
        runs.append((" The other pooling rows (", ""))
        for i, name in enumerate(others):
            runs += [(", ", "")] if i else []
            runs.append((name, "code"))
        runs.append((") pool the same transformer's hidden states in other ways.", ""))
    if layers:
        runs.append((" The ", ""))
        runs.append(("layer", "code"))
        runs.append(
            (
                " rows mean-pool one hidden layer each: layer 0 is the embedding output, before "
                "any attention, and each later layer has seen more context.",
                "",
            )
        )
    return runs


def _setup_line(result: dict) -> Runs:
    parts: list[str] = []
    documents = result.get("documents")
    if isinstance(documents, int):
        parts.append(f"{documents:,} documents")
    if isinstance(result.get("queries"), int):
        parts.append(f"{result['queries']:,} queries")
    if isinstance(result.get("wall_seconds"), (int, float)):
        parts.append(f"wall time {human_seconds(result['wall_seconds'])}")
    truncated = result.get("truncated_documents")
    if isinstance(truncated, int):
        text = f"{truncated:,} documents truncated"
        if isinstance(documents, int) and documents > 0:
            text += f" ({truncated / documents:.0%})"
        if isinstance(result.get("max_tokens"), int):
            text += f" to {result['max_tokens']} tokens"
        parts.append(text)
    elif isinstance(result.get("max_tokens"), int):
        parts.append(f"at most {result['max_tokens']} tokens per document")
    return [("Setup: " + "; ".join(parts) + ".", "")] if parts else []


def _table(rows: list[Method]) -> tuple[list[Cell], list[list[Cell]]]:
    header = [Cell("method")] + [Cell(label, numeric=True) for _, label in METRICS]
    header += [Cell("docs/s", numeric=True), Cell("query ms", numeric=True)]
    header += [Cell("index size", numeric=True)]
    scores = [m.metric(HEADLINE) for m in rows]
    best = max((s for s in scores if s is not None), default=None)
    body: list[list[Cell]] = []
    for method, score in zip(rows, scores, strict=True):
        # Compare rounded values so a tie in the printed digits bolds every tied row.
        is_best = score is not None and best is not None and round(score, 3) == round(best, 3)
        row = [Cell(method.name, bold=is_best)]
        for key, _ in METRICS:
            value = method.metric(key)
            text = MISSING if value is None else f"{value:.3f}"
            row.append(Cell(text, bold=is_best and key == HEADLINE, numeric=True))
        row.append(Cell(_format_rate(method.metric("docs_per_second")), numeric=True))
        row.append(Cell(_format_ms(method.metric("query_ms")), numeric=True))
        row.append(Cell(human_bytes(method.metric("index_bytes")), numeric=True))
        body.append(row)
    return header, body


def _format_rate(value: float | None) -> str:
    if value is None:
        return MISSING
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _format_ms(value: float | None) -> str:
    if value is None:
        return MISSING
    return f"{value:.2f}" if value < 10 else f"{value:,.1f}"


def _find(methods: list[Method], name: str) -> Method | None:
    return next((m for m in methods if m.name == name), None)


def _findings(methods: list[Method], layers: list[Method]) -> list[Runs]:
    sentences: list[Runs] = []
    scored = [m for m in methods + layers if m.metric(HEADLINE) is not None]
    if scored:
        best = max(scored, key=lambda m: m.metric(HEADLINE) or 0.0)
        sentences.append(
            [
                ("Best nDCG@10: ", ""),
                (best.name, "strong"),
                (f" ({best.metric(HEADLINE):.3f}).", ""),
            ]
        )
    static, contextual = _find(methods, "static"), _find(methods, "contextual")
    s = static.metric(HEADLINE) if static else None
    c = contextual.metric(HEADLINE) if contextual else None
    if s is not None and c is not None:
        gain = c - s
        lead = "Context pays off" if gain > 0 else "Context does not pay off here"
        relative = f", {gain / s:+.1%} relative" if s > 0 else ""
        sentences.append(
            [
                (
                    f"{lead}: contextual scores {c:.3f} nDCG@10 against {s:.3f} for static, "
                    f"a {'gain' if gain > 0 else 'change'} of {gain:+.3f} absolute{relative}.",
                    "",
                )
            ]
        )
    trade_off = _trade_off(methods)
    if trade_off:
        sentences.append(trade_off)
    scored_layers = [m for m in layers if m.metric(HEADLINE) is not None]
    if scored_layers:
        top = max(scored_layers, key=lambda m: m.metric(HEADLINE) or 0.0)
        first, last = scored_layers[0], scored_layers[-1]
        top_text = f"{_layer_label(top)} (nDCG@10 {top.metric(HEADLINE):.3f})"
        start = f"{_layer_label(first)} scores {first.metric(HEADLINE):.3f}"
        if len(scored_layers) == 1:
            text = f"The best layer is {top_text}."
        elif top is last:
            text = f"The best layer is the last one, {top_text}; {start}."
        else:
            text = (
                f"The best layer is {top_text}, ahead of the last one, {_layer_label(last)} "
                f"({last.metric(HEADLINE):.3f}); {start}."
            )
        sentences.append([(text, "")])
    return sentences


def _static_rank(name: str) -> int:
    return STATIC_ORDER.index(name) if name in STATIC_ORDER else len(STATIC_ORDER)


def _trade_off(methods: list[Method]) -> Runs:
    """One sentence: the best static method against contextual, in quality and speed."""
    statics = [m for m in methods if m.kind == "static" and m.metric(HEADLINE) is not None]
    contextual = _find(methods, "contextual")
    if len(statics) < 2 or contextual is None or contextual.metric(HEADLINE) is None:
        return []
    best = max(statics, key=lambda m: m.metric(HEADLINE) or 0.0)
    text = (
        f"The best static method, {best.name}, reaches {best.metric(HEADLINE):.3f} nDCG@10 "
        f"against {contextual.metric(HEADLINE):.3f} for contextual"
    )
    fast, slow = best.metric("docs_per_second"), contextual.metric("docs_per_second")
    if fast and slow:
        text += f", and encodes {fast / slow:,.0f} times as many documents per second"
    return [(text + ".", "")]


def _layer_label(method: Method) -> str:
    return f"layer {method.layer}" if method.layer is not None else method.name


# --- renderers ---------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_runs(runs: Runs) -> str:
    parts = []
    for text, style in runs:
        if style == "code":
            parts.append(f"`{text}`")
        elif style == "strong":
            parts.append(f"**{_md_escape(text)}**")
        else:
            parts.append(_md_escape(text))
    return "".join(parts)


def _md_cell(cell: Cell) -> str:
    text = _md_escape(cell.text)
    return f"**{text}**" if cell.bold else text


def render_markdown(blocks: list[tuple[str, Any]]) -> str:
    """Markdown of report blocks: ("h1"|"h2", text), ("p", runs), ("table", (header, rows)),
    ("img", (src, alt))."""
    out: list[str] = []
    for kind, content in blocks:
        if kind == "h1":
            out.append(f"# {_md_escape(content)}")
        elif kind == "h2":
            out.append(f"## {_md_escape(content)}")
        elif kind == "p":
            out.append(_md_runs(content))
        elif kind == "table":
            header, body = content
            lines = ["| " + " | ".join(_md_cell(c) for c in header) + " |"]
            lines.append("|" + "|".join("---:" if c.numeric else ":---" for c in header) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in body]
            out.append("\n".join(lines))
        elif kind == "img":
            src, alt = content
            out.append(f"![{_md_escape(alt)}]({src})")
    return "\n\n".join(out) + "\n"


def _html_runs(runs: Runs) -> str:
    tags = {"strong": "strong", "code": "code"}
    parts = []
    for text, style in runs:
        escaped = html.escape(text)
        parts.append(f"<{tags[style]}>{escaped}</{tags[style]}>" if style in tags else escaped)
    return "".join(parts)


def _html_cell(cell: Cell, tag: str) -> str:
    text = html.escape(cell.text)
    text = f"<strong>{text}</strong>" if cell.bold else text
    attr = ' class="num"' if cell.numeric else ""
    return f"<{tag}{attr}>{text}</{tag}>"


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 64rem;
       margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: 0.3rem 0.7rem; border-bottom: 1px solid #ddd; text-align: left; }
th { border-bottom: 2px solid #999; }
.num { text-align: right; }
tbody tr:hover { background: #f4f7fb; }
img { max-width: 100%; height: auto; display: block; margin: 1rem 0; }
code { background: #f2f2f2; padding: 0 0.2rem; border-radius: 3px; }
"""


def render_html(blocks: list[tuple[str, Any]], title: str) -> str:
    """A standalone HTML page of the same report blocks as `render_markdown`."""
    body: list[str] = []
    for kind, content in blocks:
        if kind in ("h1", "h2"):
            body.append(f"<{kind}>{html.escape(content)}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{_html_runs(content)}</p>")
        elif kind == "table":
            header, rows = content
            head = "<tr>" + "".join(_html_cell(c, "th") for c in header) + "</tr>"
            lines = ["<tr>" + "".join(_html_cell(c, "td") for c in row) + "</tr>" for row in rows]
            body.append(
                f"<table>\n<thead>{head}</thead>\n<tbody>\n"
                + "\n".join(lines)
                + "\n</tbody>\n</table>"
            )
        elif kind == "img":
            src, alt = content
            body.append(f'<img src="{html.escape(src)}" alt="{html.escape(alt)}">')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# --- plots -------------------------------------------------------------------------------------


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (files only, no display), imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_style() -> dict[str, Any]:
    """The rc settings every lab plot is drawn with."""
    return {
        "font.size": 11,
        "axes.titlesize": 13,
        "axes.labelsize": 11,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "figure.dpi": FIGURE_DPI,
        "savefig.dpi": FIGURE_DPI,
    }


def _subtitle(result: dict) -> str:
    parts = [str(result.get("dataset", ""))]
    if result.get("split"):
        parts[0] += f" ({result['split']})"
    if result.get("model"):
        parts.append(str(result["model"]))
    return " · ".join(p for p in parts if p)


def _colour(method: Method) -> str:
    if method.kind == "static":
        return STATIC_COLOUR
    return KIND_COLOURS.get(method.kind, OTHER_COLOUR)


def _plot_methods(result: dict, methods: list[Method], path: Path) -> None:
    plt = pyplot()
    from matplotlib.patches import Patch

    # Best first in the table means best on top here, and barh draws index 0 at the bottom.
    shown = [m for m in methods if m.metric(HEADLINE) is not None][::-1]
    panels = [("ndcg@10", "nDCG@10")]
    if any(m.metric("recall@100") is not None for m in shown):
        panels.append(("recall@100", "Recall@100"))
    height = max(3.6, 1.9 + 0.42 * len(shown))
    with plt.rc_context(plot_style()):
        fig, axes = plt.subplots(
            1,
            len(panels),
            figsize=(FIGURE_WIDTH_IN, height),
            sharey=True,
            squeeze=False,
            layout="constrained",
        )
        try:
            positions = list(range(len(shown)))
            colours = [_colour(m) for m in shown]
            for ax, (key, label) in zip(axes[0], panels, strict=True):
                values = [m.metric(key) for m in shown]
                bars = ax.barh(
                    positions, [v or 0.0 for v in values], color=colours, height=0.7, zorder=2
                )
                ax.bar_label(
                    bars,
                    labels=[MISSING if v is None else f"{v:.3f}" for v in values],
                    padding=4,
                    fontsize=10,
                )
                top = max((v for v in values if v is not None), default=1.0)
                # Headroom on the right so the value labels stay inside the axes.
                ax.set_xlim(0, min(1.0, top) * 1.18 if top > 0 else 1.0)
                ax.set_xlabel(f"{label} (higher is better)")
                ax.set_title(label)
                ax.grid(axis="x", alpha=0.3, zorder=0)
            axes[0][0].set_yticks(positions, [m.name for m in shown])
            axes[0][0].set_ylabel("method")
            kinds: dict[str, str] = {}
            for m in shown:
                kinds.setdefault(m.kind, _colour(m))
            if len(kinds) > 1:
                fig.legend(
                    handles=[Patch(color=c, label=k) for k, c in kinds.items()],
                    loc="outside lower center",
                    ncols=len(kinds),
                    frameon=False,
                )
            fig.suptitle(f"Retrieval quality by method — {_subtitle(result)}", fontsize=13)
            fig.savefig(path)
        finally:
            plt.close(fig)


def _plot_layers(result: dict, layers: list[Method], static: Method | None, path: Path) -> None:
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    shown = [m for m in layers if m.layer is not None and m.metric(HEADLINE) is not None]
    if not shown:
        # Layers without a number cannot be placed on the x axis; number them in order.
        shown = [Method(m.name, m.kind, i, m.values) for i, m in enumerate(layers)]
    xs = [m.layer for m in shown]
    with plt.rc_context(plot_style()):
        fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 5.5), layout="constrained")
        try:
            best = max(shown, key=lambda m: m.metric(HEADLINE) or 0.0)
            best_score = best.metric(HEADLINE) or 0.0
            highest = 0.0
            for (key, label), marker in zip(
                [METRICS[0], METRICS[2], METRICS[1]], ("o", "s", "^"), strict=True
            ):
                values = [m.metric(key) for m in shown]
                if all(v is None for v in values):
                    continue
                highest = max([highest] + [v for v in values if v is not None])
                if key == HEADLINE:
                    # The best value goes in the legend: a text label on the plot would
                    # collide with whichever line runs just below it.
                    label += f" (best {best_score:.3f} at layer {best.layer})"
                ax.plot(
                    xs,
                    [math.nan if v is None else v for v in values],
                    marker=marker,
                    markersize=7,
                    linewidth=2,
                    label=label,
                    color=METRIC_COLOURS[key],
                    zorder=3,
                )
            ax.scatter(
                [best.layer],
                [best_score],
                s=260,
                facecolors="none",
                edgecolors=METRIC_COLOURS[HEADLINE],
                linewidths=1.8,
                zorder=4,
            )
            static_score = static.metric(HEADLINE) if static else None
            if static_score is not None:
                highest = max(highest, static_score)
                ax.axhline(
                    static_score,
                    linestyle="--",
                    linewidth=1.5,
                    color=STATIC_COLOUR,
                    label=f"static nDCG@10 ({static_score:.3f})",
                )
            if len(xs) <= 25:
                ax.set_xticks(xs)
            else:
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            # A little above 1.0 at most, so a perfect score's marker is not cut in half.
            ax.set_ylim(0, min(1.04, highest * 1.12) if highest > 0 else 1.0)
            ax.set_xlabel("hidden layer (0 = embedding output)")
            ax.set_ylabel("score (higher is better)")
            ax.set_title(f"Mean-pooled hidden layers — {_subtitle(result)}")
            ax.grid(alpha=0.3)
            ax.legend(loc="best", frameon=True)
            fig.savefig(path)
        finally:
            plt.close(fig)


def _plot_static_vs_contextual(
    result: dict, groups: list[tuple[str, list[Method]]], path: Path
) -> None:
    """Two panels sharing one row per method: nDCG@10, and documents encoded per second.

    Rows are grouped (static, contextual, lexical) with a gap between groups, so the
    quality-speed trade-off reads at a glance: long bars on the left, short on the right.
    """
    plt = pyplot()
    from matplotlib.patches import Patch

    rows: list[tuple[Method | None, str]] = []
    for group, members in groups:
        if members:
            rows.append((None, group))  # the group's heading row, left empty
            rows += [(m, group) for m in members]
    rows = rows[::-1]  # barh draws index 0 at the bottom: first group on top
    positions = [i for i, (m, _) in enumerate(rows) if m is not None]
    shown = [(m, group) for m, group in rows if m is not None]
    colours = {"static": STATIC_COLOUR, "lexical": KIND_COLOURS["lexical"]}

    def colour(method: Method, group: str) -> str:
        if group == "contextual":
            return {"layer": LAYER_COLOUR, "hybrid": KIND_COLOURS["hybrid"]}.get(
                method.kind, KIND_COLOURS["pooling"]
            )
        return colours[group]

    height = max(4.0, 2.0 + 0.3 * len(rows))
    with plt.rc_context(plot_style()):
        fig, (quality, speed) = plt.subplots(
            1,
            2,
            figsize=(FIGURE_WIDTH_IN, height),
            sharey=True,
            layout="constrained",
            gridspec_kw={"width_ratios": [1.15, 1]},
        )
        try:
            bar_colours = [colour(m, g) for m, g in shown]
            scores = [m.metric(HEADLINE) or 0.0 for m, _ in shown]
            bars = quality.barh(positions, scores, color=bar_colours, height=0.72, zorder=2)
            quality.bar_label(bars, labels=[f"{v:.3f}" for v in scores], padding=3, fontsize=9)
            quality.set_xlim(0, min(1.0, max(scores)) * 1.2 if max(scores) > 0 else 1.0)
            quality.set_xlabel("nDCG@10 (higher is better)")
            quality.set_title("Retrieval quality")
            quality.grid(axis="x", alpha=0.3, zorder=0)

            rates = [m.metric("docs_per_second") for m, _ in shown]
            drawn = [r if r and r > 0 else math.nan for r in rates]
            bars = speed.barh(positions, drawn, color=bar_colours, height=0.72, zorder=2)
            speed.bar_label(
                bars,
                labels=[MISSING if r is None or r <= 0 else _format_rate(r) for r in rates],
                padding=3,
                fontsize=9,
            )
            known = [r for r in rates if r and r > 0]
            if known:  # a log axis needs at least one positive value
                speed.set_xscale("log")
                speed.set_xlim(min(known) / 3, max(known) * 12)
            speed.set_xlabel("documents encoded per second (log scale)")
            speed.set_title("Encoding speed (higher is faster)")
            speed.grid(axis="x", alpha=0.3, zorder=0)

            labels = [
                _figure_label(m) if m is not None else f"{group.upper()} " for m, group in rows
            ]
            quality.set_yticks(range(len(rows)), labels, fontsize=9)
            for tick, (m, _) in zip(quality.get_yticklabels(), rows, strict=True):
                if m is None:
                    tick.set_fontweight("bold")
            quality.tick_params(axis="y", length=0)
            quality.set_ylim(-0.7, len(rows) - 0.3)
            legend = [Patch(color=STATIC_COLOUR, label="static: one vector per word or token")]
            kinds = {m.kind for m, g in shown if g == "contextual"}
            if "pooling" in kinds:
                legend.append(Patch(color=KIND_COLOURS["pooling"], label="contextual pooling"))
            if "layer" in kinds:
                legend.append(Patch(color=LAYER_COLOUR, label="one hidden layer"))
            if "hybrid" in kinds:
                legend.append(Patch(color=KIND_COLOURS["hybrid"], label="hybrid (+ BM25)"))
            if any(g == "lexical" for _, g in shown):
                legend.append(Patch(color=KIND_COLOURS["lexical"], label="lexical (BM25)"))
            fig.legend(
                handles=legend,
                loc="outside lower center",
                ncols=min(len(legend), 3),
                frameon=False,
                fontsize=9,
            )
            fig.suptitle(f"Static vs contextual — {_subtitle(result)}", fontsize=13)
            fig.savefig(path)
        finally:
            plt.close(fig)


def _figure_label(method: Method) -> str:
    if method.name in STATIC_LABELS:
        return STATIC_LABELS[method.name]
    if method.name == "contextual":
        return "contextual (mean, last layer)"
    return method.name

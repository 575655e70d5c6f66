"""Calibrating `match` (`search.match`): collect each hit's evidence on judged queries and on
queries with no answer, choose the thresholds on one half of the queries, report on the other.

    python -m lab.match_calibration collect --set NAME --index DIR --queries FILE
        --qrels FILE [--qrels FILE] [--root DIR] --out FEATURES.jsonl
    python -m lab.match_calibration fit FEATURES.jsonl ... [--report OUT.json]

`collect` searches every judged query of a set and every query of
tests/data/no-answer-queries.jsonl (nonsense and off-topic, none answered by any
collection), 10 hits deep in each mode, and writes one line per hit: its similarity, term
coverage, label, and whether the qrels judge it relevant. A query is in the calibration
half when the CRC-32 of its set and id (a no-answer query's: its id) is even, else held
out. `fit` grid-searches the thresholds on the calibration half and reports precision and
recall per label on both.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import zlib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np

from search.match import MATCH_LABELS, NONE, MatchEvidence, match_label
from search.match_thresholds import MatchThresholds

NO_ANSWER = Path(__file__).resolve().parents[1] / "tests/data/no-answer-queries.jsonl"
MODES = ("hybrid", "contextual", "lexical", "static")
DEPTH = 10


def held_out(set_name: str, query: dict) -> bool:
    """Whether a query is in the held-out half (the other half calibrates): a judged
    query by its set and id, a no-answer query by its id alone (held out in every set or
    in none)."""
    scope = set_name if query["kind"] == "judged" else "no-answer"
    return zlib.crc32(f"{scope}/{query['_id']}".encode()) % 2 == 1


def read_qrels(files: Iterable[Path]) -> dict[str, dict[str, int]]:
    """query id -> document id -> grade, from BEIR-style TSV files with a header."""
    qrels: dict[str, dict[str, int]] = {}
    for file in files:
        with file.open(encoding="utf-8") as handle:
            rows = csv.reader(handle, delimiter="\t")
            next(rows, None)
            for query_id, doc_id, grade in rows:
                qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return qrels


def read_queries(file: Path) -> list[dict]:
    """The JSON lines of a queries file (`_id`, `text`, and `kind` where given)."""
    lines = file.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def document_id(path: str, root: Path | None) -> str:
    """The qrels' name for a hit's document: its path under `root` without the suffix,
    else its file name's stem."""
    if root is not None:
        try:
            return Path(path).relative_to(root).with_suffix("").as_posix()
        except ValueError:
            pass
    return Path(path).stem


def collect(args: argparse.Namespace) -> None:
    from search.engine import Searcher

    qrels = read_qrels(args.qrels)
    judged = [query for query in read_queries(args.queries) if query["_id"] in qrels]
    queries = [dict(query, kind="judged") for query in judged] + read_queries(NO_ANSWER)
    with Searcher(args.index) as searcher, args.out.open("w", encoding="utf-8") as out:
        for mode, query in itertools.product(args.modes.split(","), queries):
            hits = searcher.search(query["text"], k=DEPTH, mode=mode).results
            relevant = qrels.get(query["_id"], {}) if query["kind"] == "judged" else {}
            for hit in hits:
                grade = relevant.get(document_id(hit.path, args.root), 0)
                row = {
                    "set": args.set,
                    "query": query["_id"],
                    "kind": query["kind"],
                    "held_out": held_out(args.set, query),
                    "mode": mode,
                    "rank": hit.rank,
                    "similarity": hit.similarity,
                    "term_coverage": hit.term_coverage,
                    "label": hit.match,
                    "relevant": grade > 0,
                }
                out.write(json.dumps(row) + "\n")


def label_counts(rows: list[dict], thresholds: MatchThresholds) -> dict[str, dict[str, float]]:
    """Precision and recall per label (docs/reports/2026-12-01-match.md says what each is)."""
    labelled = [
        (
            match_label(
                MatchEvidence(row["similarity"], row["term_coverage"], first=row["rank"] == 1),
                thresholds,
            ),
            row,
        )
        for row in rows
    ]
    relevant = [label for label, row in labelled if row["relevant"]]
    unanswerable = [label for label, row in labelled if row["kind"] != "judged"]
    result: dict[str, dict[str, float]] = {}
    for name in MATCH_LABELS:
        given = [row for label, row in labelled if label == name]
        if name == NONE:
            right = sum(not row["relevant"] for row in given)
            recall_of = unanswerable
        else:
            right = sum(row["relevant"] for row in given)
            recall_of = relevant
        result[name] = {
            "hits": len(given),
            "precision": round(right / len(given), 3) if given else None,
            "recall": round(recall_of.count(name) / len(recall_of), 3) if recall_of else None,
        }
    result["relevant hits"] = {"hits": len(relevant)}
    result["no-answer hits"] = {"hits": len(unanswerable)}
    return result


def _labels(features: dict[str, np.ndarray], thresholds: MatchThresholds) -> np.ndarray:
    """`match_label` of every row at once: 0 strong, 1 weak, 2 none."""
    similarity, coverage = features["similarity"], features["coverage"]
    strong = (similarity >= thresholds.strong_similarity) | (
        (similarity >= thresholds.strong_similarity_with_terms)
        & (coverage >= thresholds.strong_coverage)
    )
    none = (similarity < thresholds.none_similarity) & (coverage < thresholds.none_coverage)
    none |= (coverage == 0.0) & (similarity < thresholds.none_similarity_without_terms)
    return np.where(strong, 0, np.where(none, 2, 1))


def _features(rows: list[dict]) -> dict[str, np.ndarray]:
    return {
        "similarity": np.array([row["similarity"] for row in rows]),
        "coverage": np.array([row["term_coverage"] for row in rows]),
        "relevant": np.array([row["relevant"] for row in rows]),
        "unanswerable": np.array([row["kind"] != "judged" for row in rows]),
    }


def _f1(right: int, given: int, wanted: int) -> float:
    precision, recall = right / given if given else 0.0, right / wanted if wanted else 0.0
    return _harmonic(precision, recall)


def _harmonic(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


MAX_MISSED = 0.03  # the share of a set's relevant hits that may be labelled none


def objective(sets: list[dict[str, np.ndarray]], thresholds: MatchThresholds) -> float:
    """The mean over sets of strong's F1 plus none's F1, when at most `MAX_MISSED` of the
    relevant hits are labelled none (else minus infinity)."""
    total = 0.0
    for features in sets:
        labels, relevant = _labels(features, thresholds), features["relevant"]
        unanswerable = features["unanswerable"]
        strong, none = labels == 0, labels == 2
        if (none & relevant).sum() > MAX_MISSED * relevant.sum():
            return float("-inf")
        total += _f1(int((strong & relevant).sum()), int(strong.sum()), int(relevant.sum()))
        # none's precision counts every hit not relevant; its recall the no-answer hits
        precision = (none & ~relevant).sum() / none.sum() if none.sum() else 0.0
        recall = (none & unanswerable).sum() / unanswerable.sum() if unanswerable.sum() else 0
        total += _harmonic(float(precision), float(recall))
    return total / len(sets)


def grid() -> Iterable[MatchThresholds]:
    steps = [round(0.05 * step, 2) for step in range(21)]
    for strong, with_terms, none in itertools.product(
        [s for s in steps if 0.3 <= s <= 0.8],
        [s for s in steps if 0.2 <= s <= 0.7],
        [s for s in steps if 0.1 <= s <= 0.5],
    ):
        if with_terms > strong or none > with_terms:
            continue
        for strong_coverage, none_coverage, without_terms in itertools.product(
            [0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
            [0.05, 0.1, 0.2, 0.3, 0.4, 0.5],
            [s for s in steps if none <= s <= min(strong, 0.6)],
        ):
            yield MatchThresholds(
                strong, with_terms, strong_coverage, none, none_coverage, without_terms
            )


def sensitivity(sets: list[dict[str, np.ndarray]], best: MatchThresholds) -> dict[str, float]:
    """The objective with each threshold moved one grid step down or up (0.05 for a
    similarity, 0.1 for a coverage): how much each chosen number matters."""
    moved = {}
    for name, value in best.__dict__.items():
        step = 0.1 if name.endswith("coverage") else 0.05
        for sign in (-1, 1):
            changed = replace(best, **{name: round(value + sign * step, 2)})
            moved[f"{name} {changed.__dict__[name]}"] = round(objective(sets, changed), 4)
    return moved


def fit(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for file in args.features for line in file.open() if line.strip()]
    calibration: dict[str, list[dict]] = {}
    for row in rows:
        if not row["held_out"]:
            calibration.setdefault(row["set"], []).append(row)
    sets = [_features(chosen) for chosen in calibration.values()]
    best = max(grid(), key=lambda thresholds: objective(sets, thresholds))
    report: dict = {
        "thresholds": best.__dict__,
        "objective": round(objective(sets, best), 4),
        "one step off": sensitivity(sets, best),
    }
    for half, wanted in (("calibration", False), ("held-out", True)):
        for set_name in sorted({row["set"] for row in rows}):
            for mode in ("all modes", *MODES, "hybrid rank 1"):
                chosen = [
                    row
                    for row in rows
                    if row["set"] == set_name and row["held_out"] == wanted and _in_view(row, mode)
                ]
                if chosen:
                    report.setdefault(half, {}).setdefault(set_name, {})[mode] = label_counts(
                        chosen, best
                    )
    if args.report:
        args.report.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["thresholds"]), f"objective {report['objective']}")
    print(json.dumps(report["one step off"]))
    print(markdown_table(report, args.modes.split(",")))


def _in_view(row: dict, view: str) -> bool:
    """Whether a hit counts in a report row: all modes, one mode, or hybrid's first hits."""
    if view == "hybrid rank 1":
        return row["mode"] == "hybrid" and row["rank"] == 1
    return view in ("all modes", row["mode"])


def markdown_table(report: dict, modes: list[str]) -> str:
    """Precision / recall per label, a row per half, set and mode."""
    lines = [
        "| half | set | mode | strong P / R | weak P / R | none P / R | relevant hits "
        "| no-answer hits |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for half in ("calibration", "held-out"):
        for set_name, by_mode in report.get(half, {}).items():
            for mode in modes:
                if mode not in by_mode:
                    continue
                counts = by_mode[mode]
                cells = [
                    f"{_cell(counts[name]['precision'])} / {_cell(counts[name]['recall'])}"
                    f" ({counts[name]['hits']})"
                    for name in MATCH_LABELS
                ]
                lines.append(
                    f"| {half} | {set_name} | {mode} | "
                    + " | ".join(cells)
                    + f" | {counts['relevant hits']['hits']} | {counts['no-answer hits']['hits']} |"
                )
    return "\n".join(lines)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gather = commands.add_parser("collect")
    gather.add_argument("--set", required=True)
    gather.add_argument("--index", required=True)
    gather.add_argument("--queries", type=Path, required=True)
    gather.add_argument("--qrels", type=Path, action="append", required=True)
    gather.add_argument("--root", type=Path)
    gather.add_argument("--modes", default=",".join(MODES))
    gather.add_argument("--out", type=Path, required=True)
    choose = commands.add_parser("fit")
    choose.add_argument("features", type=Path, nargs="+")
    choose.add_argument("--report", type=Path)
    choose.add_argument("--modes", default="all modes,hybrid,hybrid rank 1")
    args = parser.parse_args()
    collect(args) if args.command == "collect" else fit(args)


if __name__ == "__main__":
    main()

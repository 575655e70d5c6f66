"""`match` against a reader: hybrid's top 3 hits judged answer / related / unrelated by
reading the passage, and the label's thresholds fitted to those judgments.

    python -m lab.match_judged collect --index DIR --root DIR --queries FILE
        --out HITS.jsonl --passages PASSAGES.txt
    python -m lab.match_judged fit HITS.jsonl ... --judgments FILE ... [--report OUT.json]

`collect` searches each query of a queries file (`_id`, `text`, `kind`: question,
keywords, off-topic or stop-words) in hybrid mode, 3 hits, and writes one line per hit:
its identity (path under `--root`, chunk ordinal, character offsets) and the signals a
label can be read from (similarity, term coverage, whether the query has a content word,
ranks), with the label shown today. `--passages` gets the text to judge, without labels
or scores, so that the reader judges before seeing them; it holds third-party text and
stays outside the repository.

The judgments (docs/questions/match-judged/judgments.jsonl) name a hit by query id, path
and ordinal. A hit of an off-topic or a stop-words query is unrelated without reading.
A query is in the fit half when the CRC-32 of its id is even, else held out. `fit`
grid-searches `MatchThresholds` on the fit half (the reader's answer is `strong`,
related `weak`, unrelated `none`) and prints agreement per label on both halves: before
(today's thresholds, a query of stop words only labelled like any other), kept (today's
thresholds, such a query's hits `none`) and after (the fitted thresholds). It also fits
one more rule on the fit half, today's thresholds kept: a passage both sides (contextual
and lexical) rank in their first 3 is `strong` from a similarity bar (`fit_sides`; left
out unless a bar beats today's labels there), and prints its agreement on both halves;
and, the six thresholds kept, the similarity a hit after the first needs to be `strong`
(`fit_first`: `FIRST_GRID`, or the term evidence counted at every rank as before).
"""

from __future__ import annotations

import argparse
import itertools
import json
import zlib
from collections import Counter
from dataclasses import asdict, fields, replace
from pathlib import Path

import numpy as np

from search.match import NONE, STRONG, WEAK, MatchEvidence, match_label
from search.match_thresholds import THRESHOLDS, MatchThresholds

K = 3
NEGATIVE_KINDS = ("off-topic", "stop-words")
EXPECTED = {"answer": STRONG, "related": WEAK, "unrelated": NONE}
# The grid of each threshold (similarities in steps of 0.05, coverages of 0.1)
GRID = {
    "strong_similarity": [x / 100 for x in range(40, 81, 5)],
    "strong_similarity_with_terms": [x / 100 for x in range(30, 71, 5)],
    "strong_coverage": [x / 10 for x in range(3, 11)],
    "none_similarity": [x / 100 for x in range(10, 51, 5)],
    "none_coverage": [x / 10 for x in range(1, 11)],
    "none_similarity_without_terms": [x / 100 for x in range(20, 61, 5)],
    # fitted on its own (`fit_first`), the other six kept
    "strong_similarity_after_first": [THRESHOLDS.strong_similarity_after_first],
}
# The similarities tried for `strong` after a search's first hit (`fit_first`)
FIRST_GRID = [x / 100 for x in range(55, 81, 5)]
# The similarity bars tried for `strong` where both sides rank a passage first (`fit_sides`)
SIDES_GRID = [x / 100 for x in range(20, 81, 5)]


def held_out(query_id: str) -> bool:
    """Whether a query is in the held-out half (the other half is fitted on)."""
    return zlib.crc32(query_id.encode()) % 2 == 1


def collect(index: Path, root: Path, queries: Path, out: Path, passages: Path) -> None:
    from search.engine import Searcher

    rows, shown = [], []
    with Searcher(index) as searcher:
        for line in queries.read_text(encoding="utf-8").splitlines():
            query = json.loads(line)
            hits = searcher.search(query["text"], mode="hybrid", k=K).results
            ids = [hit.chunk_id for hit in hits]
            with searcher.store.snapshot([]) as snapshot:
                texts = {i: chunk.text for i, chunk in snapshot.chunks(ids).items()}
            top = max((hit.similarity or -1.0 for hit in hits), default=-1.0)
            for hit in hits:
                where = {
                    "query": query["_id"],
                    "path": str(Path(hit.path).relative_to(root)),
                    "ordinal": hit.ordinal,
                    "start": hit.start,
                    "end": hit.end,
                }
                rows.append(
                    {
                        **where,
                        "kind": query["kind"],
                        "rank": hit.rank,
                        "similarity": hit.similarity,
                        "coverage": hit.term_coverage,
                        "content": hit.match is not None and _has_content(query["text"]),
                        "similarity_below_top": round(top - (hit.similarity or -1.0), 6),
                        "found_by": hit.found_by,
                        "label": hit.match,
                    }
                )
                if query["kind"] not in NEGATIVE_KINDS:
                    shown.append(
                        f"===== {json.dumps(where)}\nQUERY: {query['text']}\n"
                        f"HEADING: {hit.section or hit.heading}\n{texts[hit.chunk_id]}\n"
                    )
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    passages.write_text("\n".join(shown), encoding="utf-8")


def _has_content(query: str) -> bool:
    from indexer.terms import query_terms, stop_words

    return not all(term in stop_words() for term in query_terms(query))


def judged_hits(hit_files: list[Path], judgment_files: list[Path]) -> list[dict]:
    """Every collected hit with its reader's judgment (a negative query's: unrelated);
    a hit of a judged kind that no judgment names is an error."""
    judgments = {}
    for file in judgment_files:
        for line in file.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            judgments[(row["query"], row["path"], row["ordinal"])] = row["judgment"]
    hits = []
    for file in hit_files:
        for line in file.read_text(encoding="utf-8").splitlines():
            hit = json.loads(line)
            key = (hit["query"], hit["path"], hit["ordinal"])
            if hit["kind"] in NEGATIVE_KINDS:
                hit["judgment"] = "unrelated"
            elif key in judgments:
                hit["judgment"] = judgments[key]
            else:
                raise SystemExit(f"no judgment for {key}")
            hits.append(hit)
    return hits


def label_of(hit: dict, thresholds: MatchThresholds, stop_words_rule: bool = True) -> str:
    """The hit's label under `thresholds`; without `stop_words_rule`, as labelled before a
    query of stop words only was told apart (its words counted as terms)."""
    content = hit["content"] or not stop_words_rule
    evidence = MatchEvidence(hit["similarity"], hit["coverage"], content, first=hit["rank"] == 1)
    return match_label(evidence, thresholds)


def agreement(hits: list[dict], thresholds: MatchThresholds, stop_words_rule: bool = True) -> dict:
    """Per label: how many hits got it and the share a reader agrees with (precision);
    per judgment: the share labelled accordingly (recall); overall agreement and the
    confusion counts (label, judgment)."""
    return agreement_of(hits, [label_of(hit, thresholds, stop_words_rule) for hit in hits])


def agreement_of(hits: list[dict], labels: list[str]) -> dict:
    """`agreement` of these labels, one per hit."""
    pairs = [(label, EXPECTED[hit["judgment"]]) for hit, label in zip(hits, labels, strict=True)]
    confusion = Counter(pairs)
    labels = (STRONG, WEAK, NONE)
    table = {}
    for label in labels:
        given = sum(confusion[(label, judged)] for judged in labels)
        deserved = sum(confusion[(shown, label)] for shown in labels)
        right = confusion[(label, label)]
        table[label] = {
            "labelled": given,
            "agree": right,
            "precision": round(right / given, 3) if given else None,
            "judged": deserved,
            "recall": round(right / deserved, 3) if deserved else None,
        }
    right = sum(confusion[(label, label)] for label in labels)
    return {
        "hits": len(pairs),
        "agreement": round(right / len(pairs), 3) if pairs else None,
        "per_label": table,
        "confusion": {f"{shown}/{judged}": n for (shown, judged), n in sorted(confusion.items())},
    }


def sides_agree(hit: dict) -> bool:
    """Whether the passage was in the first `K` of both the contextual and the lexical
    list (its ranks in `found_by`; hybrid searched both)."""
    ranks = hit.get("found_by") or {}
    return all(ranks.get(side, K + 1) <= K for side in ("contextual", "lexical"))


def label_with_sides(hit: dict, bar: float | None) -> str:
    """Today's label, made `strong` where both sides rank the passage in their first `K`
    and its similarity is at least `bar` (None: never)."""
    label = label_of(hit, THRESHOLDS)
    similarity = -1.0 if hit["similarity"] is None else hit["similarity"]
    if bar is not None and hit["content"] and sides_agree(hit) and similarity >= bar:
        return STRONG
    return label


def fit_sides(hits: list[dict]) -> tuple[float | None, dict[str, float]]:
    """The bar of `label_with_sides` (`SIDES_GRID`, or None: the rule left out) with the
    best `objective` on `hits`, the rule left out unless a bar beats it; and each
    candidate's objective."""
    scores = {
        str(bar): _mean_recall(hits, [label_with_sides(hit, bar) for hit in hits])
        for bar in [None, *SIDES_GRID]
    }
    best = max(scores.values())
    chosen = next(bar for bar in [None, *SIDES_GRID] if scores[str(bar)] == best)
    return chosen, {bar: round(score, 4) for bar, score in scores.items()}


def fit_first(hits: list[dict]) -> tuple[float | None, dict[str, float]]:
    """The similarity a hit after the first needs to be `strong` (`FIRST_GRID`; None: no
    such rule, the term evidence counts at every rank) with the best `objective` on
    `hits`, today's six thresholds kept; and each candidate's objective."""
    candidates: list[float | None] = [None, *FIRST_GRID]
    scores = {}
    for bar in candidates:
        if bar is None:  # the rule left out: every hit judged as the first
            labels = [label_of({**hit, "rank": 1}, THRESHOLDS) for hit in hits]
        else:
            thresholds = replace(THRESHOLDS, strong_similarity_after_first=bar)
            labels = [label_of(hit, thresholds) for hit in hits]
        scores[str(bar)] = _mean_recall(hits, labels)
    best = max(scores.values())
    chosen = next(bar for bar in candidates if scores[str(bar)] == best)
    return chosen, {bar: round(score, 4) for bar, score in scores.items()}


def _mean_recall(hits: list[dict], labels: list[str]) -> float:
    """`objective` of these labels, one per hit."""
    recalls = []
    for judgment, wanted in EXPECTED.items():
        judged = [
            label for hit, label in zip(hits, labels, strict=True) if hit["judgment"] == judgment
        ]
        if judged:
            recalls.append(sum(label == wanted for label in judged) / len(judged))
    return float(np.mean(recalls))


def objective(hits: list[dict], thresholds: MatchThresholds) -> float:
    """The mean, over the three judgments, of the share of their hits labelled
    accordingly: each kind of hit counts alike, however many of it the set has."""
    return _Fitter(hits).objective(thresholds)


class _Fitter:
    """`objective` over many thresholds at once: the hits' signals as arrays, and each
    threshold's comparison computed once per grid value."""

    def __init__(self, hits: list[dict]):
        self.similarity = np.array(
            [-1.0 if hit["similarity"] is None else hit["similarity"] for hit in hits]
        )
        self.coverage = np.array([hit["coverage"] for hit in hits])
        self.content = np.array([hit["content"] for hit in hits], dtype=bool)
        self.first = np.array([hit["rank"] == 1 for hit in hits], dtype=bool)
        wanted = [EXPECTED[hit["judgment"]] for hit in hits]
        self.wanted = {label: np.array([w == label for w in wanted]) for label in EXPECTED.values()}

    def labels(self, t: MatchThresholds) -> tuple[np.ndarray, np.ndarray]:
        """(strong, none) masks, as `match_label` decides them."""
        sim, cov = self.similarity, self.coverage
        strong = self.first & (
            (sim >= t.strong_similarity)
            | ((sim >= t.strong_similarity_with_terms) & (cov >= t.strong_coverage))
        )
        strong |= sim >= t.strong_similarity_after_first
        none = ((sim < t.none_similarity) & (cov < t.none_coverage)) | (
            (cov == 0.0) & (sim < t.none_similarity_without_terms)
        )
        strong &= self.content
        none = (none & ~strong) | ~self.content
        return strong, none

    def objective(self, t: MatchThresholds) -> float:
        strong, none = self.labels(t)
        weak = ~strong & ~none
        recalls = [
            (given & self.wanted[label]).sum() / self.wanted[label].sum()
            for label, given in ((STRONG, strong), (WEAK, weak), (NONE, none))
            if self.wanted[label].any()
        ]
        return float(np.mean(recalls))


def fit(hits: list[dict], grid: dict[str, list[float]] = GRID) -> tuple[MatchThresholds, float]:
    """The best thresholds of `grid` on `hits`; among equals, the nearest to today's."""
    fitter = _Fitter(hits)
    names = [field.name for field in fields(MatchThresholds)]
    today = list(asdict(THRESHOLDS).values())
    best, best_key = THRESHOLDS, (fitter.objective(THRESHOLDS), 0.0)
    for values in itertools.product(*(grid[name] for name in names)):
        candidate = MatchThresholds(**dict(zip(names, values, strict=True)))
        if candidate.strong_similarity_with_terms > candidate.strong_similarity:
            continue
        if candidate.none_similarity_without_terms < candidate.none_similarity:
            continue
        distance = sum(abs(a - b) for a, b in zip(values, today, strict=True))
        key = (fitter.objective(candidate), -distance)
        if key > best_key:
            best, best_key = candidate, key
    return best, best_key[0]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m lab.match_judged")
    commands = parser.add_subparsers(dest="command", required=True)
    gather = commands.add_parser("collect")
    gather.add_argument("--index", type=Path, required=True)
    gather.add_argument("--root", type=Path, required=True)
    gather.add_argument("--queries", type=Path, required=True)
    gather.add_argument("--out", type=Path, required=True)
    gather.add_argument("--passages", type=Path, required=True)
    fitting = commands.add_parser("fit")
    fitting.add_argument("hits", type=Path, nargs="+")
    fitting.add_argument("--judgments", type=Path, nargs="+", required=True)
    fitting.add_argument("--report", type=Path)
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.index, args.root, args.queries, args.out, args.passages)
        return
    hits = judged_hits(args.hits, args.judgments)
    halves = {
        "fit": [hit for hit in hits if not held_out(hit["query"])],
        "held-out": [hit for hit in hits if held_out(hit["query"])],
    }
    fitted, score = fit(halves["fit"])
    bar, bars = fit_sides(halves["fit"])
    first_bar, first_bars = fit_first(halves["fit"])
    first_thresholds = (
        THRESHOLDS
        if first_bar is None
        else replace(THRESHOLDS, strong_similarity_after_first=first_bar)
    )
    report = {
        "thresholds": {"before": asdict(THRESHOLDS), "after": asdict(fitted)},
        "fit_objective": round(score, 4),
        "neighbours": _neighbours(halves["fit"], fitted),
        "halves": {
            half: {
                "queries": len({hit["query"] for hit in chosen}),
                "judgments": dict(Counter(hit["judgment"] for hit in chosen)),
                "before": agreement(chosen, THRESHOLDS, stop_words_rule=False),
                "kept": agreement(chosen, THRESHOLDS),
                "after": agreement(chosen, fitted),
            }
            for half, chosen in halves.items()
        },
        "sides_agree": {
            "bar": bar,
            "fit_objective": bars,
            "counts": _sides_counts([h for h in hits if h["kind"] not in NEGATIVE_KINDS]),
            "halves": {
                half: {
                    "before": agreement(chosen, THRESHOLDS),
                    "after": agreement_of(chosen, [label_with_sides(h, bar) for h in chosen]),
                }
                for half, chosen in halves.items()
            },
        },
    }
    report["first_hit"] = {
        "bar": first_bar,
        "fit_objective": first_bars,
        "halves": {
            half: {
                "before": agreement_of(
                    chosen, [label_of({**hit, "rank": 1}, THRESHOLDS) for hit in chosen]
                ),
                "after": agreement(chosen, first_thresholds),
            }
            for half, chosen in halves.items()
        },
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.report:
        args.report.write_text(text + "\n", encoding="utf-8")


def _sides_counts(hits: list[dict]) -> dict[str, list[int]]:
    """Per judgment: [hits both sides rank in their first `K`, hits]."""
    return {
        judgment: [
            sum(sides_agree(hit) for hit in hits if hit["judgment"] == judgment),
            sum(hit["judgment"] == judgment for hit in hits),
        ]
        for judgment in EXPECTED
    }


def _neighbours(hits: list[dict], fitted: MatchThresholds) -> dict[str, list]:
    """Each threshold's objective one grid step lower and higher, the others kept."""
    found = {}
    for name, grid in GRID.items():
        value = getattr(fitted, name)
        index = min(range(len(grid)), key=lambda i: abs(grid[i] - value))
        found[name] = [
            round(objective(hits, replace(fitted, **{name: grid[i]})), 4)
            if 0 <= i < len(grid)
            else None
            for i in (index - 1, index + 1)
        ]
    return found


if __name__ == "__main__":
    main()

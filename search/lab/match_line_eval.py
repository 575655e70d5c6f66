"""How well `match_line` lands: for judged queries, does the chosen line of each top hit
hold a term that answers the query? Compares the methods of `search.match_lines` with
today's jump to the passage's first line, and times each.

    python -m search.lab.match_line_eval INDEX JUDGED.jsonl [--show]

JUDGED.jsonl has one object a line: {"query": ..., "answer": ["term", ...]} (the words
a line that answers it holds, chosen by reading the hits; matched case-insensitively as
substrings). `--show` prints each passage with every method's choice, for judging.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from indexer.terms import query_terms
from search.engine import Searcher
from search.match_lines import best_line

METHODS = ("first", "lexical", "static", "both")


def evaluate(index: str, judged: Path, show: bool = False, k: int = 3) -> dict:
    """Per method: hits whose chosen line holds an answer term, and mean ms per query."""
    found = dict.fromkeys(METHODS, 0)
    seconds = dict.fromkeys(METHODS, 0.0)
    total = queries = 0
    with Searcher(index) as searcher:
        for line in judged.read_text().splitlines():
            item = json.loads(line)
            response = searcher.search(item["query"], k=k)
            similarity_of = searcher.line_similarity
            answers = [term.lower() for term in item["answer"]]
            terms = query_terms(item["query"])
            queries += 1
            with searcher.store.snapshot() as snapshot:
                stored = snapshot.chunks([hit.chunk_id for hit in response.results])
            passages = [stored[hit.chunk_id].text for hit in response.results]
            chosen_all = {}
            for method in METHODS:
                started = time.perf_counter()
                lines = similarity_of(item["query"]) if method in ("static", "both") else None
                chosen = [
                    0 if method == "first" else best_line(text, terms, lines, method).index
                    for text in passages
                ]
                seconds[method] += time.perf_counter() - started
                chosen_all[method] = chosen
            for n, hit in enumerate(response.results):
                texts = passages[n].split("\n")
                total += 1
                for method in METHODS:
                    picked = texts[chosen_all[method][n]].lower()
                    found[method] += any(answer in picked for answer in answers)
                if show:
                    print(f"\n## {item['query']} -> {hit.path.rsplit('/', 1)[-1]}")
                    for number, text in enumerate(texts):
                        marks = "".join(m[0] for m in METHODS if chosen_all[m][n] == number)
                        print(f"{marks:>4} {number:3} {text[:110]}")
    return {
        "queries": queries,
        "hits": total,
        "answer_line": found,
        "ms_per_query": {m: round(1000 * s / max(queries, 1), 2) for m, s in seconds.items()},
    }


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--show"]
    print(json.dumps(evaluate(arguments[0], Path(arguments[1]), "--show" in sys.argv), indent=2))

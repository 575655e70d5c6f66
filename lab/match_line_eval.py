"""How well `match_line` lands: for judged queries, does the chosen line of each top hit
hold a term that answers the query? Compares the methods of `search.match_lines` with
today's jump to the passage's first line, and times each.

    python -m lab.match_line_eval INDEX JUDGED.jsonl [--show]

JUDGED.jsonl has one object a line: {"query": ..., "answer": ["term", ...]} (the words
a line that answers it holds, chosen by reading the hits; matched case-insensitively as
substrings). `--show` prints each passage with every method's choice, for judging.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from indexer.reading.line_map import decode_line_map
from indexer.terms import query_terms
from search.engine import Searcher
from search.match_lines import best_line, static_line_similarity

METHODS = ("first", "lexical", "static", "both", "mix")


def evaluate(index: str, judged: Path, show: bool = False, k: int = 3) -> dict:
    """Per method: hits whose chosen line holds an answer term, and mean ms per query."""
    found = dict.fromkeys(METHODS, 0)
    seconds = dict.fromkeys(METHODS, 0.0)
    total = queries = answerable = 0
    with Searcher(index) as searcher:
        started = time.perf_counter()
        static = searcher._space_encoder("static")
        load_ms = round(1000 * (time.perf_counter() - started), 1)
        for line in judged.read_text().splitlines():
            item = json.loads(line)
            response = searcher.search(item["query"], k=k)
            answers = [term.lower() for term in item["answer"]]
            terms = query_terms(item["query"])
            queries += 1
            with searcher.store.snapshot() as snapshot:
                stored = snapshot.chunks([hit.chunk_id for hit in response.results])
            passages = [stored[hit.chunk_id].text for hit in response.results]
            places = [decode_line_map(stored[hit.chunk_id].line_map) for hit in response.results]
            chosen_all = {}
            for method in METHODS:
                started = time.perf_counter()
                lines = None
                if method in ("static", "both", "mix"):  # the query's static vector included
                    lines = static_line_similarity(static, static.encode([item["query"]])[0])
                chosen = [
                    best_line(text, terms, lines, method, place) if method != "first" else None
                    for text, place in zip(passages, places, strict=True)
                ]
                seconds[method] += time.perf_counter() - started
                chosen_all[method] = chosen
            for n, hit in enumerate(response.results):
                text = passages[n]
                total += 1
                picked = {}
                for method in METHODS:
                    matched = chosen_all[method][n]
                    line = (
                        text.split("\n")[0]
                        if matched is None
                        else (text[matched.offset : matched.end])
                    )
                    picked[method] = " ".join(line.split())
                    found[method] += any(answer in line.lower() for answer in answers)
                answerable += any(answer in text.lower() for answer in answers)
                if show:
                    print(f"\n## {item['query']} -> {hit.path.rsplit('/', 1)[-1]}")
                    for method in METHODS:
                        print(f"  {method[0]} {picked[method][:130]}")
    return {
        "queries": queries,
        "hits": total,
        "hits_holding_an_answer_term": answerable,
        "answer_line": found,
        "ms_per_query": {m: round(1000 * s / max(queries, 1), 2) for m, s in seconds.items()},
        "static_table_load_ms": load_ms,
    }


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--show"]
    print(json.dumps(evaluate(arguments[0], Path(arguments[1]), "--show" in sys.argv), indent=2))

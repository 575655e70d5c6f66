"""Retrieval quality through the product's own path: `Indexer` into a store, `Searcher` out.

`eval` measures methods on cached exact encodings; this measures what a user gets: the
corpus is written as one text file per document, indexed into any store (a folder or a
PostgreSQL URL) by the real indexer (chunking, both vector spaces, the lexical space),
and every judged query goes through `Searcher.search` in each mode.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from indexer.store.base import Target
from search.judged.collection import RetrievalDataset, load_retrieval_dataset
from search.judged.metrics import mean_metrics
from search.modes import MODES

DEPTH = 100


def write_corpus_files(dataset: RetrievalDataset, folder: Path) -> Path:
    """One `ID.txt` per document (title and text), written once; ids that are not safe
    file names are refused rather than guessed at."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, text in dataset.corpus.items():
        if "/" in doc_id or doc_id.startswith("."):
            raise ValueError(f"document id {doc_id!r} cannot be a file name")
        path = folder / f"{doc_id}.txt"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return folder


def evaluate_index(
    dataset_dir: Path,
    target: Target,
    files_dir: Path,
    split: str = "test",
    modes: Sequence[str] = MODES,
    progress: Callable[[Any], None] | None = None,
    precision: str | None = None,
    query_encoder: str | None = None,
) -> dict[str, Any]:
    """Index the dataset's corpus into `target` (incrementally, the contextual encoder
    computing in `precision`), then score every mode, queries encoded by `query_encoder`
    (see `Searcher`)."""
    from indexer import Indexer
    from search.engine import Searcher

    dataset = load_retrieval_dataset(dataset_dir, split)
    folder = write_corpus_files(dataset, files_dir / dataset.name)
    summary = Indexer(target, precision=precision).index_folder(folder, progress=progress)
    results: dict[str, Any] = {}
    with Searcher(target, query_encoder=query_encoder) as searcher:
        searcher.encoders()  # load the model before timing queries
        for mode in modes:
            run: dict[str, dict[str, float]] = {}
            latencies = []
            for query_id, query in dataset.queries.items():
                started = time.perf_counter()
                hits = searcher.search(query, k=DEPTH, mode=mode).results
                latencies.append(time.perf_counter() - started)
                # Scores by rank, so that the metric sees exactly the order the user sees.
                run[query_id] = {Path(hit.path).stem: DEPTH - hit.rank + 1.0 for hit in hits}
            metrics = {
                name: round(value, 4) for name, value in mean_metrics(run, dataset.qrels).items()
            }
            results[mode] = {
                **metrics,
                "p50_ms": round(statistics.median(latencies) * 1000, 2),
                "p95_ms": round(statistics.quantiles(latencies, n=20)[-1] * 1000, 2),
            }
        target_shown = searcher.store.target
        recorded_precision = searcher.manifest.precision
        encoder_kinds = dict(searcher.encoder_kinds)
    return {
        "dataset": dataset.name,
        "split": split,
        "index": target_shown,
        "queries": len(dataset.queries),
        "documents": summary.total_documents,
        "chunks": summary.total_chunks,
        "index_seconds": summary.seconds,
        "precision": recorded_precision,
        "query_encoder": encoder_kinds,
        "modes": results,
    }

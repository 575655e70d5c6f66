"""Retrieval quality through the product's own path: `Indexer` into a store, `Searcher` out.

This measures what a user gets, in every search mode (static and contextual among them):
the collection's documents are indexed into any store (a folder or a PostgreSQL URL) by
the real indexer (chunking, both vector spaces, the lexical space), a folder of documents
where it is, a BEIR corpus written first as one text file per document; every judged
query then goes through `Searcher.search` in each mode, read literally (its quotes are
quotations, not the query syntax's phrases). (`ctxsearch lab eval` measures
methods on cached exact encodings instead.)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from indexer.errors import SourceNotFound
from indexer.store.base import Target
from search.judged.collection import (
    RetrievalDataset,
    document_id,
    is_beir_folder,
    load_retrieval_dataset,
)
from search.judged.metrics import mean_metrics
from search.modes import MODES

DEPTH = 100


def write_corpus_files(dataset: RetrievalDataset, folder: Path) -> Path:
    """One `ID.txt` per document (title and text), written once, an id's slashes as
    folders; ids that cannot be a file the walk reads are refused rather than guessed at."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, text in dataset.corpus.items():
        parts = PurePosixPath(doc_id).parts
        if not parts or doc_id.startswith("/") or any(p.startswith(".") for p in parts):
            raise SourceNotFound(
                f"document id {doc_id!r} of {dataset.name} cannot be a file name: its parts "
                "may not be empty or start with a dot"
            )
        path = folder.joinpath(*parts[:-1], f"{parts[-1]}.txt")
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return folder


def _judged_id(folder: Path, path: str) -> str | None:
    """The collection's id of a hit's document, or None for a document of the index from
    outside the collection."""
    try:
        return document_id(folder, Path(path))
    except ValueError:
        return None


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
    """Index the collection's documents into `target` (incrementally, the contextual
    encoder computing in `precision`; a BEIR corpus written under `files_dir` first), then
    score every mode, queries encoded by `query_encoder` (see `Searcher`)."""
    from indexer import Indexer
    from search.engine import Searcher

    dataset = load_retrieval_dataset(dataset_dir, split)
    if is_beir_folder(dataset_dir):
        folder = write_corpus_files(dataset, files_dir / dataset.name)
    else:
        folder = Path(dataset_dir)
    summary = Indexer(target, precision=precision).index_folder(folder, progress=progress)
    results: dict[str, Any] = {}
    with Searcher(target, query_encoder=query_encoder) as searcher:
        searcher.encoders()  # load the model before timing queries
        for mode in modes:
            run: dict[str, dict[str, float]] = {}
            latencies = []
            for query_id, query in dataset.queries.items():
                started = time.perf_counter()
                # a collection's queries are plain text: their quotes are quotations
                hits = searcher.search(query, k=DEPTH, mode=mode, literal=True).results
                latencies.append(time.perf_counter() - started)
                # Scores by rank, so that the metric sees exactly the order the user sees.
                ranked = {_judged_id(folder, hit.path): DEPTH - hit.rank + 1.0 for hit in hits}
                run[query_id] = {doc: score for doc, score in ranked.items() if doc is not None}
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

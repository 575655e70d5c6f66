"""Load a judged collection: BEIR layout, or a folder of documents with its judgements."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import SourceNotFound
from indexer.reading.sources import read_document, walk_folder


@dataclass
class RetrievalDataset:
    """A corpus, queries and graded judgements (`qrels[query][document] = grade`)."""

    name: str
    corpus: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def is_beir_folder(path: Path) -> bool:
    """Whether a dataset folder holds its corpus as `corpus.jsonl` (else: documents)."""
    return (Path(path) / "corpus.jsonl").exists()


def load_retrieval_dataset(path: Path, split: str = "test") -> RetrievalDataset:
    """Load BEIR layout (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) or a document folder.

    A document folder holds files of any readable type plus `queries.jsonl` and `qrels.tsv`
    (or `qrels/SPLIT.tsv`); a document's id is its path without extension.
    """
    path = Path(path)
    if not path.is_dir():
        raise SourceNotFound(f"{path}: no such dataset folder")
    qrels_file = path / "qrels" / f"{split}.tsv"
    if not qrels_file.exists() and (path / "qrels.tsv").exists():
        qrels_file = path / "qrels.tsv"
    for required in (path / "queries.jsonl", qrels_file):
        if not required.exists():
            raise SourceNotFound(
                f"{path}: {required.name} is missing (a dataset folder holds queries.jsonl and "
                "qrels.tsv or qrels/SPLIT.tsv, beside corpus.jsonl or its documents)"
            )
    qrels = _read_qrels(qrels_file)
    queries = {
        record["_id"]: record["text"]
        for record in read_jsonl(path / "queries.jsonl")
        if record["_id"] in qrels
    }
    if is_beir_folder(path):
        corpus = {
            record["_id"]: f"{record.get('title', '')} {record['text']}".strip()
            for record in read_jsonl(path / "corpus.jsonl")
        }
    else:
        corpus = read_document_folder(path)
    return RetrievalDataset(name=path.resolve().name, corpus=corpus, queries=queries, qrels=qrels)


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a JSON-lines file, blank lines skipped."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        rows = csv.reader(handle, delimiter="\t")
        next(rows, None)  # the header line
        for query_id, doc_id, grade in rows:
            qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return qrels


def document_id(root: Path, path: Path) -> str:
    """A document folder's id for the file at `path`: its path under `root`, no extension."""
    return Path(path).relative_to(Path(root).absolute()).with_suffix("").as_posix()


def read_document_folder(root: Path) -> dict[str, str]:
    """The text of every file the walk reads under `root`, by document id."""
    return {
        document_id(root, source.path): read_document(source).text for source in walk_folder(root)
    }

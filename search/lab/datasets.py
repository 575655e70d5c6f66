"""Load evaluation data: BEIR retrieval sets, STS-B pairs and WiC word-sense pairs."""

from __future__ import annotations

import csv
import hashlib
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

    def content_hash(self) -> str:
        """A hash of the corpus texts and ids, to cache what is computed from them."""
        digest = hashlib.sha256()
        for doc_id, text in self.corpus.items():
            digest.update(doc_id.encode() + b"\0" + text.encode() + b"\0")
        return digest.hexdigest()


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
        for record in _read_jsonl(path / "queries.jsonl")
        if record["_id"] in qrels
    }
    if (path / "corpus.jsonl").exists():
        corpus = {
            record["_id"]: f"{record.get('title', '')} {record['text']}".strip()
            for record in _read_jsonl(path / "corpus.jsonl")
        }
    else:
        corpus = _read_document_folder(path)
    return RetrievalDataset(name=path.resolve().name, corpus=corpus, queries=queries, qrels=qrels)


def load_texts(path: Path) -> list[str]:
    """Texts to train word vectors on: a BEIR folder's corpus (title and text), a
    classification folder's training texts (train.tsv with a `label` column, labels
    left out), a folder of documents, or a text file with one text per line."""
    path = Path(path)
    if path.is_file():
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not path.is_dir():
        raise SourceNotFound(f"{path}: no such corpus file or folder")
    if (path / "train.tsv").exists() and not (path / "corpus.jsonl").exists():
        from search.lab.classification_data import load_classification_set

        return load_classification_set(path).train.texts
    if (path / "corpus.jsonl").exists():
        return [
            f"{record.get('title', '')} {record['text']}".strip()
            for record in _read_jsonl(path / "corpus.jsonl")
        ]
    return list(_read_document_folder(path).values())


def _read_jsonl(path: Path) -> list[dict]:
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


def _read_document_folder(root: Path) -> dict[str, str]:
    corpus = {}
    for source in walk_folder(root):
        doc_id = source.path.relative_to(root.absolute()).with_suffix("").as_posix()
        corpus[doc_id] = read_document(source).text
    return corpus


@dataclass(frozen=True)
class SentencePair:
    """Two sentences and a gold label: a 0-5 similarity (STS-B) or same sense (WiC)."""

    first: str
    second: str
    gold: float


def load_sts(path: Path) -> list[SentencePair]:
    """STS-B pairs: tab-separated genre, file, year, id, score, sentence1, sentence2."""
    pairs = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 7:
            pairs.append(SentencePair(fields[5], fields[6], float(fields[4])))
    return pairs


def sts_sentences(path: Path) -> list[str]:
    """Every sentence of an STS-B folder's sts-*.csv files (in name order), or of one file.

    What word2vec and fasttext are trained on for `sts`; the scores are not used.
    """
    path = Path(path)
    sources = sorted(path.glob("sts-*.csv")) if path.is_dir() else [path]
    return [
        sentence
        for source in sources
        for pair in load_sts(source)
        for sentence in (pair.first, pair.second)
    ]


@dataclass(frozen=True)
class WordInContext:
    """A WiC item: the target word, its word position in each sentence, same sense or not."""

    word: str
    first: str
    first_index: int
    second: str
    second_index: int
    same_sense: bool


def load_wic(folder: Path, split: str) -> list[WordInContext]:
    """WiC `SPLIT/SPLIT.data.txt` (word, POS, i-j, sentence1, sentence2) with its gold T/F."""
    base = Path(folder) / split
    data = (base / f"{split}.data.txt").read_text(encoding="utf-8").splitlines()
    gold = (base / f"{split}.gold.txt").read_text(encoding="utf-8").split()
    items = []
    for line, label in zip(data, gold, strict=True):
        word, _pos, indexes, first, second = line.split("\t")
        first_index, second_index = (int(i) for i in indexes.split("-"))
        items.append(WordInContext(word, first, first_index, second, second_index, label == "T"))
    return items

"""Load evaluation data: texts to train word vectors on, STS-B pairs and WiC word-sense
pairs (judged retrieval collections load with `search.judged.collection`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import SourceNotFound
from search.judged.collection import RetrievalDataset, read_document_folder, read_jsonl


def content_hash(dataset: RetrievalDataset) -> str:
    """A hash of a collection's corpus texts and ids, to cache what is computed from them."""
    digest = hashlib.sha256()
    for doc_id, text in dataset.corpus.items():
        digest.update(doc_id.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()


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
        from lab.classification_data import load_classification_set

        return load_classification_set(path).train.texts
    if (path / "corpus.jsonl").exists():
        return [
            f"{record.get('title', '')} {record['text']}".strip()
            for record in read_jsonl(path / "corpus.jsonl")
        ]
    return list(read_document_folder(path).values())


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

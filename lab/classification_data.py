"""Load a sentence-classification set: a folder of train.tsv, optional dev.tsv, test.tsv.

Each file is tab-separated with a header line naming two columns: `label` (any labels:
0/1, words, numbers) and one other, the text (SST-2's `sentence<TAB>label`). Lines are
split on tabs, never parsed as CSV: a text may hold quotes. Without a dev.tsv, a tenth
of train.tsv (stratified, seeded) is held out to choose the probe's regularisation.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexer.errors import InvalidQuery, SourceNotFound

LABEL_COLUMN = "label"
SPLITS = ("train", "dev", "test")
HELD_OUT_SHARE = 0.1
HELD_OUT_SEED = 13


class InvalidDataset(InvalidQuery):
    """A classification file that does not have the expected layout or labels."""


@dataclass(frozen=True)
class LabelledTexts:
    """The texts of one split and their labels (as written in the file)."""

    texts: list[str]
    labels: list[str]

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True)
class ClassificationSet:
    """train, dev (from dev.tsv, or held out of train.tsv) and test."""

    name: str
    train: LabelledTexts
    dev: LabelledTexts
    test: LabelledTexts
    dev_source: str  # "dev.tsv", or "held out of train.tsv"
    text_column: str

    @property
    def labels(self) -> list[str]:
        """Every label of the training split, in a stable order."""
        return sorted(set(self.train.labels), key=_label_order)


def load_classification_set(folder: Path) -> ClassificationSet:
    """Read and check a classification folder (see the module's layout)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SourceNotFound(f"{folder}: no such dataset folder")
    for name in ("train", "test"):
        if not (folder / f"{name}.tsv").is_file():
            raise SourceNotFound(
                f"{folder}: {name}.tsv is missing (a classification folder holds train.tsv, "
                "optional dev.tsv, and test.tsv: tab-separated, a header line, a `label` column)"
            )
    train, column = read_split(folder / "train.tsv")
    test, _ = read_split(folder / "test.tsv", column)
    if (folder / "dev.tsv").is_file():
        dev, _ = read_split(folder / "dev.tsv", column)
        source = "dev.tsv"
    else:
        train, dev = hold_out(train)
        source = "held out of train.tsv"
    classes = set(train.labels)
    if len(classes) < 2:
        raise InvalidDataset(
            f"{folder / 'train.tsv'}: every row has the label {train.labels[0]!r}; "
            "a classifier needs at least two classes"
        )
    for name, split in (("dev", dev), ("test", test)):
        unseen = sorted(set(split.labels) - classes, key=_label_order)
        if unseen:
            where = "dev.tsv" if name == "dev" and source == "dev.tsv" else f"{name} split"
            raise InvalidDataset(
                f"{folder}: {where} has labels train.tsv never shows: "
                + ", ".join(repr(label) for label in unseen[:5])
            )
    return ClassificationSet(folder.resolve().name, train, dev, test, source, column)


def read_split(path: Path, text_column: str | None = None) -> tuple[LabelledTexts, str]:
    """One file's texts and labels, and the name of its text column."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise InvalidDataset(f"{path}: not UTF-8 text ({error.reason})") from None
    if not lines:
        raise InvalidDataset(f"{path}: the file is empty (it needs a header line and rows)")
    header = [name.strip() for name in lines[0].split("\t")]
    if len(header) != 2 or LABEL_COLUMN not in header or header[0] == header[1]:
        raise InvalidDataset(
            f"{path}: the header must name two tab-separated columns, one of them "
            f"`{LABEL_COLUMN}`, not {lines[0]!r}"
        )
    label_at = header.index(LABEL_COLUMN)
    column = header[1 - label_at]
    if text_column is not None and column != text_column:
        raise InvalidDataset(f"{path}: the text column is {column!r}, train.tsv's {text_column!r}")
    texts, labels = [], []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise InvalidDataset(
                f"{path} line {number}: {len(fields)} tab-separated fields, not 2 "
                f"({column} and {LABEL_COLUMN})"
            )
        label = fields[label_at].strip()
        if not label:
            raise InvalidDataset(f"{path} line {number}: the label is empty")
        texts.append(fields[1 - label_at].strip())
        labels.append(label)
    if not texts:
        raise InvalidDataset(f"{path}: no rows under the header")
    return LabelledTexts(texts, labels), column


def hold_out(
    train: LabelledTexts, share: float = HELD_OUT_SHARE, seed: int = HELD_OUT_SEED
) -> tuple[LabelledTexts, LabelledTexts]:
    """Split a training set into what is kept and a stratified, seeded held-out part
    (at least one row of each class with two or more rows)."""
    rng = np.random.default_rng(seed)
    held: set[int] = set()
    by_label: dict[str, list[int]] = {}
    for row, label in enumerate(train.labels):
        by_label.setdefault(label, []).append(row)
    for rows in by_label.values():
        if len(rows) >= 2:
            count = max(1, round(len(rows) * share))
            held.update(int(r) for r in rng.choice(rows, size=count, replace=False))
    kept = [row for row in range(len(train)) if row not in held]
    chosen = sorted(held)
    return _subset(train, kept), _subset(train, chosen)


def label_counts(split: LabelledTexts) -> dict[str, int]:
    """How many rows have each label."""
    return dict(sorted(Counter(split.labels).items(), key=lambda item: _label_order(item[0])))


def _subset(split: LabelledTexts, rows: list[int]) -> LabelledTexts:
    return LabelledTexts([split.texts[r] for r in rows], [split.labels[r] for r in rows])


def _label_order(label: str) -> tuple[int, float, str]:
    """Numbers in numeric order, then other labels alphabetically."""
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)

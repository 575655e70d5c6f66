"""The word-level intrinsic test sets: Google's analogies, WordSim-353 and SimLex-999.

All three ship in gensim's test data (`gensim.test.utils.datapath`), installed with the
`classic` extra; they are read from there, never copied. Words are lower-cased, as the
case-insensitive evaluation of gensim does it (GloVe 6B is lower-cased).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from indexer.encoders.optional import require
from indexer.errors import SourceNotFound

ANALOGIES_FILE = "questions-words.txt"
PAIR_SETS = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}


@dataclass(frozen=True)
class Analogy:
    """a is to b as c is to expected (king : queen :: man : woman), in a named section."""

    section: str
    a: str
    b: str
    c: str
    expected: str

    @property
    def words(self) -> tuple[str, str, str, str]:
        return (self.a, self.b, self.c, self.expected)


@dataclass(frozen=True)
class WordPair:
    """Two words and a human similarity (or relatedness) score."""

    first: str
    second: str
    score: float


def is_syntactic(section: str) -> bool:
    """Google's set names its syntactic sections gram1-... to gram9-...; the rest are semantic."""
    return section.startswith("gram")


def gensim_data(name: str) -> Path:
    """The path of one of gensim's test-data files (needs gensim: the `classic` extra)."""
    utils = require("gensim.test.utils", "words")
    return Path(utils.datapath(name))


def load_analogies(path: Path | None = None) -> list[Analogy]:
    """Questions of `questions-words.txt` layout: `: section` lines, then `a b c d` lines."""
    path = Path(path) if path is not None else gensim_data(ANALOGIES_FILE)
    questions: list[Analogy] = []
    section = None
    for number, line in enumerate(_read_lines(path), start=1):
        if line.startswith(":"):
            section = line[1:].strip()
            continue
        fields = line.lower().split()
        if not fields:
            continue
        if section is None or len(fields) != 4:
            raise SourceNotFound(
                f"{path} line {number}: not an analogy file (`: section` lines, then four "
                "words a line)"
            )
        questions.append(Analogy(section, *fields))
    if not questions:
        raise SourceNotFound(f"{path}: no analogy questions in the file")
    return questions


def load_pairs(path: Path) -> list[WordPair]:
    """Word pairs, tab-separated `word1 word2 score`; lines starting with # are comments."""
    pairs: list[WordPair] = []
    for number, line in enumerate(_read_lines(Path(path)), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        try:
            first, second, score = fields
            pairs.append(WordPair(first.strip().lower(), second.strip().lower(), float(score)))
        except ValueError:
            raise SourceNotFound(
                f"{path} line {number}: not a word-pair line (word, word, score, tab-separated)"
            ) from None
    if not pairs:
        raise SourceNotFound(f"{path}: no word pairs in the file")
    return pairs


def _read_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise SourceNotFound(f"{path}: no such file")
    return path.read_text(encoding="utf-8").splitlines()

"""`ctxsearch words`: analogies (3CosAdd), word-pair Spearman, coverage, every method."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lab.corpus_vectors import corpus_word_vectors, find_occurrences, sentences_of
from lab.word_metrics import WordTable, analogy_accuracy, pair_correlation
from lab.word_sets import (
    PAIR_SETS,
    Analogy,
    WordPair,
    gensim_data,
    load_analogies,
    load_pairs,
)
from lab.word_vectors import WordOccurrence, contextual_word_vectors
from search.cli import cli


def _table(vectors: dict[str, list[float]], ranks: dict[str, int] | None = None) -> WordTable:
    words = list(vectors)
    matrix = np.array([vectors[w] for w in words], dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.maximum(norms, 1e-12)
    return WordTable(words, unit, norms[:, 0] > 0, ranks)


# royal, male, female, fruit: king - man + woman lands on queen
ROYAL = {
    "king": [1, 1, 0, 0],
    "queen": [1, 0, 1, 0],
    "man": [0, 1, 0, 0],
    "woman": [0, 0, 1, 0],
    "apple": [0, 0, 0, 1],
    "emperor": [1, 1, 0.1, 0],
}


def test_3cosadd_finds_queen_never_answers_a_question_word_and_counts_coverage():
    table = _table(ROYAL)
    questions = [
        Analogy("family", "man", "king", "woman", "queen"),
        # The nearest word to b - a + c is b (king) itself here: it must be skipped.
        Analogy("family", "woman", "king", "woman", "emperor"),
        Analogy("gram1-test", "woman", "queen", "man", "king"),
        Analogy("gram1-test", "man", "king", "woman", "aardvark"),  # not answerable
    ]
    result = analogy_accuracy(table, questions)
    assert result["accuracy"] == 1.0
    assert (result["answered"], result["questions"], result["coverage"]) == (3, 4, 0.75)
    assert result["semantic"] == {"accuracy": 1.0, "answered": 2, "questions": 2, "coverage": 1.0}
    assert result["syntactic"]["answered"] == 1 and result["syntactic"]["questions"] == 2

    # With only the first four words as candidates, emperor can be no answer and no
    # question may use it: the question is not answerable any more.
    restricted = analogy_accuracy(table, questions, candidates=4)
    assert restricted["candidates"] == 4 and restricted["answered"] == 2


def test_analogies_and_pairs_agree_with_gensim_keyedvectors(tmp_path):
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(300)]
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors[:40] += vectors[40:80]  # some structure, so that some answers are right
    lines = [": capital-x"]
    for i in range(0, 60, 3):
        lines.append(f"w{i} w{i + 40} w{i + 1} w{i + 41}")
    lines.append(": gram3-y")
    lines += [f"w{i} w{i + 1} w{i + 250} w{i + 2}" for i in range(0, 30, 2)]
    questions_file = tmp_path / "questions.txt"
    questions_file.write_text("\n".join(lines) + "\n")
    pairs_file = tmp_path / "pairs.tsv"
    pairs_file.write_text(
        "# comment\n"
        + "".join(f"w{i}\tw{(i * 7) % 300}\t{rng.uniform(0, 10):.2f}\n" for i in range(50))
    )
    keyed = KeyedVectors(16)
    keyed.add_vectors(words, vectors)
    ranks = {word: rank for rank, word in enumerate(words)}
    table = _table(dict(zip(words, vectors.tolist(), strict=True)), ranks)

    ours = analogy_accuracy(table, load_analogies(questions_file), candidates=200)
    theirs, sections = keyed.evaluate_word_analogies(str(questions_file), restrict_vocab=200)
    assert ours["accuracy"] == pytest.approx(theirs, abs=1e-4)
    assert ours["answered"] == len(sections[-1]["correct"]) + len(sections[-1]["incorrect"])

    # gensim's pairs skip words past restrict_vocab: so does max_rank.
    ours_pairs = pair_correlation(table, load_pairs(pairs_file), max_rank=250)
    _, spearman, oov = keyed.evaluate_word_pairs(str(pairs_file), restrict_vocab=250)
    assert ours_pairs["spearman"] == pytest.approx(spearman.statistic, abs=1e-4)
    assert ours_pairs["coverage"] == pytest.approx(1 - oov / 100, abs=1e-4)


def test_pairs_without_vectors_are_left_out_and_counted():
    table = _table({**ROYAL, "void": [0, 0, 0, 0]})
    pairs = [
        WordPair("king", "queen", 8.0),
        WordPair("king", "apple", 1.0),
        WordPair("man", "woman", 6.0),
        WordPair("king", "void", 5.0),  # a word without a vector
        WordPair("king", "unheard", 5.0),  # a word not in the table
    ]
    result = pair_correlation(table, pairs)
    assert (result["pairs"], result["total"], result["coverage"]) == (3, 5, 0.6)
    # cosines 0.5, 0, 0 (ranks 3, 1.5, 1.5) against scores 8, 1, 6 (ranks 3, 1, 2)
    assert result["spearman"] == pytest.approx(np.sqrt(3) / 2, abs=1e-4)


def test_the_test_sets_come_from_gensims_test_data():
    questions = load_analogies()
    assert len(questions) == 19_544
    assert len({q.section for q in questions}) == 14
    first = Analogy("capital-common-countries", "athens", "greece", "baghdad", "iraq")
    assert questions[0] == first
    sizes = {name: len(load_pairs(gensim_data(file))) for name, file in PAIR_SETS.items()}
    assert sizes == {"wordsim353": 353, "simlex999": 999}


def test_corpus_vectors_average_the_first_occurrences_contextual_vectors(tiny_model_dir):
    from indexer.encoders.loading import load_model

    loaded = load_model(str(tiny_model_dir))
    texts = ["The bank was steep. A bank lends money!", "Riverbanks flood. The bank closed."]
    sentences = sentences_of(texts)
    assert sentences == [
        "The bank was steep.",
        "A bank lends money!",
        "Riverbanks flood.",
        "The bank closed.",
    ]
    found = find_occurrences(sentences, {"bank": 0, "money": 1, "absent": 2}, per_word=2)
    assert [(o.sentence, o.row) for o in found] == [(0, 0), (1, 0), (1, 1)]

    vectors, counts = corpus_word_vectors(loaded, ["bank", "money", "absent"], texts, per_word=2)
    assert counts.tolist() == [2, 1, 0]
    assert not vectors[2].any()
    by_hand = contextual_word_vectors(
        loaded, [WordOccurrence(sentences[0], 4, 8), WordOccurrence(sentences[1], 2, 6)]
    )[-1].mean(axis=0)
    assert vectors[0] == pytest.approx(by_hand / np.linalg.norm(by_hand), abs=1e-5)


def _small_sets(tmp_path):
    analogies = tmp_path / "questions.txt"
    analogies.write_text(
        ": family\nboy girl brother sister\nfather mother son daughter\n"
        "man woman king queen\nhe she his her\n"
        ": gram8-plural\ncar cars child children\nday days year years\n"
        "aardvark aardvarks zygote zygotes\n"
    )
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "# Word 1\tWord 2\tHuman (mean)\nking\tqueen\t8.6\ncar\tday\t1.2\nboy\tgirl\t7.0\n"
        "father\tson\t6.5\nyear\tday\t6.0\nman\tcars\t0.5\nzygote\tqueen\t0.3\n"
    )
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "\n".join(
            [
                "The king and the queen met the boy and the girl.",
                "A father and a mother love their son and their daughter.",
                "He said she left his car with her brother.",
                "Every day of the year the child drove cars with other children.",
                "The man and the woman walked for days and years.",
            ]
            * 3
            # Once only: under Word2Vec's minimum count of 2.
            + ["The sister stayed."]
        )
    )
    return analogies, pairs, corpus


def test_words_runs_every_method_on_a_small_set_and_writes_a_report(tiny_model_dir, tmp_path):
    analogies, pairs, corpus = _small_sets(tmp_path)
    args = [
        "lab",
        "words",
        "--methods",
        "glove,word2vec,fasttext,static,contextual,contextual-corpus,layers",
        "--model",
        str(tiny_model_dir),
        "--corpus",
        str(corpus),
        "--vocabulary",
        "3000",
        "--analogies",
        str(analogies),
        "--wordsim353",
        str(pairs),
        "--simlex999",
        str(pairs),
        "--work-dir",
        str(tmp_path / "work"),
        "--out",
        str(tmp_path / "report"),
        "--json",
    ]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    methods = payload["methods"]
    assert list(methods) == [
        "glove",
        "word2vec",
        "fasttext",
        "static",
        "contextual",
        "contextual-corpus",
        "layer-0",
        "layer-1",
        "layer-2",
    ]
    assert payload["questions"] == 7 and payload["vocabulary"]["size"] == 3000
    glove = methods["glove"]
    # aardvark and zygote are rarer than GloVe's 3,000 most frequent words.
    assert glove["analogy_coverage"] == pytest.approx(6 / 7, abs=1e-4)
    assert glove["analogy_semantic_coverage"] == 1.0
    assert glove["analogy_syntactic_coverage"] == pytest.approx(2 / 3, abs=1e-4)
    assert glove["analogy"] >= 0.5  # GloVe knows family relations and plurals
    assert glove["wordsim353_coverage"] == 1.0 and glove["wordsim353_pairs"] == 7
    for name, values in methods.items():
        assert set(values) >= {
            "analogy",
            "analogy_coverage",
            "analogy_semantic",
            "analogy_syntactic",
            "analogy_sections",
            "wordsim353",
            "wordsim353_coverage",
            "simlex999",
            "simlex999_coverage",
            "kind",
            "seconds",
        }, name
    # Word2Vec has no vector for `sister` (seen once); FastText builds it from n-grams.
    assert methods["word2vec"]["analogy_coverage"] == pytest.approx(5 / 7, abs=1e-4)
    assert methods["fasttext"]["analogy_coverage"] == glove["analogy_coverage"]
    # The corpus holds every analogy word but aardvark and zygote (and their plurals).
    corpus_figures = methods["contextual-corpus"]
    assert corpus_figures["analogy_coverage"] == pytest.approx(6 / 7, abs=1e-4)
    assert corpus_figures["per_word"] == 10 and corpus_figures["words_found"] > 20
    assert 0 < methods["static"]["multi_token_words"] < 1
    assert methods["layer-2"]["analogy"] == methods["contextual"]["analogy"]  # 2 layers
    assert "reference" in payload and payload["reference"]["tolerance"] == 0.005
    report = (tmp_path / "report" / "report.md").read_text()
    assert "| contextual-corpus |" in report and "words.png" in report
    assert (tmp_path / "report" / "words.png").stat().st_size > 10_000
    assert json.loads((tmp_path / "report" / "results.json").read_text())["questions"] == 7

    # A second run trains nothing and encodes the corpus again from nothing: all cached.
    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    figures = json.loads(again.stdout)["methods"]
    assert figures["contextual-corpus"]["analogy"] == corpus_figures["analogy"]
    assert figures["word2vec"]["setup_seconds"] == methods["word2vec"]["setup_seconds"]


def test_words_reproduces_glove_measured_with_gensim():
    result = CliRunner().invoke(cli, ["lab", "words", "--methods", "glove", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    glove = payload["methods"]["glove"]
    assert glove["wordsim353"] == pytest.approx(0.5033, abs=0.005)
    assert glove["simlex999"] == pytest.approx(0.2631, abs=0.005)
    assert glove["analogy"] == pytest.approx(0.4969, abs=0.005)
    assert glove["analogy_answered"] == 14_877 and glove["simlex999_pairs"] == 998
    assert payload["reference"]["reproduced"] is True
    table = CliRunner().invoke(cli, ["lab", "words", "--methods", "glove"])
    assert "reproduced within 0.005" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--methods", "glove,elmo"], "unknown method(s) elmo: choose from glove,"),
        (["--vocabulary", "0"], "the vocabulary must hold at least one word, not 0"),
        (["--per-word", "0"], "--per-word must be at least 1, not 0"),
        (["--analogies", "no-such-file.txt"], "no-such-file.txt: no such file"),
        (["--analogies", "{bad}"], "line 1: not an analogy file"),
        (["--wordsim353", "{bad}"], "line 1: not a word-pair line"),
    ],
)
def test_words_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    bad = tmp_path / "bad.txt"
    bad.write_text("just some words here\n")
    args = [arg.replace("{bad}", str(bad)) for arg in args]
    if "--methods" not in args:
        args = ["--methods", "glove", *args]
    result = CliRunner().invoke(cli, ["lab", "words", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stderr.strip().splitlines()[-1].startswith("Error: ")
    assert message in result.stderr.strip().splitlines()[-1]

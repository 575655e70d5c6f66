"""`ctxsearch classify`: a logistic-regression probe on frozen vectors, C chosen on dev."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lab.agreement import compare_rankings
from lab.classification_data import LabelledTexts, hold_out, load_classification_set
from lab.probe import probe
from search.cli import cli

GOOD = ["good", "great", "wonderful", "lovely", "moving"]
BAD = ["bad", "awful", "terrible", "dull", "tedious"]


def _rows(count: int, seed: int, labels=("0", "1"), header="sentence\tlabel") -> str:
    """Sentiment-like rows whose label is carried by one word (text first, then label)."""
    rng = random.Random(seed)
    lines = [header]
    for number in range(count):
        label = labels[number % len(labels)]
        word = rng.choice(GOOD if label == labels[-1] else BAD)
        text = f"a {word} film , {rng.choice(['quite', 'so', 'very'])} {word} indeed"
        lines.append(f"{label}\t{text}" if header.startswith("label") else f"{text}\t{label}")
    return "\n".join(lines) + "\n"


def _folder(root: Path, dev: bool = True, **layout) -> Path:
    folder = root / "set"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.tsv").write_text(_rows(60, 1, **layout))
    if dev:
        (folder / "dev.tsv").write_text(_rows(14, 2, **layout))
    (folder / "test.tsv").write_text(_rows(14, 3, **layout))
    return folder


def _classify(*args: str):
    return CliRunner().invoke(cli, ["lab", "classify", *args])


def test_classify_probes_every_kind_of_method_and_writes_the_report(tiny_model_dir, tmp_path):
    folder = _folder(tmp_path)
    words = tmp_path / "words.json"
    words.write_text(
        json.dumps(
            {
                "methods": {
                    "glove": {
                        "analogy": 0.5,
                        "wordsim353": 0.5,
                        "simlex999": 0.26,
                        "kind": "static",
                    },
                    "static": {
                        "analogy": 0.6,
                        "wordsim353": 0.74,
                        "simlex999": 0.47,
                        "kind": "static",
                    },
                    "contextual": {
                        "analogy": 0.2,
                        "wordsim353": 0.3,
                        "simlex999": 0.1,
                        "kind": "contextual",
                    },
                }
            }
        )
    )
    args = [str(folder), "--methods", "glove,word2vec,static,contextual,cls,max,mean-last2,tfidf"]
    args += ["--model", str(tiny_model_dir), "--work-dir", str(tmp_path / "work")]
    args += ["--out", str(tmp_path / "report"), "--intrinsic", str(words), "--json"]
    result = _classify(*args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert (payload["train"], payload["dev"], payload["test"]) == (60, 14, 14)
    assert payload["dev_source"] == "dev.tsv" and payload["labels"] == {"0": 30, "1": 30}
    assert payload["majority_accuracy"] == 0.5
    methods = payload["methods"]
    assert list(methods) == [
        "glove",
        "word2vec",
        "static",
        "contextual",
        "cls",
        "max",
        "mean-last2",
        "tfidf",
    ]
    for name, values in methods.items():
        assert 0.0 <= values["accuracy"] <= 1.0 and 0.0 <= values["macro_f1"] <= 1.0, name
        assert values["C"] in payload["grid"] and str(values["C"]) in values["dev_accuracy_by_C"]
        assert values["dev_accuracy"] == max(values["dev_accuracy_by_C"].values())
        assert "c1_accuracy" in values and values["probe_seconds"] >= 0
    # One word carries the label: the word-level methods and TF-IDF read it (60 rows).
    for name in ("tfidf", "glove"):
        assert methods[name]["c1_accuracy"] >= 0.9 and methods[name]["accuracy"] >= 0.9
    assert methods["tfidf"]["kind"] == "lexical" and methods["tfidf"]["features"] > 10
    assert methods["contextual"]["kind"] == "pooling" and methods["contextual"]["dim"] == 32
    report = tmp_path / "report"
    text = (report / "report.md").read_text()
    assert "| tfidf |" in text and "Intrinsic beside extrinsic" in text
    for image in ("classification.png", "intrinsic-vs-extrinsic.png"):
        assert (report / image).stat().st_size > 10_000
    assert json.loads((report / "results.json").read_text())["methods"].keys() == methods.keys()

    # A second run reads the contextual vectors from the work dir and scores the same.
    again = json.loads(_classify(*args).stdout)["methods"]
    assert again["contextual"]["accuracy"] == methods["contextual"]["accuracy"]


def test_without_dev_a_tenth_of_train_is_held_out_and_any_labels_work(tmp_path):
    folder = _folder(tmp_path, dev=False, labels=("neg", "neutral", "pos"), header="label\ttext")
    data = load_classification_set(folder)
    assert data.dev_source == "held out of train.tsv" and data.text_column == "text"
    assert (len(data.train), len(data.dev)) == (54, 6)
    assert sorted(set(data.dev.labels)) == ["neg", "neutral", "pos"]  # stratified
    assert not set(data.dev.texts) - set(load_classification_set(folder).dev.texts)  # seeded

    result = _classify(str(folder), "--methods", "tfidf", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["labels"] == {"neg": 18, "neutral": 18, "pos": 18}
    assert payload["methods"]["tfidf"]["accuracy"] > 0.5


def test_a_classification_folder_is_a_corpus_of_its_training_texts(tmp_path):
    from lab.datasets import load_texts

    folder = _folder(tmp_path)
    texts = load_texts(folder)
    assert texts == load_classification_set(folder).train.texts and len(texts) == 60
    assert not any("\t" in text for text in texts)


def test_hold_out_keeps_a_class_with_one_row_in_train():
    kept, held = hold_out(LabelledTexts(["a", "b", "c", "d"], ["x", "x", "x", "y"]), share=0.5)
    assert kept.labels.count("y") == 1 and "y" not in held.labels and len(held) == 2


def test_c_is_chosen_on_dev_and_test_labels_never_change_it():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(300, 8))
    labels = (features[:, 0] + 0.8 * rng.normal(size=300) > 0).astype(int)
    train, dev, test = (
        (features[:200], labels[:200]),
        (features[200:250], labels[200:250]),
        (
            features[250:],
            labels[250:],
        ),
    )
    first = probe(train, dev, test)
    flipped = probe(train, dev, (test[0], 1 - test[1]))
    assert first["C"] == flipped["C"] and first["dev_accuracy_by_C"] == flipped["dev_accuracy_by_C"]
    assert first["accuracy"] == pytest.approx(1 - flipped["accuracy"], abs=1e-4)
    best = max(first["dev_accuracy_by_C"].values())
    assert first["dev_accuracy_by_C"][str(first["C"])] == best
    assert min(c for c, v in first["dev_accuracy_by_C"].items() if v == best) == str(first["C"])


def test_rankings_that_disagree_are_listed_with_both_gaps():
    words = {"methods": {"a": {"analogy": 0.6}, "b": {"analogy": 0.5}, "c": {"analogy": 0.1}}}
    classify = {
        "methods": {"a": {"accuracy": 0.78}, "b": {"accuracy": 0.80}, "c": {"accuracy": 0.7}}
    }
    comparison = compare_rankings(words, classify)["measures"]["analogy"]
    assert comparison["spearman"] == pytest.approx(0.5)
    assert comparison["ranks"]["a"] == {"intrinsic": 1, "extrinsic": 2}
    assert comparison["inversions"] == [
        {
            "intrinsic_better": "a",
            "extrinsic_better": "b",
            "intrinsic_gap": 0.1,
            "extrinsic_gap": 0.02,
        }
    ]


@pytest.mark.parametrize(
    ("prepare", "args", "message"),
    [
        (lambda f: (f / "train.tsv").unlink(), [], "train.tsv is missing"),
        (lambda f: (f / "test.tsv").unlink(), [], "test.tsv is missing"),
        (
            lambda f: (f / "train.tsv").write_text("sentence\tscore\na\t1\n"),
            [],
            "the header must name two tab-separated columns, one of them `label`",
        ),
        (
            lambda f: (f / "train.tsv").write_text("sentence\tlabel\na good film\t1\nfine\t1\n"),
            [],
            "every row has the label '1'; a classifier needs at least two classes",
        ),
        (
            lambda f: (f / "train.tsv").write_text("sentence\tlabel\na\t0\nb\t1\nc\tx\ty\n"),
            [],
            "train.tsv line 4: 3 tab-separated fields, not 2 (sentence and label)",
        ),
        (
            lambda f: (f / "test.tsv").write_text("sentence\tlabel\na\t2\n"),
            [],
            "test split has labels train.tsv never shows: '2'",
        ),
        (lambda f: (f / "dev.tsv").write_text(""), [], "dev.tsv: the file is empty"),
        (lambda f: (f / "test.tsv").write_bytes(b"sentence\tlabel\n\xff\t1\n"), [], "not UTF-8"),
        (lambda f: None, ["--methods", "tfidf,elmo"], "unknown method(s) elmo: choose from glove,"),
    ],
)
def test_classify_bad_input_is_one_line_and_exit_2(tmp_path, prepare, args, message):
    folder = _folder(tmp_path)
    prepare(folder)
    result = _classify(str(folder), *(args or ["--methods", "tfidf"]))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and message in last, result.stderr


def test_classify_refuses_a_missing_folder_and_an_intrinsic_file_that_is_not_words_json(tmp_path):
    result = _classify(str(tmp_path / "nowhere"))
    assert result.exit_code == 2 and "no such dataset folder" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    result = _classify(str(_folder(tmp_path)), "--intrinsic", str(bad))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {bad}: not the JSON of `ctxsearch lab words --json`"
    )


def test_a_missing_scikit_learn_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "sklearn", None)
    result = _classify(str(_folder(tmp_path)), "--methods", "tfidf")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "Error: classify needs the package scikit-learn: pip install 'ctxsearch[classic]'"
    ]

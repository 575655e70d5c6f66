"""The classic static encoders: GloVe from its package, Word2Vec and FastText trained with
gensim, Model2Vec distilled from a real (tiny) BERT; and the error when a package is missing."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from indexer.encoders.words import words
from lab.similarity import bundled_sentences
from search.cli import cli
from tests.conftest import SAMPLE_CORPUS


def test_words_lowercase_keep_inner_hyphens_and_apostrophes_and_drop_punctuation():
    assert words("The Well-known river's BANK, (again): covid-19; a_b  \u2019tis") == [
        "the",
        "well-known",
        "river's",
        "bank",
        "again",
        "covid-19",
        "a",
        "b",
        "tis",
    ]
    assert words("... !!! ---") == []


def test_glove_is_stanfords_release_and_averages_known_words():
    from indexer.encoders.glove import GloveEncoder

    glove = GloveEncoder()
    assert glove.dim == 50 and len(glove.rows) == 400_000
    # The first line of glove.6B.50d.txt, as Stanford published it.
    assert glove.lookup("the")[:5] == pytest.approx([0.418, 0.24968, -0.41242, 0.1217, 0.34527])
    assert glove.lookup("zzqxv") is None

    king, queen, carrot = (glove.word_vector(w) for w in ("king", "queen", "carrot"))
    assert float(king @ queen) > 0.7 > float(king @ carrot)
    # A hyphenated word GloVe lacks falls back to its parts; unknown words are left out.
    assert not glove.in_vocabulary("river-queen")
    parts = glove.lookup("river") + glove.lookup("queen")
    assert glove.word_vector("river-queen") == pytest.approx(parts / np.linalg.norm(parts), 1e-5)
    vectors = glove.encode(["The king, zzqxv!", "!!!"])
    assert vectors[0] == pytest.approx(glove.word_vector("the king"), abs=1e-6)
    assert not vectors[1].any(), "a text without a known word encodes to zero"


def test_word2vec_and_fasttext_train_deterministically_and_once(tmp_path):
    from lab.encoders.trained import FastTextEncoder, Word2VecEncoder

    corpus = bundled_sentences()
    for trained in (Word2VecEncoder, FastTextEncoder):
        first = trained.train(corpus, tmp_path / "a")
        again = trained.train(corpus, tmp_path / "b")
        assert first.dim == 100 and first.info["texts"] == len(corpus)
        assert np.array_equal(first.encode(corpus[:20]), again.encode(corpus[:20]))

        (folder,) = (tmp_path / "a").glob(f"{trained.method}-*")
        stamp = (folder / "info.json").stat().st_mtime_ns
        cached = trained.train(corpus, tmp_path / "a")
        assert (folder / "info.json").stat().st_mtime_ns == stamp, "trained a second time"
        assert np.array_equal(cached.encode(corpus[:5]), first.encode(corpus[:5]))

        other = trained.train([*corpus, "One more sentence about the river bank."], tmp_path / "a")
        assert len(list((tmp_path / "a").glob(f"{trained.method}-*"))) == 2
        assert other.info["corpus"] != first.info["corpus"]


def test_fasttext_builds_an_unseen_word_from_its_character_ngrams(tmp_path):
    from gensim.models.fasttext import ft_ngram_hashes

    from lab.encoders.trained import FastTextEncoder, Word2VecEncoder

    corpus = bundled_sentences()
    word2vec = Word2VecEncoder.train(corpus, tmp_path)
    fasttext = FastTextEncoder.train(corpus, tmp_path)
    unseen = "riverbanks"
    assert unseen not in {w for text in corpus for w in words(text)}
    assert not word2vec.in_vocabulary(unseen) and word2vec.word_vector(unseen) is None
    assert not fasttext.in_vocabulary(unseen)

    ngrams = fasttext.ngrams(unseen)
    assert ngrams[:3] == ["<ri", "riv", "ive"] and "banks>" in ngrams and len(ngrams) == 34
    buckets = ft_ngram_hashes(unseen, 3, 6, fasttext.vectors.bucket)
    by_hand = fasttext.vectors.vectors_ngrams[buckets].mean(axis=0)
    assert fasttext.lookup(unseen) == pytest.approx(by_hand, abs=1e-6)
    assert fasttext.coverage(["riverbanks and floodplains"]) == 1.0
    assert word2vec.coverage(["riverbanks and floodplains"]) < 1.0


def test_model2vec_distils_a_real_tiny_bert_offline_once(tiny_model_dir, tmp_path):
    from indexer.encoders.distilled import Model2VecEncoder
    from indexer.encoders.loading import load_model

    loaded = load_model(str(tiny_model_dir))
    table_before = loaded.model.get_input_embeddings().weight.detach().clone()
    encoder = Model2VecEncoder.distil(loaded, tmp_path)
    assert encoder.name == "model2vec" and encoder.dim == loaded.dim  # PCA keeps 32 of 32
    assert encoder.info["tokens"] > 29_000 and encoder.info["fingerprint"] == loaded.fingerprint
    vectors = encoder.encode(["The river bank.", "A savings bank.", ""])
    assert np.linalg.norm(vectors[:2], axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert not vectors[2].any()
    assert encoder.word_vector("bank") == pytest.approx(encoder.encode(["bank"])[0])
    # The shared, loaded model is untouched by distillation (it works on a copy).
    assert np.array_equal(loaded.model.get_input_embeddings().weight.detach(), table_before)

    (folder,) = tmp_path.glob("model2vec-*")
    stamp = (folder / "info.json").stat().st_mtime_ns
    again = Model2VecEncoder.distil(loaded, tmp_path)
    assert (folder / "info.json").stat().st_mtime_ns == stamp, "distilled a second time"
    assert np.array_equal(again.encode(["The river bank."]), vectors[:1])


def test_a_missing_package_is_one_line_naming_the_extra_and_exit_2(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gensim", None)  # as if gensim were not installed
    runner = CliRunner()
    args = [
        "lab",
        "eval",
        str(SAMPLE_CORPUS),
        "--methods",
        "static,word2vec",
        "--work-dir",
        str(tmp_path),
    ]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "Error: the word2vec method needs gensim: pip install 'ctxsearch[classic]'"
    ]
    result = runner.invoke(cli, ["lab", "neighbours", "bank", "--methods", "fasttext"])
    assert result.exit_code == 2 and "fasttext method needs gensim" in result.stderr

    # Asked for nothing in particular, a command leaves such methods out and says so.
    result = runner.invoke(
        cli,
        ["lab", "neighbours", "bank", "--work-dir", str(tmp_path), "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert set(payload["words"]["bank"]) == {"glove"}
    assert payload["left_out"] == ["word2vec", "fasttext"]
    assert "pip install 'ctxsearch[classic]'" in result.stderr


def test_neighbours_shows_an_unseen_word_only_fasttext_can_place(tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "lab",
            "neighbours",
            "riverbanks",
            "bank",
            "--work-dir",
            str(tmp_path),
            "-k",
            "3",
            "--json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    unseen = json.loads(result.stdout)["words"]["riverbanks"]
    assert unseen["word2vec"] == {
        "method": "word2vec",
        "in_vocabulary": False,
        "has_vector": False,
        "neighbours": [],
    }
    assert unseen["fasttext"]["in_vocabulary"] is False
    assert unseen["fasttext"]["built_from_ngrams"] == 34
    assert len(unseen["fasttext"]["neighbours"]) == 3
    assert unseen["glove"]["in_vocabulary"] is True
    assert unseen["glove"]["neighbours"][0][0] == "riverbank"

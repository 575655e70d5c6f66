"""`explain`: why each hit ranks. The words' shares add up to the cosine in both vector
spaces (the real model and the test encoder), the parts of a passage's vector add up to
the vector the index stores, the fused score is the weighted sum shown, explaining
changes no result, and lexical mode, which no vector ranked, says so."""

from __future__ import annotations

import json

import numpy as np
import pytest

from indexer.encoders.hashed import hashed_space_encoders
from indexer.encoders.spaces import space_encoders
from indexer.encoders.token_parts import Undecomposable, token_parts
from search.engine import Searcher
from search.word_shares import word_shares

PASSAGE = (
    "The riverbank was unbelievably steep; herons waited in the reeds while the bank "
    "manager walked past."
)
QUERY = "birds standing by the river"


def _shares_add_up(encoder, text: str, query: str) -> None:
    parts = token_parts(encoder, text)
    stored = encoder.encode([text])[0]
    pooled = parts.vectors.sum(axis=0)
    # the parts are the index's own vector, taken apart
    np.testing.assert_allclose(pooled / np.linalg.norm(pooled), stored, atol=1e-5)
    vector = encoder.encode([query])[0]
    shares = word_shares(parts, text, vector, frozenset({"the", "in"}))
    total = sum(word.share for word in shares.words) + shares.function + shares.special
    assert total == pytest.approx(shares.cosine, abs=1e-9)
    assert shares.cosine == pytest.approx(float(vector @ stored), abs=1e-5)
    assert not {"the", "in", ";", "."} & {word.word for word in shares.words}
    shown = shares.shown(3)
    listed = sum(word["share"] for word in shown["words"])
    apart = shown["other_words"] + shown["function_words"] + shown["special_tokens"]
    assert listed + apart == pytest.approx(shown["cosine"], abs=1e-5)


@pytest.mark.parametrize("space", ["contextual", "static"])
def test_word_shares_sum_to_the_cosine_with_the_real_model(model, space):
    encoder = space_encoders(model, "mean")[space]
    _shares_add_up(encoder, PASSAGE, QUERY)
    words = [
        word.word
        for word in word_shares(
            token_parts(encoder, PASSAGE), PASSAGE, encoder.encode([QUERY])[0]
        ).words
    ]
    # word pieces are merged into the words they spell
    assert "unbelievably" in words and "riverbank" in words
    assert not any(word.startswith("##") for word in words)


@pytest.mark.parametrize("space", ["contextual", "static"])
def test_word_shares_sum_to_the_cosine_with_the_test_encoder(space):
    _shares_add_up(hashed_space_encoders("mean", "token")[space], PASSAGE, QUERY)


def test_pooling_that_is_no_mean_has_no_token_shares(model):
    with pytest.raises(Undecomposable, match="cls pooling is not a mean of tokens"):
        token_parts(space_encoders(model, "cls")["contextual"], PASSAGE)


def test_a_hybrid_hit_explained_on_the_sample_corpus(sample_index):
    query = "interest rates on savings"
    with Searcher(sample_index) as searcher:
        plain = searcher.search(query, k=5)
        explained = searcher.search(query, k=5, explain=True)
    assert [h.chunk_id for h in explained.results] == [h.chunk_id for h in plain.results]
    assert all("explain" not in hit.to_dict() for hit in plain.results)
    for hit in explained.results:
        why = hit.explain
        assert set(why["sides"]) == {"contextual", "lexical"}
        fusion = why["fusion"]
        assert fusion["rule"] == "adaptive" and fusion["why"]
        assert fusion["dense_weight"] + fusion["lexical_weight"] == pytest.approx(1.0)
        assert fusion["dense_part"] + fusion["lexical_part"] == pytest.approx(
            fusion["fused"], abs=1e-5
        )
        # as the lexical side reads the query (its stop words, "on" and "interest", left out)
        assert [term["term"] for term in why["terms"]] == ["rates", "savings"]
        for space in ("contextual", "static"):
            words = why["words"][space]
            total = sum(w["share"] for w in words["words"]) + words["other_words"]
            apart = words["function_words"] + words["special_tokens"]
            assert total + apart == pytest.approx(words["cosine"], abs=1e-5)
        # recomputed in fp32 from the passage: the stored vector's cosine, to rounding
        assert why["words"]["contextual"]["cosine"] == pytest.approx(hit.similarity, abs=2e-3)
    top = explained.results[0].explain
    assert top["sides"]["contextual"]["rank"] is not None
    assert any(term["in_passage"] for term in top["terms"])


def test_explain_with_a_fixed_dense_weight_says_it_was_asked_for(sample_index):
    with Searcher(sample_index) as searcher:
        hit = searcher.search("tower crane", k=1, explain=True, dense_weight=0.25).results[0]
    assert hit.explain["fusion"]["rule"] == "fixed"
    assert hit.explain["fusion"]["dense_weight"] == 0.25
    assert "dense_weight 0.25 was asked for" in hit.explain["fusion"]["why"]


def test_a_contextual_hit_explained_has_no_fusion(sample_index):
    with Searcher(sample_index) as searcher:
        hit = searcher.search("a big cat of the jungle", mode="contextual", k=1, explain=True)
    why = hit.results[0].explain
    assert set(why["sides"]) == {"contextual"} and "fusion" not in why
    assert set(why["words"]) == {"contextual", "static"}


@pytest.fixture(scope="module")
def notes_index(tmp_path_factory):
    """Two notes indexed with the test encoder."""
    from indexer import Indexer
    from indexer.encoders.hashed import HASHED_MODEL

    folder = tmp_path_factory.mktemp("explain") / "notes"
    folder.mkdir()
    (folder / "otters.md").write_text("# Otters\n\nOtters float on their backs in kelp.\n")
    (folder / "kettles.txt").write_text("A kettle whistles when the water boils in kelp.\n")
    index = folder.parent / "index"
    Indexer(index, model=HASHED_MODEL).index_folder(folder)
    return index


def test_lexical_mode_explains_the_words_matched_and_says_no_vector_ranked(notes_index):
    with Searcher(notes_index) as searcher:
        hit = searcher.search("otters kelp", mode="lexical", k=1, explain=True).results[0]
        hybrid = searcher.search("otters kelp", k=1, explain=True).results[0]
    why = hit.explain
    assert set(why["sides"]) == {"lexical"} and why["sides"]["lexical"]["rank"] == 1
    assert "words" not in why and "fusion" not in why
    assert any("lexical mode" in note for note in why["notes"])
    assert {term["term"] for term in why["terms"] if term["in_passage"]} == {"otters", "kelp"}
    # the test encoder's hashed words and word pairs are sums too
    shares = hybrid.explain["words"]["contextual"]
    assert {"otters", "kelp"} <= {w["word"] for w in shares["words"] if w["share"] > 0}


def test_query_explain_prints_each_section_under_each_hit(notes_index):
    from click.testing import CliRunner

    from search.cli import cli

    def query(*args: str):
        return CliRunner().invoke(cli, ["query", "otters kelp", "--index", str(notes_index), *args])

    hybrid = query("--explain")
    assert hybrid.exit_code == 0, hybrid.output
    for section in (
        "ranks: contextual #1 of 2",
        "; lexical #",
        "fusion: dense ",
        "  why: ",
        "terms (of 2 passages): otters held (in 1, idf ",
        "words, contextual: cosine ",
        "words, static: cosine ",
        "function words ",
        "special tokens +0.000",
    ):
        assert section in hybrid.stdout, section
    assert hybrid.stdout.count("ranks: ") == 2
    lexical = query("--explain", "--mode", "lexical")
    assert lexical.exit_code == 0
    assert "ranks: lexical #1 of 2 (bm25 " in lexical.stdout and "words, " not in lexical.stdout
    assert "note: lexical mode: ranked by the query's words alone" in lexical.stdout
    assert "ranks: " not in query().stdout
    as_json = query("--explain", "--json")
    assert all("explain" in hit for hit in json.loads(as_json.stdout)["results"])

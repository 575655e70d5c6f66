"""A document is scored by its best passage plus a little of its best in other sections."""

from __future__ import annotations

import pytest

from indexer import Indexer
from search import Searcher
from search.document_scores import SUPPORT, document_ranked, mode_ranked
from search.modes import Mode


def test_a_document_answering_in_several_sections_outranks_one_slightly_better_passage():
    # chunk -> (document, section): 1 alone in document 10; 2, 3, 4 in three sections of 20
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.7), (5, 0.2)]
    documents = {1: (10, "A"), 2: (20, "B"), 3: (20, "B / C"), 4: (20, "B / D"), 5: (30, None)}
    rescored = document_ranked(ranked, documents, 0.2)
    assert [chunk for chunk, _ in rescored][:2] == [2, 1]
    assert dict(rescored)[2] == pytest.approx(0.9 + 0.2 * 0.8 + 0.04 * 0.7)
    assert dict(rescored)[1] == 1.0 and dict(rescored)[3] == 0.8  # not a document's best


def test_passages_of_the_same_section_or_of_no_section_do_not_support_their_document():
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.7), (5, 0.6), (6, 0.5)]
    # 1-3: one section's windows, then a second section; 4-6: a text without sections
    documents = {1: (7, "S"), 2: (7, "S"), 3: (7, "T"), 4: (8, None), 5: (8, None), 6: (8, None)}
    rescored = dict(document_ranked(ranked, documents, 0.5))
    assert rescored[1] == pytest.approx(1.0 + 0.5 * 0.8)
    assert rescored[4] == 0.7


def test_in_lexical_mode_every_other_passage_of_the_document_supports_it():
    """A BM25 score of one passage is evidence about part of a document only: a small
    text cut in two windows, each holding half of a question's words, lost to a text
    holding them in one (sample questions lexical nDCG@10 0.9563, 0.9642 before the
    passages of issue 26). Lexical search counts the document's other passages, of any
    section or none; the dense modes count other sections only."""
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.6), (5, 0.5)]
    documents = {1: (7, None), 2: (8, "S"), 3: (8, "S"), 4: (7, None), 5: (8, "T")}
    lexical = dict(mode_ranked(ranked, documents, Mode.LEXICAL))
    support = SUPPORT[Mode.LEXICAL]
    assert lexical[1] == pytest.approx(1.0 + support * 0.6)
    assert lexical[2] == pytest.approx(0.9 + support * 0.8 + support**2 * 0.5)
    hybrid = dict(mode_ranked(ranked, documents, Mode.HYBRID))
    assert hybrid[1] == 1.0
    assert hybrid[2] == pytest.approx(0.9 + SUPPORT[Mode.HYBRID] * 0.5)


def test_only_two_other_sections_count_and_no_support_changes_nothing():
    ranked = [(1, 1.0), (2, 1.0), (3, 1.0), (4, 1.0)]
    documents = {1: (7, "A"), 2: (7, "B"), 3: (7, "C"), 4: (7, "D")}
    assert dict(document_ranked(ranked, documents, 0.5))[1] == pytest.approx(1.75)
    assert document_ranked(ranked, documents, 0.0) == ranked
    assert SUPPORT[Mode.STATIC] == 0.0


@pytest.fixture(scope="module")
def heron_index(tmp_path_factory, fast_model):
    folder = tmp_path_factory.mktemp("herons")
    filler = " ".join(f"word{n}" for n in range(120))
    (folder / "one.md").write_text(f"# Herons\n\nHeron heron heron wading birds. {filler}\n")
    sections = "".join(
        f"## Part {n}\n\nA heron waits by the water {n}. {filler}\n\n" for n in range(4)
    )
    (folder / "many.md").write_text(f"# Many\n\n{sections}")
    (folder / "other.md").write_text(f"# Other\n\nCranes and a heron. {filler}\n")
    index = tmp_path_factory.mktemp("heron-index") / "index"
    Indexer(index, model=fast_model).index_folder(folder)
    return index


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "contextual"])
def test_each_hit_is_scored_as_its_document_from_all_its_passages(heron_index, mode):
    with Searcher(str(heron_index)) as searcher:
        passages = searcher.search("heron", k=100, mode=mode, all_chunks=True).results
        hits = searcher.search("heron", k=10, mode=mode).results
    ranked = [(hit.chunk_id, hit.score) for hit in passages]
    documents = {hit.chunk_id: (hit.document_id, hit.section) for hit in passages}
    expected, seen = [], set()
    for chunk_id, score in mode_ranked(ranked, documents, Mode(mode)):
        if documents[chunk_id][0] not in seen:
            seen.add(documents[chunk_id][0])
            expected.append((chunk_id, round(score, 6)))
    assert len({documents[chunk_id][0] for chunk_id, _ in ranked}) == 3
    assert len({hit.section for hit in passages if hit.path.endswith("many.md")}) >= 3
    assert [(hit.chunk_id, pytest.approx(hit.score, abs=1e-5)) for hit in hits] == expected

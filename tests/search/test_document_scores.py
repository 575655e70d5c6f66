"""A document is scored by its best passage plus a little of its next ones."""

from __future__ import annotations

import pytest

from indexer import Indexer
from search import Searcher
from search.document_scores import SUPPORT, document_ranked
from search.modes import Mode


def test_a_document_with_several_good_passages_outranks_one_slightly_better_passage():
    # chunk -> document: 1 alone in document 10; 2, 3, 4 in document 20
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.7), (5, 0.2)]
    documents = {1: 10, 2: 20, 3: 20, 4: 20, 5: 30}
    rescored = document_ranked(ranked, documents, 0.2)
    assert [chunk for chunk, _ in rescored][:2] == [2, 1]
    assert dict(rescored)[2] == pytest.approx(0.9 + 0.2 * 0.8 + 0.04 * 0.7)
    assert dict(rescored)[1] == 1.0 and dict(rescored)[3] == 0.8  # not a document's best


def test_only_two_passages_after_the_best_count_and_no_support_changes_nothing():
    ranked = [(1, 1.0), (2, 1.0), (3, 1.0), (4, 1.0)]
    documents = {1: 7, 2: 7, 3: 7, 4: 7}
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
    documents = {hit.chunk_id: hit.document_id for hit in passages}
    expected, seen = [], set()
    for chunk_id, score in document_ranked(ranked, documents, SUPPORT[Mode(mode)]):
        if documents[chunk_id] not in seen:
            seen.add(documents[chunk_id])
            expected.append((chunk_id, round(score, 6)))
    assert len({documents[chunk_id] for chunk_id, _ in ranked}) == 3
    assert sum(1 for hit in passages if hit.path.endswith("many.md")) >= 3
    assert [(hit.chunk_id, pytest.approx(hit.score, abs=1e-5)) for hit in hits] == expected

"""RM3 pseudo-relevance feedback, the lab's lexical baseline, on a small collection."""


def test_rm3_feedback_pulls_in_a_document_through_the_feedback_terms(tmp_path):
    from indexer.store.local.fts import TextCollection
    from lab.lexical_feedback import rm3_search

    documents = [
        "",  # row 0, so that the documents below are rows 1 to 4
        "Sourdough starter: wild yeast and lactobacilli ferment the flour.",
        "Feed the sourdough starter flour and water; wild yeast makes it rise.",
        "Lactobacilli and wild yeast ferment rye flour into a tangy culture.",
        "Tower cranes lift steel beams on construction sites.",
    ]
    space = TextCollection.write(tmp_path / "lexical.sqlite", documents)
    plain = space.search("sourdough starter", 10)
    assert {item for item, _ in plain} == {1, 2}
    expanded = rm3_search(space, "sourdough starter", 10, feedback_docs=2, feedback_terms=3)
    assert {item for item, _ in expanded} == {1, 2, 3}  # document 3 shares only feedback terms
    assert expanded[0][0] == 1  # the best first hit keeps 0.7 of its weight
    assert rm3_search(space, "zeppelin", 10) == []

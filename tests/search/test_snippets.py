"""Snippets and stems from many threads at once, as the HTTP server's thread pool calls them."""

from concurrent.futures import ThreadPoolExecutor

import snowballstemmer

from search.snippets import make_snippet, stem

WORDS = [
    base + ending
    for base in ("relational", "conditional", "generalization", "hopefully", "electrical")
    for ending in ("", "s", "ness", "ly", "ing")
]


def test_stems_are_right_when_threads_stem_at_once():
    reference = snowballstemmer.stemmer("porter")
    expected = [reference.stemWord(word) for word in WORDS] * 40

    def stem_all(_: int) -> list[str]:
        return [stem.__wrapped__(word) for word in WORDS * 40]  # past the cache, every time

    with ThreadPoolExecutor(8) as pool:
        for stems in pool.map(stem_all, range(32)):
            assert stems == expected


def test_snippets_are_the_same_from_any_thread():
    text = " ".join(WORDS) + " " + "padding words " * 40
    expected = make_snippet(text, ["generalizations", "electrically"])
    with ThreadPoolExecutor(8) as pool:
        snippets = pool.map(
            lambda _: make_snippet(text, ["generalizations", "electrically"]), range(64)
        )
        assert all(snippet == expected for snippet in snippets)


def test_words_joined_by_underscores_are_found_and_marked_like_the_lexical_space_splits_them():
    """FTS5 splits `sort_keys` at its underscore; snippets looked for whole `\\w+` words, so
    `keys` was not marked inside `sort_keys`, nor `sort_keys` split into its two words."""
    text = "Call json.dumps(data, sort_keys=True) and the keys come out sorted."

    def marked(terms: list[str]) -> list[str]:
        return [text[a:b] for a, b in make_snippet(text, terms).highlights]

    assert marked(["keys"]) == ["keys", "keys"]
    assert marked(["sort_keys"]) == ["sort", "keys", "keys", "sorted"]

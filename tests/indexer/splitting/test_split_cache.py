"""The split cache of a long-lived writer: an edited file's passages are those of a fresh
split, but only the sections the edit changed are tokenised again."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.splitting.passages import document_passages
from indexer.splitting.split_cache import SplitCache
from tests.indexer.splitting.test_passages import word_spans

EDITS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class CountingTokenizer:
    """`word_spans`, remembering each text it was asked to tokenise."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> list[tuple[int, int]]:
        self.texts.append(text)
        return word_spans(text)


def page(sections: int = 30) -> str:
    parts = ["# Changelog\n\nIntro line.\n"]
    for number in range(sections):
        body = "\n\n".join(
            f"Item {number}.{item}: the otters of river {number} moved their dens "
            f"after the flood, and the cranes counted {item} nests." * (1 + item % 3)
            for item in range(6)
        )
        parts.append(f"\n## Release {number}\n\n{body}\n")
    return "".join(parts)


def edits(text: str) -> dict[str, str]:
    middle = text.index("Item 14.3")
    return {
        "append": text + "\nOne more line at the very end.\n",
        "prepend": text.replace("Intro line.\n", "Intro line.\n\n## Draft\n\nNew words.\n", 1),
        "middle": text[:middle] + "A changed sentence." + text[middle + 9 :],
    }


def split(text: str, tokenizer, cache: SplitCache | None = None):
    return document_passages(text, "markdown", None, tokenizer, 64, 8, cache)


def test_an_edited_text_splits_as_a_fresh_one_and_only_its_changed_sections_are_tokenised():
    text = page()
    for name, edited in edits(text).items():
        tokenizer = CountingTokenizer()
        cache = SplitCache()
        split(text, tokenizer, cache)
        first = len(tokenizer.texts)
        tokenizer.texts.clear()
        assert split(edited, tokenizer, cache) == split(edited, word_spans), name
        # the sections whose text changed (or that the edit made), and nothing else
        assert 1 <= len(tokenizer.texts) <= 2, (name, len(tokenizer.texts), first)
        assert first > 25


def test_a_cache_filled_with_another_tokenizer_starts_again():
    text = page(5)
    cache = SplitCache()
    split(text, word_spans, cache)

    def letters(piece: str) -> list[tuple[int, int]]:
        return [(index, index + 1) for index, char in enumerate(piece) if not char.isspace()]

    assert split(text, letters, cache) == split(text, letters)


@EDITS
@given(
    st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(["", "x", "\n\n## New\n\n"])), max_size=6
    ),
    st.integers(1_000, 40_000),
)
def test_any_edits_split_as_fresh_ones_whatever_the_budget(changes, budget):
    text = page(8)
    cache = SplitCache(budget_characters=budget)
    split(text, word_spans, cache)
    for at, insert in changes:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + (0 if insert else 7) :]
        assert split(text, word_spans, cache) == split(text, word_spans)

"""Token-aware chunking: limits, boundaries, overlap and exact offsets."""

import itertools
import re

import pytest

from indexer.splitting.chunking import chunk_text


def word_spans(text: str) -> list[tuple[int, int]]:
    """A stand-in tokenizer: every word and every punctuation mark is one token."""
    return [match.span() for match in re.finditer(r"\w+|[^\w\s]", text)]


def tokens_in(text: str) -> int:
    return len(word_spans(text))


def assert_offsets_exact(text, chunks):
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text


def assert_nothing_dropped(text, chunks):
    covered = [False] * len(text)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    dropped = [ch for ch, hit in zip(text, covered, strict=True) if not hit and not ch.isspace()]
    assert dropped == []


def test_short_text_is_one_chunk_without_surrounding_whitespace():
    text = "\n  Hello world.  \n"
    chunks = chunk_text(text, word_spans, max_tokens=10, overlap=2)
    assert [(c.start, c.end, c.text) for c in chunks] == [(3, 15, "Hello world.")]


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_or_blank_text_has_no_chunks(text):
    assert chunk_text(text, word_spans, max_tokens=10, overlap=2) == []


def test_long_text_respects_the_token_limit_and_drops_nothing():
    text = " ".join(f"Sentence number {i} says something." for i in range(200))
    chunks = chunk_text(text, word_spans, max_tokens=40, overlap=8)
    assert len(chunks) > 10
    assert all(tokens_in(c.text) <= 40 for c in chunks)
    assert_offsets_exact(text, chunks)
    assert_nothing_dropped(text, chunks)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_chunks_end_at_paragraph_breaks_when_one_is_in_reach():
    paragraph = "Word " * 12
    text = "\n\n".join(paragraph.strip() + "." for _ in range(6))
    chunks = chunk_text(text, word_spans, max_tokens=30, overlap=0)
    for chunk in chunks:  # a chunk keeps the whitespace between it and the next
        assert chunk.text.rstrip().endswith(".")
        assert chunk.text.startswith("Word")


def test_chunks_prefer_sentence_ends_over_word_breaks():
    text = " ".join("This is a short sentence." for _ in range(30))
    chunks = chunk_text(text, word_spans, max_tokens=25, overlap=0)
    assert all(c.text.rstrip().endswith(".") for c in chunks)


def test_neighbouring_chunks_overlap():
    text = " ".join(f"w{i}" for i in range(100))
    chunks = chunk_text(text, word_spans, max_tokens=20, overlap=5)
    for before, after in itertools.pairwise(chunks):
        assert after.start < before.end
        assert after.start > before.start


def test_without_overlap_chunks_touch_but_do_not_overlap():
    text = " ".join(f"w{i}" for i in range(100))
    chunks = chunk_text(text, word_spans, max_tokens=20, overlap=0)
    for before, after in itertools.pairwise(chunks):
        assert after.start >= before.end
    assert_nothing_dropped(text, chunks)


def test_a_giant_word_is_split_rather_than_lost():
    text = "x" * 500

    def letter_spans(value):
        return [(i, i + 1) for i in range(len(value))]

    chunks = chunk_text(text, letter_spans, max_tokens=64, overlap=0)
    assert "".join(c.text for c in chunks) == text


def test_invalid_parameters_are_refused():
    with pytest.raises(ValueError):
        chunk_text("a b", word_spans, max_tokens=10, overlap=5)
    with pytest.raises(ValueError):
        chunk_text("a b", word_spans, max_tokens=1, overlap=0)


def test_real_tokenizer_chunks_fit_the_model_window(model):
    text = (
        "Résumé of the naïve café owner's day, with numbers 3.14 and URLs like "
        "https://example.org/a_b?c=d. "
    ) * 80
    budget = model.max_tokens - 2
    chunks = chunk_text(text, model.token_spans, max_tokens=budget, overlap=32)
    assert len(chunks) > 1
    assert all(len(model.token_spans(c.text)) <= budget for c in chunks)
    assert_offsets_exact(text, chunks)
    assert_nothing_dropped(text, chunks)

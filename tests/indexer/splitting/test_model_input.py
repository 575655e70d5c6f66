"""What the model reads for a passage: its section trail in front of its text, cut to the
model's window (the trail first, never the passage); the stored text and offsets stay
the passage's own."""

from __future__ import annotations

import re

from indexer.splitting.chunking import chunk_document
from indexer.splitting.model_input import TRAIL_SEPARATOR, model_input
from indexer.splitting.structure import SECTION_SEPARATOR


def word_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in re.finditer(r"\w+|[^\w\s]", text)]


def test_a_passage_is_encoded_with_its_trail_in_front():
    assert model_input("Run it as a script.", "json > CLI", word_spans, 50) == (
        "json > CLI" + TRAIL_SEPARATOR + "Run it as a script."
    )


def test_without_a_trail_the_passage_is_encoded_alone():
    assert model_input("Plain text.", None, word_spans, 50) == "Plain text."
    assert model_input("Plain text.", " ", word_spans, 50) == "Plain text."


def test_the_trail_is_cut_to_what_the_passage_leaves_of_the_window():
    text = "one two three four five six seven"  # 7 tokens
    trail = "alpha beta gamma delta"
    assert model_input(text, trail, word_spans, 10) == "alpha beta gamma" + TRAIL_SEPARATOR + text
    assert model_input(text, trail, word_spans, 7) == text  # a full passage keeps no trail


def test_the_real_tokenizer_never_sees_more_than_the_window(model):
    spans, window = model.token_spans, 254
    trail = SECTION_SEPARATOR.join(
        ["json — JSON encoder and decoder", "Command Line Interface", "Options"]
    )
    for words in (5, 120, 240, 249, 254):
        text = " ".join(f"option{n}" for n in range(words))
        while len(spans(text)) > window:
            text = text.rsplit(" ", 1)[0]
        encoded = model_input(text, trail, spans, window)
        assert encoded.endswith(text)  # the passage whole, at the end
        assert len(spans(encoded)) <= window
        assert trail.startswith(encoded[: -len(text)].rstrip()) or encoded == text
    assert model_input("Short.", trail, spans, window).startswith(trail)


def test_chunks_carry_what_is_encoded_and_keep_their_own_text_and_offsets():
    text = (
        "# json\n\nThe module encodes and decodes JSON text for you today.\n\n"
        "## Command Line Interface\n\nRun it as a script from the shell with python.\n"
    )
    chunks = chunk_document(text, "notes.md", None, word_spans, 30, 0)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        assert chunk.encoded_text == model_input(chunk.text, chunk.section, word_spans, 30)
    sections = [chunk.section for chunk in chunks]
    trail = SECTION_SEPARATOR.join(["json", "Command Line Interface"])
    assert trail in sections
    cli = chunks[sections.index(trail)]
    assert cli.encoded_text == trail + TRAIL_SEPARATOR + cli.text

"""Property-based tests: arbitrary input never crashes the readers or the chunker."""

import contextlib
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.errors import UnreadableFile
from indexer.reading.office import read_docx, read_epub, read_odt, read_pptx
from indexer.reading.pdf_text import join_line_end_hyphens, split_run_together
from indexer.reading.readers import decode_text, read_html, read_pdf
from indexer.splitting.chunking import chunk_text
from search import snippets
from search.snippets import make_snippet

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=2000)


def word_spans(text):
    return [match.span() for match in re.finditer(r"\w+|[^\w\s]", text)]


def reads_or_refuses(reader, data: bytes) -> None:
    with contextlib.suppress(UnreadableFile):
        assert isinstance(reader(data), str)


@FAST
@given(st.binary(max_size=4096))
def test_decoding_arbitrary_bytes_returns_text_or_refuses(data):
    reads_or_refuses(decode_text, data)


@FAST
@given(st.one_of(st.binary(max_size=4096), TEXT.map(lambda t: f"<p>{t}</p>".encode())))
def test_html_reader_never_crashes(data):
    reads_or_refuses(read_html, data)


@FAST
@given(st.binary(max_size=2048).map(lambda tail: b"%PDF-1.4\n" + tail))
def test_pdf_reader_never_crashes(data):
    reads_or_refuses(read_pdf, data)


@FAST
@given(
    st.sampled_from(["docx", "pptx", "odt"]),
    st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=8))),
)
def test_office_readers_never_crash_on_a_damaged_real_file(kind, damage):
    """A real file written by its library, overwritten at random places."""
    from tests.indexer.reading.test_office_readers import make_docx, make_odt, make_pptx

    reader, make = {"docx": (read_docx, make_docx), "pptx": (read_pptx, make_pptx)}.get(
        kind, (read_odt, make_odt)
    )
    data = bytearray(make())
    for where, patch in damage:
        start = int(where * len(data))
        data[start : start + len(patch)] = patch
    reads_or_refuses(reader, bytes(data))


@FAST
@given(st.binary(max_size=2048).map(lambda tail: b"PK\x03\x04" + tail))
def test_epub_reader_never_crashes(data):
    reads_or_refuses(read_epub, data)


def letters_only(text: str) -> str:
    return re.sub(r"[\s\-\u00ad\u2010]", "", text)


@FAST
@given(TEXT.map(lambda t: t.replace("|", "-\n")), TEXT)
def test_pdf_cleaning_only_moves_spaces_hyphens_and_line_breaks(text, layout):
    """Joining and splitting words never adds, drops or reorders a letter."""
    assert letters_only(join_line_end_hyphens(text)) == letters_only(text)
    assert letters_only(split_run_together(text, layout)) == letters_only(text)
    assert join_line_end_hyphens(text).count("\n") <= text.count("\n")


@FAST
@given(TEXT, st.integers(min_value=2, max_value=40), st.integers(min_value=0, max_value=19))
def test_chunk_offsets_point_back_to_their_text_and_nothing_is_dropped(text, size, overlap):
    overlap = min(overlap, size // 2 - 1) if size >= 4 else 0
    chunks = chunk_text(text, word_spans, max_tokens=size, overlap=overlap)
    covered = [False] * len(text)
    for ordinal, chunk in enumerate(chunks):
        assert chunk.ordinal == ordinal
        assert text[chunk.start : chunk.end] == chunk.text and chunk.text.strip()
        assert len(word_spans(chunk.text)) <= size
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    assert all(hit or char.isspace() for char, hit in zip(text, covered, strict=True))


@settings(max_examples=40, deadline=None)
@given(TEXT)
def test_chunking_with_the_real_tokenizer(model, text):
    budget = 32
    chunks = chunk_text(text, model.token_spans, max_tokens=budget, overlap=4)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text


@FAST
@given(TEXT, st.lists(st.text(min_size=1, max_size=10), max_size=4))
def test_snippet_highlights_lie_inside_the_snippet(text, terms):
    snippet = make_snippet(text, terms)
    for start, end in snippet.highlights:
        assert 0 <= start < end <= len(snippet.text)


def densest_by_counting(matches, limit):
    """The window choice as first written: every match's window counted in full (quadratic)."""
    lead = snippets._LEAD
    counts = [
        sum(1 for a, b in matches if s - lead <= a and b <= s - lead + limit) for s, _ in matches
    ]
    return matches[counts.index(max(counts))][0]


@FAST
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 250)), min_size=1, max_size=200),
    st.integers(40, 400),
)
def test_the_linear_window_choice_equals_counting_every_window(gaps_and_lengths, limit):
    """Snippets stay linear in the number of matched words (a long query matches many)."""
    matches, position = [], 0
    for gap, length in gaps_and_lengths:
        matches.append((position + gap, position + gap + length))
        position += gap + length + 1
    assert snippets._densest(matches, limit) == densest_by_counting(matches, limit)

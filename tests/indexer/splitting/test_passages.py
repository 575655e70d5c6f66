"""Passages: windows inside sections, with exact offsets, full coverage, the model's limit,
section trails, and edits that change only the passages around them."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.reading.readers import read_html_layout
from indexer.reading.text_layout import Layout
from indexer.splitting.passages import Passage, _tokenise, _units, document_passages, split_passages
from indexer.splitting.structure import document_sections

PROPERTIES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def word_spans(text: str) -> list[tuple[int, int]]:
    """A stand-in tokenizer: every word and every punctuation mark is one token."""
    return [match.span() for match in re.finditer(r"\w+|[^\w\s]", text)]


def assert_passages_hold(text: str, passages: list[Passage], spans, max_tokens: int) -> None:
    """Exact offsets, the token limit, and every character in some passage."""
    assert [passage.ordinal for passage in passages] == list(range(len(passages)))
    reach = 0
    for passage in passages:
        assert passage.text == text[passage.start : passage.end]
        assert len(spans(passage.text)) <= max_tokens
        assert passage.start <= reach < passage.end  # no gap, and each adds text
        reach = passage.end
    assert (passages[0].start, reach) == (0, len(text)) if text.strip() else passages == []


def expected_trail(text: str, kind: str, passage: Passage) -> tuple[str, ...]:
    """The trail common to the sections whose body text the passage holds (all those it
    touches when it holds only heading lines), worked out from the sections alone; the
    text before the first heading counts only when it is most of the passage's body."""
    touched, holding = [], []
    untitled = titled = 0
    for section in document_sections(text, kind):
        if section.start < passage.end and section.end > passage.start:
            touched.append(section.trail)
            body = text[max(section.body, passage.start) : min(section.end, passage.end)]
            if body.strip():
                holding.append(section.trail)
                tokens = len(word_spans(body))
                if section.trail:
                    titled += tokens
                else:
                    untitled += tokens
    if titled > untitled:
        holding = [trail for trail in holding if trail]
    trails = holding or touched
    common = trails[0]
    for trail in trails[1:]:
        while trail[: len(common)] != common:
            common = common[:-1]
    return common


TOPIC_WORDS = [
    "otters",
    "cranes",
    "river",
    "dens",
    "steel",
    "wind",
    "load",
    "reeds",
    "mud",
    "fish",
    "digest",
    "basic",
    "retry",
    "proxy",
]
WORDS = st.sampled_from(TOPIC_WORDS)
SENTENCES = st.lists(WORDS, min_size=1, max_size=14).map(lambda w: " ".join(w).capitalize() + ".")
PARAGRAPHS = st.lists(SENTENCES, min_size=1, max_size=6).map(" ".join)
SECTIONS = st.tuples(
    st.integers(1, 4), st.lists(WORDS, min_size=1, max_size=3), st.lists(PARAGRAPHS, max_size=5)
)


def render(preamble: list[str], sections: list[tuple[int, list[str], list[str]]]) -> str:
    parts = list(preamble)
    for level, title, paragraphs in sections:
        parts += ["#" * level + " " + " ".join(title).title(), *paragraphs]
    return "\n\n".join(parts) + "\n"


MARKDOWN_DOCUMENTS = st.builds(
    render, st.lists(PARAGRAPHS, max_size=2), st.lists(SECTIONS, max_size=8)
)
LIMITS = st.sampled_from([(4, 0), (4, 1), (8, 3), (16, 4), (40, 8), (40, 0)])


@PROPERTIES
@given(MARKDOWN_DOCUMENTS, LIMITS)
def test_passages_cover_everything_exactly_within_the_limit(text, limits):
    max_tokens, overlap = limits
    passages = document_passages(text, "markdown", None, word_spans, max_tokens, overlap)
    assert_passages_hold(text, passages, word_spans, max_tokens)


@PROPERTIES
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=1500),
    st.sampled_from(["markdown", "rst", "text", "office", "python", "javascript"]),
    LIMITS,
)
def test_any_text_of_any_kind_is_covered_within_the_limit(text, kind, limits):
    max_tokens, overlap = limits
    passages = document_passages(text, kind, None, word_spans, max_tokens, overlap)
    assert_passages_hold(text, passages, word_spans, max_tokens)


@PROPERTIES
@given(MARKDOWN_DOCUMENTS, LIMITS)
def test_each_passage_has_the_trail_of_the_sections_it_holds(text, limits):
    max_tokens, overlap = limits
    for passage in document_passages(text, "markdown", None, word_spans, max_tokens, overlap):
        assert passage.trail == expected_trail(text, "markdown", passage)
        assert passage.heading == (passage.trail[-1] if passage.trail else None)


AUTHENTICATION = (
    "# Advanced\n\nAdvanced use of the client.\n\n## Authentication\n\n### Basic\n\n"
    + " ".join(f"Basic authentication sends password number {n} in the clear." for n in range(40))
    + "\n\n### Digest\n\nDigest authentication sends a hash of the password instead. "
    "The server checks the hash against its own.\n\n"
    "## Retries\n\nThe client retries a failed request three times.\n"
)


def test_the_heading_is_the_section_that_holds_the_passage():
    """A window that starts in Basic but holds Digest is not labelled Basic (issue 26)."""
    passages = document_passages(AUTHENTICATION, "markdown", None, word_spans, 64, 8)
    digest = [passage for passage in passages if "Digest authentication" in passage.text]
    assert digest and all(passage.heading != "Basic" for passage in digest)
    assert digest[-1].section == "Advanced \u203a Authentication \u203a Digest"
    basic = [passage for passage in passages if "password number 20" in passage.text]
    assert basic[0].trail == ("Advanced", "Authentication", "Basic")


def test_html_passages_carry_the_trail_of_the_page_headings():
    body = "".join(
        f"<p>Retry attempt {n} waits twice as long as the one before.</p>" for n in range(60)
    )
    page = (
        "<html><body><h1>Requests</h1><p>A client.</p><h2>Advanced</h2>"
        "<h3>Example: Specific SSL Version</h3><p>Pin TLS 1.2 with an adapter.</p>"
        f"<h3>Automatic Retries</h3>{body}</body></html>"
    ).encode()
    text, layout = read_html_layout(page)
    passages = document_passages(text, "html", layout, word_spans, 64, 8)
    assert_passages_hold(text, passages, word_spans, 64)
    for passage in passages:
        if "Retry attempt 30" in passage.text:
            assert passage.trail == ("Requests", "Advanced", "Automatic Retries")
    heading_only = [p for p in passages if p.text.strip().startswith("Advanced")]
    assert heading_only == []  # a heading with no text of its own goes with what follows


def test_a_small_section_goes_with_the_big_section_after_it():
    """A page title before the first heading, or a one-line section before a long
    sibling, is no passage of its own: alone, a few words match a question better than
    any real answer (issue 26: "7. Simple statements - Python documentation", 52
    characters, was the contextual top hit for "why does python not have a switch")."""
    body = " ".join(f"Statement {n} runs in order." for n in range(40))
    text = (
        f"Simple statements, the docs\n\n# Simple statements\n\n{body}\n\n"
        f"## Pass\n\nDoes nothing.\n\n## Break\n\n{body}\n"
    )
    passages = document_passages(text, "markdown", None, word_spans, 64, 8)
    assert_passages_hold(text, passages, word_spans, 64)
    assert min(len(word_spans(passage.text)) for passage in passages) >= 16
    assert passages[0].text.startswith("Simple statements, the docs\n\n# Simple statements")


def test_a_page_title_joined_to_the_first_section_keeps_that_sections_heading():
    """A page's <title> before its first heading joins the first section's passage; that
    passage is the section's, not a passage of no section (the python3-doc bisect and
    csv pages' first hits had no heading: heading_check 52/60 at d46bb4c)."""
    body = "".join(f"<p>Bisection step {n} halves the sorted range.</p>" for n in range(12))
    page = (
        "<html><head><title>bisect - the docs</title></head><body>"
        f"<h1>bisect</h1>{body}<h2>Examples</h2>{body}</body></html>"
    ).encode()
    text, layout = read_html_layout(page)
    passages = document_passages(text, "html", layout, word_spans, 128, 8)
    assert passages[0].text.startswith("bisect - the docs")
    assert passages[0].trail == ("bisect",)
    preamble = " ".join(f"Preamble line {n} before any heading." for n in range(20))
    titled = f"Title only\n\n{preamble}"
    titled += "\n\n# Short\n\nOne line.\n"
    assert document_passages(titled, "markdown", None, word_spans, 256, 8)[0].trail == ()


def test_small_sibling_sections_are_one_passage_under_their_parent():
    text = "# Release 2.1\n\n## Build\n\nFaster builds.\n\n## Windows\n\nA fix for paths.\n"
    passages = document_passages(text, "markdown", None, word_spans, 64, 8)
    assert [(p.text, p.trail) for p in passages] == [(text, ("Release 2.1",))]


def test_real_tokenizer_passages_fit_the_model_window(model):
    budget = model.max_tokens - 2
    text = AUTHENTICATION.replace("the clear.", "the clear (résumé, naïve café, 3.14).") * 3
    for kind in ("markdown", "text"):
        passages = document_passages(text, kind, None, model.token_spans, budget, 32)
        assert len(passages) > 3
        assert_passages_hold(text, passages, model.token_spans, budget)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    MARKDOWN_DOCUMENTS | st.text(alphabet=st.characters(codec="utf-8"), max_size=600),
    st.sampled_from([(6, 2), (12, 3), (30, 8)]),
)
def test_real_tokenizer_passages_fit_any_limit(model, text, limits):
    """Cuts inside words (word pieces) still give passages the tokenizer counts within."""
    max_tokens, overlap = limits
    passages = document_passages(text, "markdown", None, model.token_spans, max_tokens, overlap)
    assert_passages_hold(text, passages, model.token_spans, max_tokens)


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_blank_text_has_no_passages(text):
    assert document_passages(text, "markdown", None, word_spans, 10, 2) == []


def test_invalid_limits_are_refused():
    sections = document_sections("a b", "text")
    with pytest.raises(ValueError):
        split_passages("a b", sections, word_spans, max_tokens=10, overlap=5)
    with pytest.raises(ValueError):
        split_passages("a b", sections, word_spans, max_tokens=1, overlap=0)


# -- locality -----------------------------------------------------------------------------


def new_passages(before: list[Passage], after: list[Passage]) -> list[Passage]:
    """The passages of `after` whose text no passage of `before` has (those a store that
    keeps vectors by content would encode)."""
    known = {passage.text for passage in before}
    return [passage for passage in after if passage.text not in known]


def unit_spans(text: str, max_tokens: int) -> list[tuple[int, int]]:
    tokenised = [_tokenise(text, s, word_spans) for s in document_sections(text, "markdown")]
    small = max(1, int(max_tokens * 0.25))
    return [(unit[0].section.start, unit[-1].section.end) for unit in _units(tokenised, small)]


@PROPERTIES
@given(MARKDOWN_DOCUMENTS, LIMITS, st.data())
def test_an_edit_inside_a_section_leaves_the_other_units_alone(text, limits, data):
    """Words added inside a sentence of a section big enough to stand alone: every
    passage outside the unit that holds it is unchanged, text and trail."""
    max_tokens, overlap = limits
    sentences = [m.end() - 1 for m in re.finditer(r"[a-z]\.", text)]
    if not sentences:
        return
    at = data.draw(st.sampled_from(sentences))
    edited = text[:at] + " and more words" + text[at:]
    units = unit_spans(text, max_tokens)
    shift = len(" and more words")
    moved = [(s if s <= at else s + shift, e + shift if e > at else e) for s, e in units]
    if unit_spans(edited, max_tokens) != moved:
        return  # the edit changed which sections join: not this property's case
    holding = next((s, e) for s, e in units if s <= at < e)
    before = document_passages(text, "markdown", None, word_spans, max_tokens, overlap)
    after = document_passages(edited, "markdown", None, word_spans, max_tokens, overlap)
    outside = [(p.text, p.trail) for p in before if p.end <= holding[0] or p.start >= holding[1]]
    assert set(outside) <= {(p.text, p.trail) for p in after}


def long_section(sentences: int) -> str:
    """One section of many different sentences of four tokens, without paragraph breaks."""
    words = ["otters", "cranes", "river", "dens", "steel", "wind", "load", "reeds", "mud"]
    body = " ".join(
        f"{words[n % 9].capitalize()} {n} {words[(n // 9) % 9]}." for n in range(sentences)
    )
    return f"# Field notes\n\n{body}\n"


EDITS = {
    "append a line": lambda text: text + "One more line at the end.\n",
    "prepend a section": lambda text: "# Preface\n\nA new first section.\n\n" + text,
    "change a sentence in the middle": lambda text: (
        text[: text.index(".", len(text) // 2)]
        + " and a changed ending"
        + text[text.index(".", len(text) // 2) :]
    ),
    "insert at the section's start": lambda text: text.replace("\n\n", "\n\nA new opening.\n", 1),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_changes_at_most_two_passages_where_windows_from_the_start_shift(edit):
    text = long_section(600)
    edited = EDITS[edit](text)
    before = document_passages(text, "markdown", None, word_spans, 128, 16)
    after = document_passages(edited, "markdown", None, word_spans, 128, 16)
    assert len(after) > 30
    assert len(new_passages(before, after)) <= 2


def test_an_overlap_inside_a_word_never_reads_as_more_tokens_than_the_window(model):
    """Hypothesis's find: with no space to start at, an overlap began inside a word, and
    the passage alone tokenised to 7 tokens of a 6-token window."""
    text = "0:A0OA02[y0"
    for kind in ("text", "markdown"):
        passages = document_passages(text, kind, None, model.token_spans, 6, 2)
        assert_passages_hold(text, passages, model.token_spans, 6)


def test_html_passages_are_cut_as_the_pages_strings_and_shown_as_the_page_reads() -> None:
    """A page with inline elements is cut where each of its strings stood on a line of
    its own (cutting the joined text lost answers: docs/reports/2026-12-06-html-inline.md),
    and each passage is the same stretch of the text as the page reads it."""
    sentence = (
        "<p>Use <code>json.dumps()</code> to <a href='#'>encode</a> an <em>object</em>, "
        "then <strong>write</strong> it to <code>sys.stdout</code> with <code>print</code>.</p>"
    )
    code_line = (  # highlighted code: a span per token, the spaces strings of their own
        "<span class='n'>data</span> <span class='o'>=</span> <span class='n'>json</span>"
        "<span class='o'>.</span><span class='n'>loads</span><span class='p'>(</span>"
        "<span class='n'>text</span><span class='p'>,</span> <span class='n'>strict</span>"
        "<span class='o'>=</span><span class='kc'>False</span><span class='p'>)</span>"
    )
    page = (
        "<html><body><h1>json</h1>"
        + "\n".join(sentence for _ in range(12))
        + "<h2>Reading</h2><pre>"
        + "\n".join(code_line for _ in range(20))
        + "</pre></body></html>"
    ).encode()
    text, layout = read_html_layout(page)
    assert layout.cut is not None
    passages = document_passages(text, "html", layout, word_spans, 40, 8)
    assert_passages_hold(text, passages, word_spans, 40)
    cut = document_passages(
        layout.cut.text, "html", Layout(outline=layout.cut.outline), word_spans, 40, 8
    )
    assert ["".join(p.text.split()) for p in passages] == ["".join(p.text.split()) for p in cut]
    assert [p.trail for p in passages] == [p.trail for p in cut]
    assert "Use json.dumps() to encode an object, then write it" in passages[0].text
    assert all("\njson.dumps()\n" not in passage.text for passage in passages)
    assert "data = json.loads(text, strict=False)" in passages[-1].text

"""A document's own structure: headings with levels, and the sections they open, per kind."""

from __future__ import annotations

import io
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.reading.office import read_docx
from indexer.reading.outline import markdown_outline, rst_outline
from indexer.reading.readers import read_html_layout, read_pdf_layout
from indexer.splitting.code_outline import code_outline
from indexer.splitting.structure import Section, document_sections, section_kind
from tests.conftest import make_pdf
from tests.indexer.reading.test_office_readers import make_docx


def trails(text: str, kind: str, layout=None) -> list[tuple[str, ...]]:
    return [section.trail for section in document_sections(text, kind, layout)]


def section_holding(sections: list[Section], text: str, phrase: str) -> Section:
    offset = text.index(phrase)
    return next(section for section in sections if section.start <= offset < section.end)


def assert_tiles(text: str, sections: list[Section]) -> None:
    assert sections[0].start == 0 and sections[-1].end == len(text)
    for before, after in itertools.pairwise(sections):
        assert before.end == after.start
    for section in sections:
        assert section.start <= section.body <= section.end


MARKDOWN = """---
title: not a heading
---
Intro before any heading.

# Advanced

```python
# a comment in code, not a heading
```

## Authentication ##

### Basic

Basic sends the password.

Digest
------

Digest hashes it.

- a list item
---

## C# notes

# Reference
"""


def test_markdown_sections_have_trails_of_their_headings():
    sections = document_sections(MARKDOWN, "markdown")
    assert_tiles(MARKDOWN, sections)
    assert [section.trail for section in sections] == [
        (),
        ("Advanced",),
        ("Advanced", "Authentication"),
        ("Advanced", "Authentication", "Basic"),
        ("Advanced", "Digest"),
        ("Advanced", "C# notes"),
        ("Reference",),
    ]
    digest = section_holding(sections, MARKDOWN, "Digest hashes")
    assert MARKDOWN[digest.start : digest.body] == "Digest\n------\n"
    assert digest.level == 2


def test_markdown_heading_levels_and_extents():
    headings = markdown_outline("# One\n\nText\n\nTwo\n===\n\n#### Four ####\n")
    assert [(heading.level, heading.title) for heading in headings] == [
        (1, "One"),
        (1, "Two"),
        (4, "Four"),
    ]
    assert headings[1].start == len("# One\n\nText\n\n")
    assert headings[1].end == len("# One\n\nText\n\nTwo\n===\n")


def test_markdown_headings_inside_block_quotes_open_sections():
    """A quoted heading renders as a heading (mdBook's and GitHub's notes and warnings)."""
    text = (
        "# Guide\n\nIntro.\n\n"
        "> ### Note: sharing state\n>\n> Quoted text under it.\n\n"
        "> > #### Deeper\n> > Deeper text.\n\n"
        "> Quoted title\n> ------------\n> Under it.\n\n"
        "> A quoted paragraph\n---\n\nAfter a rule.\n"
    )
    headings = markdown_outline(text)
    assert [(heading.level, heading.title) for heading in headings] == [
        (1, "Guide"),
        (3, "Note: sharing state"),
        (4, "Deeper"),
        (2, "Quoted title"),
    ]
    sections = document_sections(text, "markdown")
    assert section_holding(sections, text, "Quoted text under").trail == (
        "Guide",
        "Note: sharing state",
    )


RST = """=========
Top title
=========

Some text.

Install steps
-------------

Run the installer.
A second line of the paragraph
------------------------------

On Linux
^^^^^^^^

Use the package.

Upgrading
---------

Back at the second level.
"""


def test_rst_levels_follow_the_order_adornments_first_appear():
    sections = document_sections(RST, "rst")
    assert_tiles(RST, sections)
    assert [section.trail for section in sections] == [
        ("Top title",),
        ("Top title", "Install steps"),
        ("Top title", "Install steps", "On Linux"),
        ("Top title", "Upgrading"),
    ]
    assert [heading.level for heading in rst_outline(RST)] == [1, 2, 3, 2]
    assert sections[0].body == len("=========\nTop title\n=========\n")


def test_sphinx_copies_of_rst_sources_are_read_as_rst():
    assert section_kind("docs/_sources/library/os.rst.txt") == "rst"
    assert section_kind("notes.txt") == "text"
    assert trails("Plain words.\n\nMore words.\n", "text") == [()]


SPHINX_PAGE = b"""<html><head><title>Guide</title></head><body>
<div class="body">
<section id="advanced"><h1>Advanced<a class="headerlink" href="#advanced">\xc2\xb6</a></h1>
<p>About advanced use.</p>
<section id="authentication"><h2>Authentication<a class="headerlink">\xc2\xb6</a></h2>
<section id="basic"><h3>Basic <code>auth</code><a class="headerlink">\xc2\xb6</a></h3>
<p>Basic sends the password.</p></section>
<section id="digest"><h3>Digest<a class="headerlink">\xc2\xb6</a></h3>
<p>Digest hashes it.</p></section></section>
<section id="retries"><h2>Automatic Retries</h2><p>Retry on failure.</p></section>
</section></div></body></html>"""


def test_html_sections_use_the_heading_levels_the_reader_recorded():
    text, layout = read_html_layout(SPHINX_PAGE)
    assert [(heading.level, heading.title) for heading in layout.outline] == [
        (1, "Advanced"),
        (2, "Authentication"),
        (3, "Basic auth"),
        (3, "Digest"),
        (2, "Automatic Retries"),
    ]
    sections = document_sections(text, "html", layout)
    assert_tiles(text, sections)
    digest = section_holding(sections, text, "Digest hashes")
    assert digest.trail == ("Advanced", "Authentication", "Digest")
    # the heading's own line (title and permalink mark) ends where its body starts
    assert text[digest.start : digest.body] == "Digest\u00b6\n"
    retries = section_holding(sections, text, "Retry on failure")
    assert retries.trail == ("Advanced", "Automatic Retries")


def test_office_headings_are_read_from_their_markdown_heading_lines():
    text = read_docx(make_docx())
    sections = document_sections(text, section_kind("cranes.docx"))
    holding = section_holding(sections, text, "Concrete blocks")
    # the document's title and its level-1 headings are both written as `#` lines
    assert holding.trail == ("Foundations", "Counterweights")
    assert section_holding(sections, text, "Foundations").trail == ("Foundations",)


def test_pdf_pages_are_sections():
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for lines in (["Page one talks about cranes."], ["Page two talks about otters."]):
        writer.add_page(PdfReader(io.BytesIO(make_pdf(lines))).pages[0])
    out = io.BytesIO()
    writer.write(out)
    text, layout = read_pdf_layout(out.getvalue())
    sections = document_sections(text, "pdf", layout)
    assert_tiles(text, sections)
    assert [section.start for section in sections] == [offset for offset, _ in layout.pages]
    assert section_holding(sections, text, "otters") == sections[1]
    assert all(section.trail == () for section in sections)


PYTHON = '''"""A module."""

import os


@decorator
# a comment about the function
def top(a):
    def inner():
        pass
    return a


class Store:
    """A class."""

    def open(self):
        pass

    @property
    async def size(self):
        return 1


if os.name:
    def platform_only():
        pass
'''


def test_python_definitions_and_methods_are_sections():
    sections = document_sections(PYTHON, section_kind("store.py"))
    assert_tiles(PYTHON, sections)
    assert [section.trail for section in sections] == [
        (),
        ("def top",),
        ("class Store",),
        ("class Store", "def open"),
        ("class Store", "def size"),
    ]
    assert PYTHON[sections[1].start :].startswith("@decorator\n# a comment")
    assert PYTHON[sections[4].start :].startswith("    @property\n")


def test_first_column_definitions_in_other_languages():
    javascript = "import x from 'y';\n\n// adds\nexport async function add(a, b) {}\n"
    javascript += "export const sub = (a, b) => a - b;\nclass Stack {}\n"
    go = "package main\n\nfunc (s *Server) Serve() {}\n\ntype Server struct{}\n"
    rust = "use std::io;\n\n#[derive(Debug)]\npub struct Point {}\n\nimpl Point {}\n"
    rust += "pub(crate) async fn run() {}\n"
    titles = {
        kind: [heading.title for heading in code_outline(source, kind)]
        for kind, source in (("javascript", javascript), ("go", go), ("rust", rust))
    }
    assert titles == {
        "javascript": ["function add", "const sub", "class Stack"],
        "go": ["func Serve", "type Server"],
        "rust": ["struct Point", "impl Point", "fn run"],
    }
    assert code_outline(javascript, "javascript")[0].start == javascript.index("// adds")
    assert section_kind("main.go") == "go" and section_kind("lib.rs") == "rust"


LINES = st.sampled_from(
    ["# Top", "## Middle", "### Deep", "Title", "=====", "-----", "```", "text line", "", "* item"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=40), st.sampled_from(["markdown", "rst", "text", "office"]))
def test_sections_tile_any_text_and_trails_nest(lines, kind):
    text = "\n".join(lines)
    sections = document_sections(text, kind)
    assert_tiles(text, sections)
    for section in sections:
        assert len(section.trail) <= max(section.level, 0) or section.level == 0
        assert (section.level == 0) == (section.trail == ())

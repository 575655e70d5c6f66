"""Where a hit sits: line, end line, heading and page, for each format and for old rows."""

from __future__ import annotations

import io
import sqlite3

import pytest

from indexer import Indexer
from indexer.reading.readers import read_html, read_html_layout, read_pdf_layout
from indexer.reading.text_layout import Locator, markdown_headings, rst_headings
from search.engine import Searcher
from tests.conftest import make_pdf

MARKDOWN = """# Guide

Intro text.

```python
# not a heading
```

Setext title
------------

## Second part

The otters sleep holding paws.
"""

RST = """=========
Top title
=========

Some text.

Install steps
-------------

Run the installer.
"""


def test_markdown_headings_skip_code_fences_and_read_setext_titles():
    titles = [title for _, title in markdown_headings(MARKDOWN)]
    assert titles == ["Guide", "Setext title", "Second part"]


def test_rst_headings_read_underlined_and_overlined_titles():
    assert [title for _, title in rst_headings(RST)] == ["Top title", "Install steps"]


def test_lines_and_headings_of_plain_text_come_from_the_text_itself():
    locator = Locator(MARKDOWN, "markdown")
    offset = MARKDOWN.index("The otters")
    where = locator.locate(offset, len(MARKDOWN.rstrip()))
    assert where.line == MARKDOWN[:offset].count("\n") + 1 == 14
    assert where.end_line == 14
    assert where.heading == "Second part"
    assert where.page is None


def test_html_lines_are_source_lines_and_the_text_is_unchanged():
    html = (
        b"<html><head><title>T</title></head>\n<body>\n<h1>Cranes</h1>\n\n\n"
        b"<p>Tower cranes\nlift steel.</p>\n<h2>Safety<a class='headerlink'>\xc2\xb6</a></h2>\n"
        b"<p>Wind limits apply.</p>\n"
        b"</body></html>"
    )
    text, layout = read_html_layout(html)
    assert text == read_html(html)
    locator = Locator(text, "html", layout)
    source = html.decode().splitlines()
    for phrase in ("Tower cranes", "lift steel", "Wind limits"):
        line = locator.line_at(text.index(phrase))
        assert phrase in source[line - 1]
    assert locator.heading_at(text.index("Wind limits")) == "Safety"
    assert locator.heading_at(text.index("lift steel")) == "Cranes"


def test_html_inline_elements_stay_in_their_line():
    """Text in `<code>`, `<a>`, `<em>` ... is part of its line, as the page shows it, and
    keeps its source line."""
    html = (
        b"<html><body>\n<h1>The <code>json</code> module<a class='headerlink'>\xc2\xb6</a></h1>"
        b"\n<p>Use <code class='x'>json.dumps()</code> to <a href='#'>encode</a> an <em>object"
        b"</em>,\nthen <strong>write</strong> it.</p>\n</body></html>"
    )
    text, layout = read_html_layout(html)
    assert text.splitlines() == [
        "The json module\u00b6",
        "",
        "Use json.dumps() to encode an object,",
        "then write it.",
    ]
    assert [heading.title for heading in layout.outline] == ["The json module"]
    assert text[layout.outline[0].start : layout.outline[0].end] == "The json module\u00b6\n"
    locator = Locator(text, "html", layout)
    for phrase, line in (("The json", 2), ("Use json", 3), ("encode an", 3), ("then write", 4)):
        assert locator.line_at(text.index(phrase)) == line, phrase


def test_html_block_elements_start_a_line():
    """A paragraph, an item, a cell, a `<div>`, `<br>` and an element the reader does not
    know start a line of their own, even with no whitespace between them in the source."""
    html = (
        b"<html><body><p>First.<br>Next line.</p><ul><li>one</li><li><p>two</p></li></ul>"
        b"<table><tr><td>cell a</td><td>cell b</td></tr></table>"
        b"<div><span>alpha</span><span>beta</span></div><custom-tag>gamma</custom-tag>"
        b"</body></html>"
    )
    lines = [line for line in read_html(html).splitlines() if line]
    assert lines == ["First.", "Next line.", "one", "two", "cell a", "cell b", "alphabeta", "gamma"]


def test_html_highlighted_code_keeps_its_own_lines():
    """Sphinx writes code as a `<span>` per token with the spaces between them as text of
    their own: the code reads as written, a blank line only where the code has one."""
    html = (
        b'<html><body><p>Example:</p>\n<div class="highlight"><pre><span></span>'
        b'<span class="kn">import</span> <span class="nn">json</span>\n'
        b'<span class="n">data</span> <span class="o">=</span> <span class="n">json</span>'
        b'<span class="o">.</span><span class="n">dumps</span><span class="p">([</span>'
        b'<span class="mi">1</span><span class="p">])</span>\n\n'
        b'<span class="k">def</span> <span class="nf">f</span><span class="p">():</span>\n'
        b'    <span class="k">pass</span>\n</pre></div>\n</body></html>'
    )
    text, layout = read_html_layout(html)
    assert "import json\ndata = json.dumps([1])\n\ndef f():\n    pass" in text
    locator = Locator(text, "html", layout)
    for phrase, line in (("import json", 2), ("data =", 3), ("def f", 5), ("pass", 6)):
        assert locator.line_at(text.index(phrase)) == line, phrase


def test_html_text_after_a_start_tag_over_several_lines_is_on_the_tag_s_last_line():
    # Sphinx writes `<a href="..."\n   title="...">Glossary</a>`: the text is on line 3
    html = (
        b'<html><body>\n<p class="topless"><a href="glossary.html"\n   title="x">Glossary</a></p>'
    )
    text, layout = read_html_layout(html)
    assert Locator(text, "html", layout).line_at(text.index("Glossary")) == 3


def test_html_of_a_large_page_is_read_with_its_lines_and_headings():
    sections = "".join(
        f"<section><h2>Part {n}</h2>\n<p>Paragraph {n} about\ncranes.</p>\n</section>\n"
        for n in range(3000)
    )
    html = f"<html><head><title>Big</title></head><body>\n<h1>Big</h1>\n{sections}</body></html>"
    text, layout = read_html_layout(html.encode())
    locator = Locator(text, "html", layout)
    source = html.splitlines()
    assert len(layout.outline) == 3001
    for n in (0, 1500, 2999):
        offset = text.index(f"Paragraph {n} about")
        assert f"Paragraph {n} about" in source[locator.line_at(offset) - 1]
        assert locator.heading_at(offset) == f"Part {n}"


def two_page_pdf() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for lines in (["Page one talks about cranes."], ["Page two talks about otters."]):
        writer.add_page(PdfReader(io.BytesIO(make_pdf(lines))).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_pdf_pages_are_recorded_per_offset():
    text, layout = read_pdf_layout(two_page_pdf())
    locator = Locator(text, "pdf", layout)
    assert locator.locate(text.index("cranes"), len(text)).page == 1
    where = locator.locate(text.index("otters"), len(text))
    assert where.page == 2 and where.line is None


LONG = "# Almanac\n\n" + "".join(
    f"## Section {n}\n\nThe otters of river {n} build dens of reeds and mud near the water "
    f"and feed on fish, frogs and crayfish through the long season number {n}.\n\n"
    for n in range(40)
)


@pytest.fixture(scope="module")
def located_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("located") / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text(MARKDOWN)
    (folder / "install.rst").write_text(RST)
    (folder / "paper.pdf").write_bytes(two_page_pdf())
    (folder / "long.md").write_text(LONG)
    index = tmp_path_factory.mktemp("located-index") / "ix"
    Indexer(index).index_folder(folder)
    return folder, index


def test_hits_carry_line_end_line_heading_page_and_similarity(located_index):
    _folder, index = located_index
    with Searcher(index) as searcher:
        hits = searcher.search("otters", mode="contextual", k=50, all_chunks=True).results
        guide = next(hit for hit in hits if hit.path.endswith("guide.md"))
        assert (guide.line, guide.end_line, guide.heading) == (1, 14, "Guide")
        assert guide.page is None and -1 <= guide.similarity <= 1
        paper = next(hit for hit in hits if hit.path.endswith("paper.pdf"))
        assert paper.page == 2 and paper.line is None  # each page is a passage of its own
        hit = searcher.search("installer", mode="lexical", k=1).results[0]
        assert hit.path.endswith("install.rst") and hit.line == 1
        assert hit.similarity is not None and hit.match  # every mode: `match` needs it
        keys = set(hit.to_dict())
        assert {"line", "end_line", "heading", "page", "similarity", "score", "start"} <= keys


def test_rows_from_before_locations_were_stored_get_lines_from_their_text(located_index):
    _folder, index = located_index
    with Searcher(index) as searcher:
        before = searcher.search("otters", mode="lexical", k=5, all_chunks=True).results
    deep = [hit for hit in before if hit.path.endswith("long.md") and hit.line > 1]
    # the small sections share passages, which only the page's title holds
    assert deep and all((hit.heading, hit.section) == ("Almanac", "Almanac") for hit in deep)
    assert all(LONG.splitlines()[hit.line - 1].startswith("## Section") for hit in deep)
    database = sqlite3.connect(index / "ctxsearch.sqlite")
    with database:
        database.execute(
            "UPDATE chunks SET line = NULL, end_line = NULL, heading = NULL, section = NULL"
        )
    database.close()
    with Searcher(index) as searcher:
        after = searcher.search("otters", mode="lexical", k=5, all_chunks=True).results
    for old, new in zip(before, after, strict=True):
        assert (new.line, new.end_line) == (old.line, old.end_line)
        if old in deep:  # an old row's heading is the one where its window starts
            assert LONG.splitlines()[new.line - 1] == f"## {new.heading}"
            assert new.section is None


def test_a_closing_hash_that_belongs_to_the_title_is_kept():
    assert markdown_headings("## C#\n\n## Notes ##\n") == [(0, "C#"), (7, "Notes")]


def test_front_matter_list_items_and_fence_ends_above_a_rule_are_no_headings():
    text = "---\ntitle: Notes\n---\n\n- an item\n---\n\n```\ncode\n```\n---\n\nReal\n----\n"
    assert markdown_headings(text) == [(text.index("Real"), "Real")]


def test_an_rst_line_that_ends_a_paragraph_is_no_title():
    text = "Install\n=======\n\nFirst line of a paragraph\nlast line of it\n---------------\n"
    assert rst_headings(text) == [(0, "Install")]

"""HTML pages are read without their navigation chrome (sidebars, related links, footers)."""

from __future__ import annotations

from indexer.reading.readers import read_html, read_html_layout
from indexer.reading.text_layout import Locator

# The shape of a Sphinx page (Python's documentation): related links above and below the
# body, a sidebar with the page's table of contents, a footer, a mobile menu.
SPHINX_PAGE = b"""<!DOCTYPE html>
<html><head><title>4. Building Extensions - Python 3.11 documentation</title></head>
<body>
<div class="mobile-nav"><nav class="nav-content" role="navigation">
<a href="index.html">Python</a></nav>
<nav class="menu" role="navigation" aria-label="main navigation">
<h3>Table of Contents</h3><ul><li>Menu entry</li></ul></nav></div>
<div class="related" role="navigation" aria-label="related navigation">
<h3>Navigation</h3><ul><li>index</li><li>modindex</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="building">
<h1>4. Building Extensions</h1>
<p>A C extension for CPython is a shared library.</p>
<nav class="contents local" id="contents"><p>In-body contents entry</p></nav>
<section id="distutils"><h2>4.1. With distutils</h2>
<p>Extension modules can be built using distutils.</p>
</section></section>
</div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation">
<h3>Previous topic</h3><p>3. Defining Extension Types</p>
<div role="note" aria-label="source link"><h3>This Page</h3><p>Show Source</p></div>
<div class="inline-search" role="search"><form>Go</form></div></div>
</div>
<div class="footer">Copyright 2001-2026, Python Software Foundation.</div>
</body></html>
"""


def test_a_sphinx_page_is_read_without_its_sidebar_navigation_and_footer():
    text, layout = read_html_layout(SPHINX_PAGE)
    for chrome in (
        "Table of Contents",
        "Navigation",
        "modindex",
        "Previous topic",
        "This Page",
        "Show Source",
        "Copyright",
        "Menu entry",
        "Go",
    ):
        assert chrome not in text, chrome
    assert text.startswith("4. Building Extensions - Python 3.11 documentation")
    assert "A C extension for CPython is a shared library." in text
    assert "In-body contents entry" in text  # a nav inside the main content is the page's
    assert [title for _offset, title in layout.headings] == [
        "4. Building Extensions",
        "4.1. With distutils",
    ]
    assert text == read_html(SPHINX_PAGE)


def test_lines_and_headings_still_point_into_the_file_once_chrome_is_dropped():
    text, layout = read_html_layout(SPHINX_PAGE)
    source = SPHINX_PAGE.decode().splitlines()
    locator = Locator(text, "html", layout)
    for phrase in ("A C extension", "Extension modules can be built", "4.1. With distutils"):
        line = locator.line_at(text.index(phrase))
        assert phrase in source[line - 1], (phrase, line)
    for offset, title in layout.headings:
        assert text[offset:].startswith(title)


def test_header_footer_and_nav_inside_an_article_are_the_page_s_own():
    page = (
        b"<html><body><header>Site banner</header><nav>Home | Blog</nav>"
        b"<article><header><h1>Cranes</h1></header><p>Cranes fly south.</p>"
        b"<footer>Posted in birds</footer></article>"
        b'<footer role="contentinfo">All rights reserved</footer></body></html>'
    )
    text = read_html(page)
    for own in ("Cranes", "Cranes fly south.", "Posted in birds"):
        assert own in text, own
    for chrome in ("Site banner", "Home | Blog", "All rights reserved"):
        assert chrome not in text


def test_a_page_that_is_nothing_but_navigation_keeps_its_text():
    page = b"<html><body><nav><ul><li>Alpha</li><li>Beta</li></ul></nav></body></html>"
    assert read_html(page).split() == ["Alpha", "Beta"]

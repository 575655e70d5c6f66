"""Headings and snippets without their markup (`search.markup`), on lines taken from the
FastAPI, Flask and Python documentation."""

import pytest

from search.markup import plain_heading, plain_text


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        # mkdocs attribute lists on FastAPI's headings
        ("HTTP Basic Auth { #http-basic-auth }", "HTTP Basic Auth"),
        ("Simple HTTP Basic Auth { #simple-http-basic-auth }", "Simple HTTP Basic Auth"),
        ('Install `uvicorn` { #install-uvicorn .special data-x="1" }', "Install uvicorn"),
        ("Python-Markdown's form {: #intro .lead }", "Python-Markdown's form"),
        # Pandoc's header attributes and bracketed spans
        ("Introduction {#intro .unnumbered}", "Introduction"),
        ("Appendix {-}", "Appendix"),
        ("[Small caps]{.smallcaps} title", "Small caps title"),
        ("## Path Parameters { #path-parameters } ##", "Path Parameters"),
    ],
)
def test_markdown_headings_lose_their_attributes(written, shown):
    assert plain_text(written, "markdown").strip() == shown


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (
            "For the simplest cases, you can use [HTTP Basic Auth](https://developer.mozilla.org"
            '/en-US/docs/Web/HTTP/Authentication "MDN").',
            "For the simplest cases, you can use HTTP Basic Auth.",
        ),
        ("![Swagger UI](https://fastapi.tiangolo.com/img/tutorial/image12.png)", "Swagger UI"),
        # from Rust's releases.md: a link's text wraps
        (
            "- [Lower the precedence of the\n  solver in coherence.][119820] and [new fatal\n"
            "  overflow errors.](https://github.com/rust-lang/rust/pull/1)",
            "- Lower the precedence of the\n  solver in coherence. and new fatal\n"
            "  overflow errors.",
        ),
        ("[one\n\nparagraph](x) each", "[one\n\nparagraph](x) each"),
        ("[![build](https://ci/badge.svg)](https://ci/run) passes", "build passes"),
        (
            "See [the tutorial][tutorial] and <https://fastapi.tiangolo.com>.",
            "See the tutorial and https://fastapi.tiangolo.com.",
        ),
        (
            "Import `HTTPBasic` and ``HTTPBasicCredentials``.",
            "Import HTTPBasic and HTTPBasicCredentials.",
        ),
        (
            "a **username** and a *password*, __bold__ and _light_",
            "a username and a password, bold and light",
        ),
        (
            "`__init__` and `*args` stay as code; snake_case_names stay",
            "__init__ and *args stay as code; snake_case_names stay",
        ),
        (
            'the <abbr title="Asynchronous Server Gateway Interface">ASGI</abbr> server<br>',
            "the ASGI server",
        ),
        ("the username &amp; password &mdash; safely &lt;3", "the username & password — safely <3"),
        (r"a literal \*star\* and \_under\_", "a literal *star* and _under_"),
        ("{* ../../docs_src/security/tutorial006_an_py39.py hl[4,8,12] *}", ""),
    ],
)
def test_markdown_inline_markup_is_taken_out(written, shown):
    assert plain_text(written, "markdown").strip() == shown


def test_markdown_block_markup_is_taken_out():
    written = (
        "# HTTP Basic Auth { #http-basic-auth }\n\n"
        "> Quoted **advice**.\n\n"
        "```python\nprint('hi')\n```\n\n"
        '!!! tip "Technical Details"\n    Read it.\n\n'
        "/// warning\n\nCareful.\n\n///\n\n"
        "Setext title\n============\n\n"
        "[tutorial]: https://fastapi.tiangolo.com/tutorial/\n"
    )
    lines = [line.strip() for line in plain_text(written, "markdown").splitlines() if line.strip()]
    assert lines == [
        "HTTP Basic Auth",
        "Quoted advice.",
        "print('hi')",
        "Technical Details:",
        "Read it.",
        "Careful.",
        "Setext title",
    ]


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        # Sphinx roles, from Flask's quickstart.rst and Python's library docs
        ("Use the :meth:`~flask.Flask.route` decorator", "Use the route decorator"),
        (
            "See :func:`url_for` and :py:class:`collections.OrderedDict`.",
            "See url_for and collections.OrderedDict.",
        ),
        ("read :ref:`the routing docs <url-building>` first", "read the routing docs first"),
        (":envvar:`!PYTHONPATH` is read", "PYTHONPATH is read"),
        ("an ``url_for()`` call answers ``GET``", "an url_for() call answers GET"),
        (
            "Read `Werkzeug's routing <https://werkzeug.palletsprojects.com/routing/>`_ docs.",
            "Read Werkzeug's routing docs.",
        ),
        ("as `PEP 8`_ says, *emphasis* and **strong**", "as PEP 8 says, emphasis and strong"),
        ("the :class:`__init__` method of name_", "the __init__ method of name_"),
        # reST shows an entity as written (Sphinx escapes it)
        ("the form &name; (e.g. &gt;)", "the form &name; (e.g. &gt;)"),
        ("resized to ``(n *\n   sizeof(TYPE))`` bytes", "resized to (n *\n   sizeof(TYPE)) bytes"),
    ],
)
def test_rst_roles_links_and_literals_are_taken_out(written, shown):
    assert plain_text(written, "rst").strip() == shown


def test_python_docs_tables_dashes_literal_markers_and_permalinks():
    """Seen on the page over Python's own docs (`json.rst.txt`, `json.html`)."""
    table = (
        "+-------------------+---------------+\n"
        "| JSON              | Python        |\n"
        "+===================+===============+\n"
        "| object            | dict          |\n"
        "+-------------------+---------------+\n"
    )
    assert " ".join(plain_text(table, "rst").split()) == "| JSON | Python | | object | dict |"
    rows = plain_text("| a | b |\n|---|:--:|\n| 1 | 2 |", "markdown")
    assert " ".join(rows.split()) == "| a | b | | 1 | 2 |"
    assert plain_heading("json --- JSON encoder and decoder", "/py/json.rst.txt") == (
        "json \u2014 JSON encoder and decoder"
    )
    assert plain_text("used as follows::\n\n    $ python -m json.tool", "rst").split() == [
        "used", "as", "follows:", "$", "python", "-m", "json.tool"
    ]  # fmt: skip
    assert plain_text("--sort-keys and ``--indent`` -- options", "rst") == (
        "--sort-keys and --indent \u2013 options"
    )
    assert plain_text("Command line options \u00b6 infile \u00b6\nThe", "html") == (
        "Command line options infile\nThe"
    )
    assert plain_heading("Command line options\u00b6", "/py/json.html") == "Command line options"


def test_rst_block_markup_is_taken_out():
    written = (
        "Routing\n-------\n\n"
        ".. _url-building:\n\n"
        ".. code-block:: python\n\n    @app.route('/')\n\n"
        ".. note:: Rules end with a slash.\n\n"
        ".. versionadded:: 2.0\n\n"
        ".. autofunction:: flask.url_for\n\n"
        ".. XXX sort out unicode, str, bytes and bytearray\n\n"
        ".. [1] A footnote stays.\n"
    )
    lines = [line.strip() for line in plain_text(written, "rst").splitlines() if line.strip()]
    assert lines == [
        "Routing",
        "@app.route('/')",
        "Note: Rules end with a slash.",
        "Added in version 2.0",
        "flask.url_for",
        ".. [1] A footnote stays.",
    ]


@pytest.mark.parametrize("kind", ["text", "pdf"])
def test_code_and_plain_text_are_shown_as_written(kind):
    source = "def f(*args, **kwargs):  # see [docs](x) { #id } __init__ &amp;"
    assert plain_text(source, kind) == source


def test_a_python_file_keeps_its_markup_like_text():
    assert plain_heading("**kwargs { #x }", "/src/app.py") == "**kwargs { #x }"


def test_headings_and_trails_follow_the_file_type():
    assert plain_heading(None, "/docs/a.md") is None
    trail = "Security { #security } \u203a HTTP Basic Auth { #http-basic-auth }"
    assert plain_heading(trail, "/docs/a.md") == "Security \u203a HTTP Basic Auth"
    assert plain_heading("The :func:`open` function", "/docs/io.rst") == "The open function"
    assert plain_heading("Q&amp;A", "/docs/faq.html") == "Q&A"
    # a heading that is nothing but markup is kept rather than shown empty
    assert plain_heading("{ #only-an-anchor }", "/docs/a.md") == "{ #only-an-anchor }"


# ---- markup seen in mdBook and mkdocs snippets (the Rust book, FastAPI's docs) ----


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("Listing 16-1 <!-- ignore --> spawns a thread", "Listing 16-1 spawns a thread"),
        ("<!-- ANCHOR: here -->\nfn main() {}\n<!-- ANCHOR_END: here -->", "fn main() {}"),
        ("before <!-- a comment\nover two lines --> after", "before after"),
        # a passage may begin or end inside a comment
        ("the rest of a comment --> shown text", "shown text"),
        ("shown text <!-- the start of a comment", "shown text"),
    ],
)
def test_html_comments_are_not_shown(written, shown):
    assert " ".join(plain_text(written, "markdown").split()) == shown


@pytest.mark.parametrize(
    "directive",
    [
        "{{#include ../listings/ch16-fearless-concurrency/listing-16-01/src/main.rs}}",
        "{{#rustdoc_include ../listings/ch02/src/main.rs:print}}",
        "{{#playground example.rs editable}}",
        "{{#title The Rust Book}}",
    ],
)
def test_mdbook_directives_are_not_shown(directive):
    written = f"Filename: src/main.rs\n\n```rust\n{directive}\n```\n\nThe code"
    assert plain_text(written, "markdown").split() == ["Filename:", "src/main.rs", "The", "code"]
    # a passage may begin or end inside one
    cut = len(directive) // 2
    assert plain_text(f"as a number:\n\n```rust\n{directive[:cut]}", "markdown").split() == [
        "as",
        "a",
        "number:",
    ]
    tail = directive[cut:] if " " not in directive[cut:] else directive[directive.rindex(" ") + 1 :]
    assert plain_text(f"{tail}\n```\n\nThe code", "markdown").split() == ["The", "code"]


def test_template_braces_are_not_taken_for_a_cut_directive():
    assert plain_text("name }} and {{ other }}", "markdown") == "name }} and {{ other }}"


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        # CommonMark: a span opened by two backticks holds single ones
        (
            "fails with ``the trait `Send` is not implemented for `Rc<Mutex<i32>>` `` here",
            "fails with the trait `Send` is not implemented for `Rc<Mutex<i32>>` here",
        ),
        ("a ``` `` ``` span and `x`", "a `` span and x"),
        # a passage may begin or end inside a span: its lone backtick pairs with no other
        # (the Rust book's ch13-03 showed `uildfunction so that the parameterargshas`)
        (
            "uild` function so that the parameter `args` has a [link][x]<!-- ignore -->",
            "uild function so that the parameter args has a link",
        ),
        ("the type `impl Iter", "the type impl Iter"),
        ("uild` takes `args` and `impl_Iter", "uild takes args and impl_Iter"),
        ("(`foo`) and `x`, then", "(foo) and x, then"),
    ],
)
def test_code_spans_keep_what_they_hold(written, shown):
    assert plain_text(written, "markdown").strip() == shown


def test_fenced_code_is_shown_as_written():
    code = (
        "$ touch app/__init__.py app/**/*.py\n"
        "error[E0277]: `Rc<Mutex<i32>>` cannot be sent between threads safely\n"
        "let v = *x; // &amp; [a](b) _c_ { #d }\n"
    )
    written = f"Run:\n\n```console\n{code}```\n\nThen `app/__init__.py` exists."
    assert plain_text(written, "markdown") == (f"Run:\n\n\n{code}\n\nThen app/__init__.py exists.")
    # a passage that begins inside a fence (its opening line in the passage before)
    assert plain_text("main.py __init__.py\n```\n\nSee __this__.", "markdown") == (
        "main.py __init__.py\n\n\nSee this."
    )
    # and one that ends inside one
    assert plain_text("See __this__.\n\n```python\ndef __init__(self):", "markdown") == (
        "See this.\n\n\ndef __init__(self):"
    )


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ('a <dfn title="maps a -> b">function</dfn> here', "a function here"),
        ("the <dfn title='a \"bitwise or\" > 1'>vertical bar</dfn>", "the vertical bar"),
        # a passage that begins or ends inside a tag
        ('for example: str, int, float, bool">type</dfn> of a variable.', "type of a variable."),
        ('declaring the <dfn title="for example: str,', "declaring the"),
    ],
)
def test_no_attribute_of_a_tag_is_shown(written, shown):
    assert plain_text(written, "markdown").strip() == shown


BASIC_AUTH = """# HTTP Basic Auth { #http-basic-auth }

For the simplest cases, you can use [HTTP Basic Auth](https://developer.mozilla.org/en-US/\
docs/Web/HTTP/Authentication "MDN").

In HTTP Basic Auth, the application expects a header that contains a **username** and a password.
"""
QUICKSTART = """Routing
-------

Use the :meth:`~flask.Flask.route` decorator to bind a function to a URL, and
``url_for()`` to build one.
"""


def _markup_docs(tmp_path, fast_model):
    from indexer import Indexer

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "security-http-basic-auth.md").write_text(BASIC_AUTH)
    (folder / "quickstart.rst").write_text(QUICKSTART)
    index = tmp_path / "ix"
    Indexer(index, model=fast_model).index_folder(folder)
    return index


def test_the_table_and_the_json_show_headings_and_snippets_without_markup(tmp_path, fast_model):
    """`§ HTTP Basic Auth { #http-basic-auth }` and `[HTTP Basic Auth](https://...)` in the
    table, `:meth:`~flask.Flask.route`` in a snippet (issue 27 item 6)."""
    import json

    from click.testing import CliRunner

    from search.cli import cli

    index = _markup_docs(tmp_path, fast_model)
    args = ["query", "basic auth username route decorator", "--index", str(index), "-k", "2"]
    table = CliRunner().invoke(cli, args, catch_exceptions=False).stdout
    assert "§ HTTP Basic Auth\n" in table
    assert "you can use HTTP Basic Auth. In HTTP Basic Auth" in table
    assert "Use the route decorator to bind" in table
    for noise in ("{ #", "](", ":meth:", "``", "**", "-------"):
        assert noise not in table, noise
    hits = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)["results"]
    markdown = next(hit for hit in hits if hit["path"].endswith(".md"))
    assert markdown["heading"] == markdown["section"] == "HTTP Basic Auth"
    marked = [markdown["snippet"][start:end].lower() for start, end in markdown["highlights"]]
    assert {"basic", "username"} <= set(marked)  # spans found in the cleaned text


def test_a_passage_read_by_its_chunk_id_has_the_heading_its_hit_shows(tmp_path, fast_model):
    """MCP `read` of a hit's chunk_id gives the passage's text as written (its lines are
    the file's) under the heading the hit showed, without the heading's markup."""
    from search.engine import Searcher
    from search.mcp_server.read_tool import read_passage

    index = _markup_docs(tmp_path, fast_model)
    with Searcher(index, model=fast_model) as searcher:
        hits = searcher.search("basic auth username", k=3).results
        markdown = next(hit for hit in hits if hit.path.endswith(".md"))
        passage = read_passage(searcher, markdown.chunk_id)
    assert markdown.heading == "HTTP Basic Auth"
    assert passage["heading"] == markdown.heading
    assert "{ #http-basic-auth }" in passage["text"]  # the text is the file's own

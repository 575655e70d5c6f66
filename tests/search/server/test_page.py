"""The search page at /, driven end to end in Debian's headless Chromium by Playwright."""

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.conftest import TOKEN, make_pdf
from tests.support.serving import running_server

# Debian's package (`make browser` installs it); Playwright never downloads a browser here.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: `make browser` installs Debian's chromium"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, sample_server) -> Iterator[Page]:
    opened = browser.new_page()
    opened.goto(sample_server.url)
    yield opened
    opened.close()


def api_titles(server, query: str, mode: str) -> list[str]:
    response = httpx.get(f"{server.url}/search", params={"q": query, "mode": mode, "k": 10})
    return [Path(hit["path"]).name for hit in response.json()["results"]]


def test_typing_a_query_shows_results_with_highlighted_terms(page, sample_server):
    page.locator("#query").fill("the python swallowed its prey")
    page.locator("#query").press("Enter")
    results = page.locator("[data-mode=hybrid] .result")
    expect(results.first.locator(".title")).to_have_text("pythons-constrictors.md")
    marked = results.first.locator(".snippet mark")
    expect(marked.first).to_be_visible()
    assert {word.lower() for word in marked.all_text_contents()} & {"python", "pythons", "prey"}
    titles = page.locator("[data-mode=hybrid] .title").all_text_contents()
    assert titles == api_titles(sample_server, "the python swallowed its prey", "hybrid")


def test_a_quoted_phrase_and_an_excluded_word_typed_in_the_page(page, sample_server):
    """The page sends the query as typed: a quoted phrase must be in each result (one
    file holds `wood-trimmed dashboard`), a `-word` keeps out the passages that hold it."""
    results = page.locator("[data-mode=hybrid] .result .title")
    page.locator("#query").fill('"wood-trimmed dashboard"')
    page.locator("#query").press("Enter")
    expect(results).to_have_text(["jaguar-xj-sedan.md"])
    assert len(api_titles(sample_server, "wood-trimmed dashboard", "hybrid")) > 1
    page.locator("#query").fill("python snake -prey -constrictor")
    page.locator("#query").press("Enter")
    expected = api_titles(sample_server, "python snake -prey -constrictor", "hybrid")
    assert "pythons-constrictors.md" not in expected
    expect(results).to_have_text(expected)


def test_switching_mode_searches_again_in_that_mode(page, sample_server):
    query = "erosion along the bank after the flood"
    page.locator("#query").fill(query)
    page.locator("#query").press("Enter")
    expect(page.locator("[data-mode=hybrid] .result").first).to_be_visible()
    page.get_by_label("static", exact=True).check()
    static_titles = page.locator("[data-mode=static] .title")
    expect(static_titles.first).to_be_visible()
    assert static_titles.all_text_contents() == api_titles(sample_server, query, "static")
    expect(page.locator("[data-mode=hybrid]")).to_have_count(0)
    assert "mode=static" in page.url


def test_side_by_side_shows_static_contextual_and_hybrid(page, sample_server):
    query = "I deposited the cheque at the bank"
    page.locator("#query").fill(query)
    page.get_by_label("static · contextual · hybrid side by side").check()
    columns = page.locator("section.column")
    expect(columns).to_have_count(3)
    assert [columns.nth(i).get_attribute("data-mode") for i in range(3)] == [
        "static",
        "contextual",
        "hybrid",
    ]
    for mode in ("static", "contextual", "hybrid"):
        titles = page.locator(f"[data-mode={mode}] .title")
        expect(titles).to_have_count(10)
        assert titles.all_text_contents() == api_titles(sample_server, query, mode)


def test_the_explain_box_shows_why_each_result_is_there(page, sample_server):
    page.locator("#query").fill("where do I open a savings account")
    page.locator("#query").press("Enter")
    expect(page.locator("[data-mode=hybrid] .result").first).to_be_visible()
    expect(page.locator(".explain")).to_have_count(0)
    page.get_by_label("explain", exact=True).check()
    why = page.locator("[data-mode=hybrid] .result").first.locator("details.explain")
    expect(why).to_be_visible(timeout=120_000)
    why.locator("summary").click()
    lines = why.locator("p").all_text_contents()
    assert lines[0].startswith("ranks: contextual #1 of ")
    assert any(line.startswith("fusion: dense ") for line in lines)
    assert any(line.startswith("words, contextual: cosine ") for line in lines)
    assert any(line.startswith("words, static: cosine ") for line in lines)
    assert "explain=true" in page.url


def test_a_title_opens_the_document_with_the_chunk_marked(page):
    page.locator("#query").fill("tower crane counterweight")
    page.locator("#query").press("Enter")
    page.locator("[data-mode=hybrid] .title").first.click()
    dialog = page.locator("dialog#document")
    expect(dialog).to_be_visible()
    expect(dialog.locator("h2")).to_contain_text("construction/")
    expect(dialog.locator("pre mark")).to_contain_text("crane")
    # the line that matches best is drawn inside the passage, and shown after the path
    expect(dialog.locator("pre mark .match-line")).to_contain_text("counterweight")


def test_an_error_from_the_api_is_shown(page):
    page.locator("#query").fill("bank")
    page.evaluate("document.querySelector('input[value=lexical]').value = 'sparse'")
    page.get_by_label("lexical", exact=True).check()
    expect(page.locator("#status")).to_contain_text("422")


@pytest.mark.parametrize(
    ("mode", "shown"),
    [('"]', "hybrid"), ("sparse", "hybrid"), ("", "hybrid"), ("static", "static")],
)
def test_a_mode_in_the_address_is_validated_not_put_in_a_selector(
    browser, sample_server, mode, shown
):
    """`/?q=zebras&mode="]` threw "not a valid selector" and ran no search (issue 12, 16)."""
    opened = browser.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        opened.goto(f"{sample_server.url}/?{urlencode({'q': 'zebras', 'mode': mode})}")
        expect(opened.locator(f"[data-mode={shown}] .result").first).to_be_visible()
        expect(opened.locator("section.column")).to_have_count(1)
        assert opened.locator(f"input[name=mode][value={shown}]").is_checked()
        assert errors == []
    finally:
        opened.close()


def test_a_non_ascii_token_works_from_the_page(browser, token_server):
    """The page sends the token as UTF-8 bytes, as the server compares it (item 15)."""
    opened = browser.new_page()
    try:
        opened.goto(token_server.url)
        expect(opened.locator("#token-field")).to_be_visible()
        opened.locator("#token").fill(TOKEN)
        opened.locator("#query").fill("the python swallowed its prey")
        opened.locator("#query").press("Enter")
        titles = opened.locator("[data-mode=hybrid] .title")
        expect(titles.first).to_have_text("pythons-constrictors.md")
        opened.locator("#token").fill("passwort")
        opened.locator("#query").press("Enter")
        expect(opened.locator("#status")).to_contain_text("401")
    finally:
        opened.close()


# ---- the page at 1280x800 over documentation-like files (issue 27 item 6) ----

WIDE = {"width": 1280, "height": 800}
VIEWS = ("hybrid", "contextual", "static", "lexical", "side-by-side")
SIDE_BY_SIDE = ["static", "contextual", "hybrid"]
DOCS_QUERY = "password authentication header username"
BASIC_AUTH = """# HTTP Basic Auth { #http-basic-auth }

For the simplest cases, you can use [HTTP Basic Auth](https://developer.mozilla.org/en-US/\
docs/Web/HTTP/Authentication "MDN").

In HTTP Basic Auth, the application expects a header that contains a **username** and a
*password*, sent as `Authorization: Basic` with the username and password in base64.

## Check the username { #check-the-username }

Use `secrets.compare_digest()` to check the username &amp; password: a timing attack on
the password header is then harder.
"""
DOCS = {
    "fastapi/docs/en/docs/tutorial/security/http-basic-auth.md": BASIC_AUTH,
    "fastapi/docs/en/docs/backup/http-basic-auth.md": BASIC_AUTH,  # a copy: one hit
    "fastapi/docs/en/docs/tutorial/security/index.md": (
        "# Security { #security }\n\nThere are many ways to handle security, authentication "
        "and authorization: OAuth2 with a password flow, an API key in a header, "
        "[OpenID Connect](https://openid.net/connect/).\n"
    ),
    "fastapi/docs/en/docs/tutorial/first-steps.md": (
        "# First Steps { #first-steps }\n\nThe simplest FastAPI file could look like this: "
        "a path operation that answers a request without any header or password.\n"
    ),
    "flask/docs/quickstart.rst": (
        "Quickstart\n==========\n\nHTTP Methods\n------------\n\nUse the "
        ":meth:`~flask.Flask.route` decorator; a login view reads the username and the "
        "password from ``request.form`` and checks the ``Authorization`` header.\n"
    ),
    "flask/docs/security.rst": (
        "Security Considerations\n=======================\n\nNever store a password in "
        "clear text: see :func:`werkzeug.security.generate_password_hash` and "
        "`the OWASP cheat sheet <https://cheatsheetseries.owasp.org/>`_ for authentication.\n"
    ),
    "notes/long-names.txt": (
        "The authentication header is parsed by "
        "fastapi.security.http.HTTPBasicCredentials.model_validate_json_username_password_"
        "header_authentication_scheme_parser, a name too long for any column.\n"
    ),
}
PDF_LINES = [
    "Crane operator manual.",
    "Keep the load chart in the cab.",
    "The password of the crane computer is changed monthly.",
    "Authentication at the crane console needs a username.",
]


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory, fast_model):
    """`ctxsearch serve` over documentation-like files (mkdocs anchors, links, reST roles,
    a copy, a PDF, a very long name), indexed with the fast encoder."""
    from indexer import Indexer

    folder = tmp_path_factory.mktemp("page-docs") / "docs"
    for name, text in DOCS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / "manuals").mkdir()
    (folder / "manuals" / "crane-manual.pdf").write_bytes(make_pdf(PDF_LINES))
    index = folder.parent / "index"
    Indexer(index, model=fast_model).index_folder(folder)
    with running_server(index, folder.parent / "server.log") as server:
        yield server, folder


@pytest.fixture
def wide_page(browser, docs_server) -> Iterator[Page]:
    opened = browser.new_page(viewport=WIDE)
    opened.goto(docs_server[0].url)
    yield opened
    opened.close()


def screenshot_folder(tmp_path: Path) -> Path:
    """Where the screenshots go: $PAGE_SCREENSHOTS when set (to look at them), else tmp."""
    folder = Path(os.environ.get("PAGE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# The page's width against the viewport's: the document's scroll width (any overflow to
# the right makes it wider than the viewport), and the right edge of every column, hit
# and line of a hit (an element cut off by `overflow: hidden` would not widen the page).
OVERFLOW = """() => {
  const root = document.documentElement;
  const width = root.clientWidth;
  const boxes = document.querySelectorAll(
    "header, #filters, section.column, .result, .result > *, .result .location");
  const over = [...boxes]
    .filter((box) => box.getBoundingClientRect().right > width + 0.5)
    .map((box) => `${box.className || box.tagName}: ${box.getBoundingClientRect().right}`);
  return { scrollWidth: root.scrollWidth, clientWidth: width, over };
}"""


def search_in(page: Page, mode: str, query: str = DOCS_QUERY) -> None:
    page.locator("#query").fill(query)
    page.locator(f"input[name=mode][value={mode}]").check()
    page.locator("#query").press("Enter")
    shown = SIDE_BY_SIDE if mode == "side-by-side" else [mode]
    for each in shown:
        expect(page.locator(f"[data-mode={each}] .result").first).to_be_visible()
    expect(page.locator("#status")).not_to_have_text("Searching…")


@pytest.mark.parametrize("mode", VIEWS)
def test_every_view_fits_1280_pixels(wide_page, mode, tmp_path):
    """The side-by-side view cut the hybrid column off at 1280 px (issue 27 item 6)."""
    search_in(wide_page, mode)
    measured = wide_page.evaluate(OVERFLOW)
    assert measured["scrollWidth"] <= measured["clientWidth"], measured
    assert measured["over"] == [], measured
    if mode in ("hybrid", "side-by-side"):
        name = "page-1280x800.png" if mode == "hybrid" else "page-side-by-side-1280x800.png"
        shot = screenshot_folder(tmp_path) / name
        wide_page.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000


def docs_api(server, **parameters) -> list[dict]:
    params = {"q": DOCS_QUERY, "mode": "hybrid", "k": 10, **parameters}
    response = httpx.get(f"{server.url}/search", params=params)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def shown_paths(page: Page) -> list[str]:
    """The hybrid column's paths, read in one evaluation (never half of a re-render)."""
    return page.eval_on_selector_all(
        "[data-mode=hybrid] .location", "links => links.map(link => link.title)"
    )


def expect_shown(page: Page, paths: list[str], timeout_s: float = 30.0) -> None:
    """Wait until the hybrid column shows exactly `paths`, in order.

    A count alone can match the previous search's results before the new ones arrive.
    """
    deadline = time.monotonic() + timeout_s
    while (shown := shown_paths(page)) != paths and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert shown == paths


def test_the_filter_controls_and_k_change_the_results(wide_page, docs_server):
    server, folder = docs_server
    search_in(wide_page, "hybrid")
    everything = shown_paths(wide_page)
    assert any(path.endswith(".md") for path in everything)
    wide_page.get_by_label("Type").fill("rst")
    wide_page.get_by_label("Type").press("Enter")
    expect(wide_page.locator("[data-mode=hybrid] .location").first).to_have_attribute(
        "title", str(folder / "flask/docs/quickstart.rst")
    )
    rst = [hit["path"] for hit in docs_api(server, type="rst")]
    expect_shown(wide_page, rst)
    assert set(rst) == {
        str(folder / "flask/docs/quickstart.rst"),
        str(folder / "flask/docs/security.rst"),
    }
    assert "type=rst" in wide_page.url

    wide_page.get_by_label("Type").fill("")
    wide_page.get_by_label("k", exact=True).fill("2")
    wide_page.get_by_label("k", exact=True).press("Enter")
    expect_shown(wide_page, [hit["path"] for hit in docs_api(server, k=2)])

    # under, a folder offered from /info's roots, and path, a glob; several at once
    wide_page.get_by_label("Folder").fill(f"{folder / 'fastapi'}, {folder / 'notes'}")
    wide_page.get_by_label("Path").fill("*.md")
    wide_page.get_by_label("k", exact=True).fill("10")
    wide_page.get_by_label("k", exact=True).press("Enter")
    expected = docs_api(server, under=[str(folder / "fastapi"), str(folder / "notes")], path="*.md")
    expect_shown(wide_page, [hit["path"] for hit in expected])
    assert all("/fastapi/" in path and path.endswith(".md") for path in shown_paths(wide_page))
    assert wide_page.locator("#roots option").first.get_attribute("value") == str(folder)

    # the fields are in the address: a reload shows the same search
    wide_page.reload()
    expect(wide_page.get_by_label("Path")).to_have_value("*.md")
    expect(wide_page.locator("[data-mode=hybrid] .result")).to_have_count(len(expected))

    # a minimum similarity no hit reaches, then a metadata key no record has (a hint)
    wide_page.get_by_role("button", name="Clear").click()
    wide_page.get_by_label("Min. similarity").fill("0.99")
    wide_page.get_by_label("Min. similarity").press("Enter")
    expect(wide_page.locator("[data-mode=hybrid] .empty")).to_have_text("No results.")
    wide_page.get_by_label("Min. similarity").fill("")
    wide_page.get_by_label("Where").fill("lang=en")
    wide_page.get_by_label("Where").press("Enter")
    expect(wide_page.locator("[data-mode=hybrid] .hint").first).to_contain_text("hint:")


def test_an_older_search_answering_last_never_replaces_the_newer_results(wide_page, docs_server):
    """A filter changed and then Enter sends two searches; their answers may arrive in either
    order (seen in CI: k=2's answer landed after k=10's and the page showed 2 results)."""
    server, _ = docs_server
    search_in(wide_page, "hybrid")
    held = []

    def hold_the_k2_search(route):
        if "k=2" in route.request.url and not held:
            held.append(route)
        else:
            route.continue_()

    wide_page.route("**/search?*", hold_the_k2_search)
    k = wide_page.get_by_label("k", exact=True)
    k.fill("2")
    k.press("Enter")
    k.fill("3")
    k.press("Enter")
    newer = [hit["path"] for hit in docs_api(server, k=3)]
    expect_shown(wide_page, newer)
    assert len(held) == 1
    with wide_page.expect_response(lambda response: "k=2" in response.url):
        held[0].fulfill(response=held[0].fetch())
    wide_page.wait_for_timeout(500)  # time for the stale answer to be drawn, were it drawn
    assert shown_paths(wide_page) == newer


def test_labels_show_the_file_name_and_the_matching_line(wide_page, docs_server):
    server, _folder = docs_server
    search_in(wide_page, "hybrid")
    by_name = {Path(hit["path"]).name: hit for hit in docs_api(server)}
    auth = by_name["http-basic-auth.md"]  # the file or its copy: one hit
    assert auth["match_line"] and len(auth["duplicates"]) == 1
    result = wide_page.locator("[data-mode=hybrid] .result").filter(has_text="http-basic-auth.md")
    folders = "/".join(Path(auth["path"]).parts[-3:])
    expect(result.locator(".location")).to_have_text(f"{folders}:{auth['match_line']}")
    expect(result.locator(".path")).to_contain_text("also in 1 other file")
    expect(result.locator(".section")).to_have_text(f"§ {auth['section']}")
    assert "{ #" not in result.inner_text() and "](" not in result.inner_text()
    pdf = by_name["crane-manual.pdf"]
    expect(
        wide_page.locator("[data-mode=hybrid] .location").filter(has_text="crane-manual.pdf")
    ).to_have_text(
        f"docs/manuals/crane-manual.pdf · page {pdf['match_page']}, line {pdf['match_page_line']}"
    )
    rst = wide_page.locator("[data-mode=hybrid] .result").filter(has_text="quickstart.rst")
    expect(rst.locator(".snippet")).to_contain_text("Use the route decorator")
    expect(rst.locator(".section")).to_have_text("§ Quickstart \u203a HTTP Methods")


@pytest.mark.parametrize(
    ("match", "shown"), [("strong", "strong match"), ("none", "no good match")]
)
def test_a_match_key_is_shown_when_the_server_gives_it(wide_page, match, shown):
    """The real server's answer with `match` added (issue 27 item 3 adds it to every hit):
    each hit shows it as a label, and any but `strong` is drawn faint."""

    def with_match(route):
        response = route.fetch()
        body = response.json()
        for hit in body["results"]:
            hit["match"] = match
        route.fulfill(response=response, json=body)

    wide_page.route("**/search?*", with_match)
    search_in(wide_page, "hybrid")
    labels = wide_page.locator("[data-mode=hybrid] .match")
    expect(labels.first).to_have_text(shown)
    assert labels.count() == wide_page.locator("[data-mode=hybrid] .result").count()
    faint = wide_page.locator("[data-mode=hybrid] .result.weak").count()
    assert faint == (0 if match == "strong" else labels.count())


def test_a_value_the_api_refuses_is_shown_and_an_off_step_one_is_sent(wide_page, docs_server):
    """The browser's own checks do not stop a search: `min_similarity` 0.33 is off the
    field's 0.05 step and still searches; `k` 0 reaches the API, whose 422 is shown."""
    server, _folder = docs_server
    search_in(wide_page, "hybrid")
    wide_page.get_by_label("Min. similarity").fill("0.33")
    wide_page.get_by_label("Min. similarity").press("Enter")
    expect(wide_page).to_have_url(re.compile(r"min_similarity=0\.33"))
    # a new query, sent from the query field, while that field holds 0.33
    wide_page.locator("#query").fill("username password")
    wide_page.locator("#query").press("Enter")
    expect(wide_page).to_have_url(re.compile(r"q=username\+password"))
    expected = docs_api(server, q="username password", min_similarity=0.33)
    expect_shown(wide_page, [hit["path"] for hit in expected])
    wide_page.get_by_label("k", exact=True).fill("0")
    wide_page.get_by_label("k", exact=True).press("Enter")
    expect(wide_page.locator("#status")).to_contain_text("422")
    expect(wide_page.locator("#status")).to_contain_text("k")


# ---- highlights in text outside the Basic Multilingual Plane ----

# Each emoji and each CJK Extension B ideograph is one code point (the API's offsets
# count code points) and two UTF-16 units (JavaScript's strings count units).
WIDE_TEXT = (
    "Field notes 🐢🦎🐍🐊🦖🦕 on reptiles, 𠀀𠀁𠀂 and 漢字 in the margin.\n\n"
    + "Sightings: "
    + "🐢 " * 400
    + "\n\n"
    + "Margin 🐢🐢🐢🐢🐢🐢🐢🐢🐢🐢 notes 𠀀𠀁𠀂𠀃 the tortoise crossed the 道路 slowly, "
    "and the tortoise 🐢 rested.\n"
)


@pytest.fixture(scope="module")
def wide_text_server(tmp_path_factory, fast_model):
    """`ctxsearch serve` over one file with emoji and CJK before the words searched."""
    from indexer import Indexer

    folder = tmp_path_factory.mktemp("page-wide") / "notes"
    folder.mkdir()
    (folder / "reptiles.txt").write_text(WIDE_TEXT)
    index = folder.parent / "index"
    Indexer(index, model=fast_model).index_folder(folder)
    with running_server(index, folder.parent / "server.log") as server:
        yield server


@pytest.mark.parametrize(("term", "marked"), [("tortoise", 2), ("道路", 1)])
def test_highlights_mark_the_words_after_emoji_and_cjk(browser, wide_text_server, term, marked):
    """The API's offsets count code points and the page counted UTF-16 units: each
    emoji before a highlight moved it one character. A Latin word and a CJK one."""
    hit = httpx.get(
        f"{wide_text_server.url}/search", params={"q": term, "mode": "lexical", "k": 1}
    ).json()["results"][0]
    text = httpx.get(f"{wide_text_server.url}/documents/{hit['document_id']}").json()["text"]
    assert hit["start"] > 400  # past the emoji of the passages before it
    opened = browser.new_page()
    try:
        opened.goto(f"{wide_text_server.url}/?{urlencode({'q': term, 'mode': 'lexical'})}")
        marks = opened.locator("[data-mode=lexical] .result").first.locator(".snippet mark")
        expect(marks.first).to_be_visible()
        assert marks.all_text_contents() == [term] * marked
        snippet = opened.locator("[data-mode=lexical] .snippet").first.inner_text()
        assert snippet == hit["snippet"]
        opened.locator("[data-mode=lexical] .title").first.click()
        dialog = opened.locator("dialog#document")
        expect(dialog).to_be_visible()
        assert dialog.locator("pre mark").inner_text() == text[hit["start"] : hit["end"]]
        line = text[hit["match_start"] : hit["match_end"]]
        assert term in line
        assert dialog.locator("pre mark .match-line").inner_text() == line
        assert dialog.locator("pre").inner_text() == text
    finally:
        opened.close()

"""The search page at /, driven end to end in Debian's headless Chromium by Playwright."""

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.conftest import TOKEN

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

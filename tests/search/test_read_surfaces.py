"""The read surfaces agree: the same request through Python (`Searcher`), the command line
(`ctxsearch query/similar --json`), HTTP (a real `ctxsearch serve`) and MCP (a real
`ctxsearch mcp --http`, the SDK's client) returns the same hits (paths exactly as stored,
ranks, chunk ids, snippets, scores) or is refused by every one of them.

Hypothesis draws the requests (mode, k, every passage or one per document, `under` a
stored folder or file, path globs, types, `where` filters on records' metadata) over a
small fixed index (the `hashed-words` encoder: the model is not the point), and `similar`
of stored documents, and pages whole documents through MCP `read`. Besides agreeing, the
answers must keep their scope: a `where` lets only records through, and only those whose
metadata it allows (an empty set of allowed values: none); `under` only what is under it.
Paging a document as `read` says (from its start, then from each page's `next_start`
given back as `start`, while the page is `truncated`) gives back exactly its stored text.

The default suite runs a few examples (seeded: `derandomize`); the soak profile (`-m
soak`) many more, at random ($CTXSEARCH_ORACLE_SEED seeds it). The parts of a defect not
fixed yet (`tests.support.known_defects.STILL_OPEN`) are left out of the requests drawn,
and each has a focused test here that must find it (strict xfail) until its fix lands,
and must pass after.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from indexer import Indexer
from indexer.errors import CtxsearchError
from search.cli import cli
from search.engine import Searcher
from search.modes import MODES
from search.similar import SIMILAR_MODES
from tests.support.crash_harness import WORDS
from tests.support.known_defects import STILL_OPEN
from tests.support.mcp_client import http_server, http_session
from tests.support.oracle_tree import new_text
from tests.support.serving import running_server

# The defects of these surfaces not fixed yet (see `tests.support.known_defects`).
SURFACE_DEFECTS = {
    "empty-allowed-list": "issue 41 item 3: an empty set of allowed values ({'tenant': []}, "
    "{'tenant': {}}, {'tenant': {'=': []}}) removes the filter: every record and file",
    "cli-link-paths": "issue 41 item 12: the command line resolves symlinks where the "
    "index stores the link's path: `similar LINK` finds the target's neighbours, `--under "
    "LINK` the target's passages",
    "read-paging": "issue 41 item 13: MCP `read` paged as documented (end_line + 1) loses "
    "text: an HTML page's passages past the cut, the rest of a line longer than max_chars",
}
OPEN = STILL_OPEN & SURFACE_DEFECTS.keys()
QUERIES = ("river bank erosion", "coffee from java", "tower crane steel", "apple orchard")
TENANTS = ("acme", "globex", "initech")
RECORDS = [
    {
        "id": f"r{number}",
        "text": " ".join(new_text(".txt", 80 + number, 30).split("\n\n")),
        "metadata": {"tenant": TENANTS[number % 3], "year": 2021 + number % 4},
    }
    for number in range(9)
]
# An HTML page of many paragraphs, and a Markdown line longer than most pages read.
PARAGRAPHS = 120
LONG_LINE_WORDS = 700
_SEED = os.environ.get("CTXSEARCH_ORACLE_SEED")


def profile(examples: int, shrink: bool = True) -> settings:
    """Seeded settings (derandomized unless $CTXSEARCH_ORACLE_SEED; no example database);
    a known defect's test stops at its first failure (no shrinking)."""
    return settings(
        max_examples=int(os.environ.get("CTXSEARCH_ORACLE_EXAMPLES", examples)),
        deadline=None,
        derandomize=_SEED is None,
        database=None,
        phases=tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate),
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def seeded(test: Callable) -> Callable:
    """`test` seeded with $CTXSEARCH_ORACLE_SEED, when it is set."""
    return seed(int(_SEED))(test) if _SEED is not None else test


# -- the index and its surfaces ----------------------------------------------------------


def write_corpus(folder: Path) -> None:
    """Markdown, text and HTML files in two folders, a symlink to one of them (stored under
    the link's path), an HTML page of many paragraphs and a Markdown line of thousands of
    characters (for paging)."""
    (folder / "sub").mkdir(parents=True)
    long_line = " ".join(random.Random(2).choice(WORDS) for _ in range(LONG_LINE_WORDS))
    (folder / "guide.md").write_text(
        new_text(".md", 1, 150)
        + f"\n## A long line\n\n{long_line}.\n\n## After it\n\n"
        + new_text(".txt", 3, 60)
    )
    (folder / "notes.txt").write_text(new_text(".txt", 4, 150))
    page = "".join(
        f"<p>Paragraph {n}: {new_text('.txt', 100 + n, 20).strip()}</p>\n"
        for n in range(PARAGRAPHS)
    )
    head = "<head><title>Many paragraphs</title></head>"
    (folder / "page.html").write_text(f"<html>{head}<body><h1>Many</h1>\n{page}</body></html>")
    (folder / "sub" / "deep.md").write_text(new_text(".md", 5, 150))
    (folder / "sub" / "other.txt").write_text(new_text(".txt", 6, 150))
    (folder / "sub" / "more.html").write_text(new_text(".html", 7, 150))
    (folder / "linked.md").symlink_to(Path("sub", "deep.md"))


@dataclass(frozen=True)
class Surfaces:
    """The index, what it stores, and the servers answering for it."""

    index: Path
    http: str  # `ctxsearch serve`'s URL
    mcp: str  # `ctxsearch mcp --http`'s URL
    folders: tuple[str, ...]  # stored folders (the root and the one under it)
    files: tuple[str, ...]  # stored file paths, as stored (a symlink's path included)


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory, fast_model) -> Iterator[Surfaces]:
    """The corpus indexed with its records, served by `ctxsearch serve` and `ctxsearch mcp
    --http` for the module's tests."""
    work = tmp_path_factory.mktemp("surfaces")
    corpus = work / "corpus"
    write_corpus(corpus)
    index = work / "index"
    indexer = Indexer(index, model=fast_model)
    indexer.index_folder(corpus)
    indexer.upsert_records(RECORDS)
    with Searcher(index) as searcher:
        description = searcher.store.describe()
    root = description["folders"][0]["root"]
    files = tuple(sorted(str(path) for path in _stored_files(index)))
    with (
        running_server(index, work / "serve.log") as server,
        http_server(index) as mcp_url,
    ):
        yield Surfaces(index, server.url, mcp_url, (root, f"{root}/sub"), files)


def _stored_files(index: Path) -> list[str]:
    with sqlite3.connect(index / "ctxsearch.sqlite") as connection:
        rows = connection.execute("SELECT path FROM documents WHERE metadata_json IS NULL")
        return [path for (path,) in rows]


REFUSED = "refused"  # what a surface answered when it refused the request (any surface)


def through_python(surfaces: Surfaces, call: str, arguments: dict) -> Any:
    """`Searcher.search` or `Searcher.similar` (a library error: refused)."""
    try:
        with Searcher(surfaces.index) as searcher:
            if call == "search":
                return _shown(searcher.search(**arguments).to_dict())
            item = arguments.pop("item")
            return _shown(searcher.similar(item, **arguments).to_dict())
    except CtxsearchError:
        return REFUSED


def through_cli(surfaces: Surfaces, call: str, arguments: dict) -> Any:
    """`ctxsearch query` or `ctxsearch similar` with --json (exit 2: refused)."""
    arguments = dict(arguments)
    if call == "search":
        args = ["query", arguments.pop("query")]
    else:
        args = ["similar", arguments.pop("item")]
    args += ["--index", str(surfaces.index), "--json"]
    for name, value in arguments.items():
        flag = {"file_type": "--type", "k": "-k"}.get(name, "--" + name.replace("_", "-"))
        if isinstance(value, bool):
            args += [flag] if value else []
        elif isinstance(value, (list, tuple)):
            for one in value:
                args += [flag, str(one)]
        else:
            args += [flag, str(value)]
    result = CliRunner().invoke(cli, args)
    if result.exit_code == 2:
        return REFUSED
    assert result.exit_code == 0, result.output
    return _shown(json.loads(result.stdout))


def through_http(surfaces: Surfaces, call: str, arguments: dict) -> Any:
    """`POST /search` with a JSON body, or `GET /similar` (a 4xx: refused)."""
    names = {"query": "q", "file_type": "type"}
    given = {names.get(name, name): value for name, value in arguments.items()}
    if call == "search":
        answer = httpx.post(f"{surfaces.http}/search", json=given, timeout=60)
    else:
        answer = httpx.get(f"{surfaces.http}/similar", params=given, timeout=60)
    if answer.status_code in (400, 404, 422):
        return REFUSED
    assert answer.status_code == 200, answer.text
    return _shown(answer.json())


def through_mcp(surfaces: Surfaces, call: str, arguments: dict) -> Any:
    """The MCP `search` or `similar` tool, every key asked for (`detail: "full"`; the
    compact default leaves keys out: tests/search/mcp/test_mcp_for_assistants.py), a
    tool error: refused."""
    names = {"item": "path", "path": "path_glob", "file_type": "type"}
    given = {names.get(name, name): value for name, value in arguments.items()}
    given["detail"] = "full"
    answer = anyio.run(_call_tool, surfaces.mcp, call, given)
    return REFUSED if answer.is_error else _shown(answer.structured_content)


async def _call_tool(url: str, name: str, arguments: dict):  # -> mcp.types.CallToolResult
    async with http_session(url) as session:
        return await session.call_tool(name, arguments)


def _shown(response: dict) -> dict:
    """What is compared of a response: its hits, hints, filters and item, as JSON reads."""
    kept = {key: response.get(key) for key in ("results", "hints", "filters", "item")}
    return json.loads(json.dumps(kept))


SURFACES = {"python": through_python, "cli": through_cli, "http": through_http, "mcp": through_mcp}


def answers(
    surfaces: Surfaces,
    call: str,
    arguments: dict,
    cli_arguments: dict | None,
    open_defects: frozenset[str] = OPEN,
) -> Any:
    """Each surface's answer to the same request, the same one (else fail, saying which
    surface answered what): the command line's to `cli_arguments` (the request as it
    spells it; None: it cannot, or, while it resolves links, the request names one)."""
    if "cli-link-paths" in open_defects and _names_a_link(arguments):
        cli_arguments = None
    found = {
        name: ask(surfaces, call, dict(cli_arguments if name == "cli" else arguments))
        for name, ask in SURFACES.items()
        if name != "cli" or cli_arguments is not None
    }
    expected = found["python"]
    for name, answer in found.items():
        assert answer == expected, _disagreement(call, arguments, name, answer, expected)
    return expected


def _names_a_link(arguments: dict) -> bool:
    """Whether the request names a stored path that is a symlink (its item, or under)."""
    named = [arguments.get("item") or "", *arguments.get("under", ())]
    return any(os.path.islink(path) for path in named if path.startswith("/"))


def _disagreement(call: str, arguments: dict, name: str, answer: Any, expected: Any) -> str:
    def hits(shown: Any) -> Any:
        if shown == REFUSED:
            return REFUSED
        return [(h["rank"], h["path"], h["chunk_id"], h["score"]) for h in shown["results"]]

    return (
        f"{call} {arguments}: {name} answers {hits(answer)}, Python {hits(expected)}\n"
        f"{name}: {json.dumps(answer)[:1500]}\npython: {json.dumps(expected)[:1500]}"
    )


# -- requests -------------------------------------------------------------------------


def where_filters(open_defects: frozenset[str]) -> st.SearchStrategy:
    """`where` filters on the records' metadata: equalities (one value, several, none),
    comparisons of years, and the command line's strings."""
    tenants = st.sampled_from(TENANTS)
    forms = [
        st.fixed_dictionaries({"tenant": tenants}),
        st.fixed_dictionaries({"tenant": st.lists(tenants, min_size=1, max_size=2, unique=True)}),
        st.fixed_dictionaries({"year": st.fixed_dictionaries({">=": st.integers(2020, 2025)})}),
        st.lists(
            st.sampled_from(["tenant=acme", "tenant=globex", "year>=2023", "year<2023"]),
            min_size=1,
            max_size=2,
            unique=True,
        ),
    ]
    if "empty-allowed-list" not in open_defects:
        forms.append(st.sampled_from(EMPTY_ALLOWED))
    return st.one_of(forms)


EMPTY_ALLOWED = ({"tenant": []}, {"tenant": {}}, {"tenant": {"=": []}})


def cli_where(where: Any) -> list[str] | None:
    """A `where` as the command line's --where strings (None: it has no such spelling)."""
    if isinstance(where, list):
        return where
    strings = []
    for key, value in where.items():
        if isinstance(value, dict):
            if not value:
                return None
            for operator, bound in value.items():
                values = bound if isinstance(bound, list) else [bound]
                if not values:
                    return None
                strings += [f"{key}{operator}{one}" for one in values]
        elif isinstance(value, list):
            if not value:
                return None
            strings += [f"{key}={one}" for one in value]
        else:
            strings.append(f"{key}={value}")
    return strings


def allowed(metadata: dict, where: Any) -> bool:
    """Whether a record with `metadata` meets `where` (the forms `where_filters` draws)."""
    conditions: list[tuple[str, str, Any]] = []
    if isinstance(where, list):
        for text in where:
            for operator in (">=", "<", "="):
                if operator in text:
                    key, value = text.split(operator, 1)
                    conditions.append((key, operator, int(value) if key == "year" else value))
                    break
    else:
        for key, value in where.items():
            if isinstance(value, dict):
                if not value:
                    conditions.append((key, "in", []))
                for operator, bound in value.items():
                    if operator == "=":
                        conditions.append(
                            (key, "in", bound if isinstance(bound, list) else [bound])
                        )
                    else:
                        conditions.append((key, operator, bound))
            else:
                conditions.append((key, "in", value if isinstance(value, list) else [value]))
    equal: dict[str, list] = {}  # the values each key may have (an empty list: none)
    for key, operator, value in conditions:
        if operator in ("=", "in"):
            equal.setdefault(key, []).extend(value if operator == "in" else [value])
        elif key not in metadata or not _COMPARE[operator](metadata[key], value):
            return False
    return all(metadata.get(key) in values for key, values in equal.items())


_COMPARE = {">=": lambda a, b: a >= b, "<": lambda a, b: a < b}


@st.composite
def search_requests(draw, surfaces: Surfaces, open_defects: frozenset[str]) -> dict:
    request: dict[str, Any] = {
        "query": draw(st.sampled_from(QUERIES)),
        "mode": draw(st.sampled_from(MODES)),
        "k": draw(st.integers(1, 12)),
    }
    if draw(st.booleans()):
        request["all_chunks"] = True
    places = [*surfaces.folders, *surfaces.files]
    optional = {
        "under": st.lists(st.sampled_from(places), min_size=1, max_size=2, unique=True),
        "path": st.lists(
            st.sampled_from(["*.md", "sub/*", "*.html", "*.txt"]), min_size=1, max_size=2
        ),
        "file_type": st.lists(st.sampled_from(["md", "txt", "html"]), min_size=1, max_size=2),
        "where": where_filters(open_defects),
    }
    for name in draw(st.sets(st.sampled_from(sorted(optional)), max_size=2)):
        request[name] = draw(optional[name], label=name)
    return request


# -- the tests --------------------------------------------------------------------------


def check_search(surfaces: Surfaces, request: dict, open_defects: frozenset[str] = OPEN) -> None:
    """Every surface answers `request` alike, and the hits keep the request's scope."""
    spelt: dict | None = request
    if "where" in request:
        where = cli_where(request["where"])
        spelt = None if where is None else {**request, "where": where}
    shown = answers(surfaces, "search", request, spelt, open_defects)
    if shown == REFUSED:
        return
    for hit in shown["results"]:
        if "where" in request:
            assert hit["path"].startswith("record:"), f"{request}: a file {hit['path']} got through"
            record = next(r for r in RECORDS if f"record:{r['id']}" == hit["path"])
            assert allowed(record["metadata"], request["where"]), (
                f"{request}: {hit['path']} {record['metadata']} is not allowed"
            )
        for place in request.get("under", ()):
            if hit["path"] == place or hit["path"].startswith(place + "/"):
                break
        else:
            assert "under" not in request, f"{request}: {hit['path']} is under none of them"


@st.composite
def similar_requests(draw, surfaces: Surfaces) -> dict:
    request: dict[str, Any] = {
        "item": draw(st.sampled_from([*surfaces.files, "record:r1", "record:r4"])),
        "mode": draw(st.sampled_from(SIMILAR_MODES)),
        "k": draw(st.integers(1, 12)),
    }
    if draw(st.booleans()):
        request["all_chunks"] = True
    if draw(st.booleans()):
        request["under"] = [draw(st.sampled_from(surfaces.folders))]
    if draw(st.booleans()):
        request["where"] = [draw(st.sampled_from(["tenant=acme", "year>=2023"]))]
    return request


def check_similar(surfaces: Surfaces, request: dict, open_defects: frozenset[str] = OPEN) -> None:
    """Every surface finds the same documents like a stored one (as a hit names it)."""
    shown = answers(surfaces, "similar", request, request, open_defects)
    if shown != REFUSED:
        assert all(hit["path"] != request["item"] for hit in shown["results"]), request


def read_whole(surfaces: Surfaces, path: str, max_chars: int) -> tuple[list[dict], int]:
    """The pages of `read` for `path`, paged as the tool says (from its start, then, while
    a page is `truncated`, from its `next_start` given back as `start`), and the
    document id."""
    pages: list[dict] = []

    async def paging() -> None:
        async with http_session(surfaces.mcp) as session:
            arguments: dict[str, Any] = {"path": path, "start_line": 1, "max_chars": max_chars}
            while len(pages) < 1000:
                answer = await session.call_tool("read", arguments)
                assert not answer.is_error, f"read {arguments}: {answer.content[0].text}"
                page = answer.structured_content
                pages.append(page)
                if not page["truncated"]:
                    return
                assert page["next_start"] is not None, f"read {arguments}: truncated, no next_start"
                arguments = {"path": path, "start": page["next_start"], "max_chars": max_chars}

    anyio.run(paging)
    return pages, pages[0]["document_id"]


def check_paging(surfaces: Surfaces, path: str, max_chars: int) -> None:
    """The pages of a whole document, laid end to end, are exactly its stored text: each
    page at most `max_chars`, starting where the one before ended (`start`, `end`)."""
    pages, document_id = read_whole(surfaces, path, max_chars)
    with Searcher(surfaces.index) as searcher:
        stored = searcher.document(document_id).text
    position = 0
    for number, page in enumerate(pages, start=1):
        text = page["text"]
        where = f"read {path} (max_chars {max_chars}) page {number} of {len(pages)}"
        assert len(text) <= max_chars, f"{where}: {len(text)} characters"
        assert (page["start"], page["end"]) == (position, position + len(text)), (
            f"{where}: [{page['start']}, {page['end']}) after {position}, {len(text)} characters"
        )
        assert stored[position : position + len(text)] == text, (
            f"{where} is not the text at {position}: {stored[position : position + 80]!r}..., "
            f"the page starts {text[:80]!r}"
        )
        position += len(text)
    assert position == len(stored), (
        f"read {path} (max_chars {max_chars}): {len(pages)} pages end at {position} of "
        f"{len(stored)} characters; never read: {stored[position : position + 80]!r}..."
    )


def paging_cases(surfaces: Surfaces, open_defects: frozenset[str]) -> st.SearchStrategy:
    """(path, max_chars) to page: every file and a record, or, while paging loses text, only plain
    text and Markdown without the long line, read in pages longer than any of its lines."""
    if "read-paging" not in open_defects:
        paths = [*surfaces.files, "record:r1"]
        return st.tuples(st.sampled_from(paths), st.sampled_from([300, 1000, 20_000]))
    files = [p for p in surfaces.files if not p.endswith((".html", "guide.md"))]
    return st.tuples(st.sampled_from(files), st.sampled_from([4000, 20_000]))


def _with_draws(settings_: settings) -> Callable:
    return lambda test: seeded(settings_(given(data=st.data())(test)))


FAST = profile(examples=12)
SOAK = profile(examples=150)


@_with_draws(FAST)
def test_search_is_the_same_through_every_surface(surfaces, data):
    check_search(surfaces, data.draw(search_requests(surfaces, OPEN), label="request"))


@_with_draws(profile(examples=6))
def test_similar_is_the_same_through_every_surface(surfaces, data):
    check_similar(surfaces, data.draw(similar_requests(surfaces), label="request"))


@_with_draws(profile(examples=4))
def test_read_pages_a_whole_document(surfaces, data):
    check_paging(surfaces, *data.draw(paging_cases(surfaces, OPEN), label="page"))


@pytest.mark.soak
@_with_draws(SOAK)
def test_every_surface_agrees_for_minutes(surfaces, data):
    what = data.draw(st.sampled_from(["search", "similar", "read"]), label="what")
    if what == "search":
        check_search(surfaces, data.draw(search_requests(surfaces, OPEN), label="request"))
    elif what == "similar":
        check_similar(surfaces, data.draw(similar_requests(surfaces), label="request"))
    else:
        check_paging(surfaces, *data.draw(paging_cases(surfaces, OPEN), label="page"))


# -- each item's promise, focused: a strict xfail while its defect is open ---------------


def holds_once_fixed(name: str):  # -> a pytest mark
    """The test of a promise whose defect is still open (`STILL_OPEN`) must fail (strict
    xfail); once its fix merges and the name leaves the list, it must pass."""
    return pytest.mark.xfail(name in OPEN, strict=True, reason=SURFACE_DEFECTS[name])


@holds_once_fixed("empty-allowed-list")
@_with_draws(profile(examples=12, shrink=False))
def test_an_empty_set_of_allowed_values_lets_nothing_through(surfaces, data):
    request = data.draw(search_requests(surfaces, frozenset()), label="request")
    request["where"] = data.draw(st.sampled_from(EMPTY_ALLOWED), label="where")
    check_search(surfaces, request, OPEN - {"empty-allowed-list"})


@holds_once_fixed("cli-link-paths")
@_with_draws(profile(examples=12, shrink=False))
def test_every_surface_takes_a_link_path_as_stored(surfaces, data):
    link = next(path for path in surfaces.files if os.path.islink(path))
    if data.draw(st.booleans(), label="similar"):
        request = data.draw(similar_requests(surfaces), label="request")
        check_similar(surfaces, {**request, "item": link}, OPEN - {"cli-link-paths"})
    else:
        request = data.draw(search_requests(surfaces, OPEN), label="request")
        request.pop("where", None)  # a where lets no file through
        check_search(surfaces, {**request, "under": [link]}, OPEN - {"cli-link-paths"})


@holds_once_fixed("read-paging")
@_with_draws(profile(examples=6, shrink=False))
def test_read_pages_html_and_long_lines_whole(surfaces, data):
    path = data.draw(
        st.sampled_from([p for p in surfaces.files if p.endswith((".html", "guide.md"))]),
        label="path",
    )
    check_paging(surfaces, path, data.draw(st.sampled_from([300, 1000]), label="max_chars"))

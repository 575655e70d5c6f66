"""Crowding: a table of contents, or a document holding a large share of the passages
searched, does not take the first places of a query or of `similar` (search.navigation,
search.large_documents, search.placing), on every backend."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.store.base import StoredChunk
from search.cli import cli
from search.engine import Searcher
from search.large_documents import LARGE_PASSAGES
from search.navigation import is_navigation
from search.placing import HELD_BELOW, Places

# A small book: each chapter has its title and section titles and its own prose.
CHAPTERS = {
    "ch01-otters.md": (
        "Otters",
        ["Where otters live", "What otters eat"],
        "Otters live along rivers and coasts and build dens in the banks. They eat fish, "
        "crabs and frogs, and hold hands while they sleep so that they do not drift apart.",
    ),
    "ch02-herons.md": (
        "Herons",
        ["How herons hunt", "Heron nests"],
        "Herons stand still in the shallows and wait for fish to come close. They nest "
        "together in tall trees, and both parents feed the young for weeks.",
    ),
    "ch03-beavers.md": (
        "Beavers",
        ["Beaver dams", "Beaver lodges"],
        "Beavers cut trees with their teeth and build dams of branches and mud. Behind the "
        "dam the water rises, and the family lives in a lodge with an underwater door.",
    ),
    "ch04-kingfishers.md": (
        "Kingfishers",
        ["How kingfishers dive", "Kingfisher burrows"],
        "Kingfishers dive from a branch into the water and come up with a small fish. They "
        "dig burrows in sandy river banks and raise their chicks in the dark.",
    ),
    "ch05-salmon.md": (
        "Salmon",
        ["Salmon runs", "Where salmon spawn"],
        "Salmon swim up the river they were born in, leaping over falls, and spawn in the "
        "gravel of its upper reaches before they die.",
    ),
}


def _book(folder):
    """The chapters, and an mdBook `SUMMARY.md` linking to them and their sections."""
    folder.mkdir(parents=True)
    summary = ["# Summary", ""]
    for name, (title, sections, prose) in CHAPTERS.items():
        sentences = prose.split(". ")
        body = [f"# {title}", "", sentences[0] + "."]
        summary.append(f"- [{title}]({name})")
        for section, sentence in zip(sections, sentences[1:] + sentences[:1], strict=False):
            body += ["", f"## {section}", "", sentence.rstrip(".") + "."]
            anchor = section.lower().replace(" ", "-")
            summary.append(f"  - [{section}]({name}#{anchor})")
        (folder / name).write_text("\n".join(body) + "\n")
    (folder / "SUMMARY.md").write_text("\n".join(summary) + "\n")
    return folder


def test_a_table_of_contents_takes_no_first_place_of_similar_or_a_query(
    any_index, tmp_path, fast_model
):
    folder = _book(tmp_path / "book")
    Indexer(any_index, model=fast_model).index_folder(folder)
    summary = str(folder / "SUMMARY.md")
    with Searcher(any_index) as searcher:
        for chapter in ("ch01-otters.md", "ch02-herons.md", "ch03-beavers.md"):
            for options in ({}, {"all_chunks": True}, {"mode": "static"}):
                hits = searcher.similar(str(folder / chapter), k=5, **options).results
                paths = [hit.path for hit in hits]
                assert summary not in paths[:HELD_BELOW], (chapter, options, paths)
                assert summary in paths, (chapter, options)  # still found, further down
        for mode in ("hybrid", "lexical", "contextual"):
            paths = [hit.path for hit in searcher.search("where otters live", mode=mode).results]
            assert paths[0] == str(folder / "ch01-otters.md"), mode
            # after every other hit when fewer than HELD_BELOW match (lexical: 2)
            assert paths.index(summary) == min(HELD_BELOW, len(paths) - 1), (mode, paths)
        # with nothing else to show, it is shown
        only = searcher.search("otters", mode="lexical", path=["SUMMARY.md"]).results
        assert [hit.path for hit in only] == [summary]
    # the command line places hits as the library does
    shown = CliRunner().invoke(
        cli, ["similar", str(folder / "ch01-otters.md"), "--index", str(any_index), "--json"]
    )
    paths = [hit["path"] for hit in json.loads(shown.stdout)["results"]]
    assert summary in paths[HELD_BELOW:], paths


@pytest.mark.parametrize(
    "text, path",
    [
        (
            "# Summary\n\n- [Getting Started](ch01.md)\n  - [Installation](ch01-01.md)\n"
            "  - [Hello, World!](ch01-02.md)\n- [Guessing Game](ch02.md)\n",
            "SUMMARY.md",
        ),
        (
            "User's Guide\n\n.. toctree::\n   :maxdepth: 2\n\n   installation\n   quickstart\n"
            "   tutorial/index\n   templating\n",
            "index.rst",
        ),
        (  # Python's general index, as read from HTML: names with their empty parentheses
            "abs() (built-in function)\n\naccept() (socket.socket method)\n\n"
            "access() (in module os)\n\nacos() (in module cmath)\n",
            "genindex-A.html",
        ),
        (  # Python's contents.html, as read from HTML
            "7.2. Reading and Writing Files\n\n7.2.1. Methods of File Objects\n\n"
            "7.2.2. Saving structured data with json\n\n8. Errors and Exceptions\n\n"
            "8.1. Syntax Errors\n",
            "contents.html",
        ),
    ],
)
def test_tables_of_contents_are_navigation(text, path):
    assert is_navigation(text, path)


@pytest.mark.parametrize(
    "text, path",
    [
        (
            "Otters live along rivers.\nThey eat fish, crabs and frogs,\nand hold hands "
            "while they sleep.\nThey do not drift apart.\n",
            "otters.md",
        ),
        (  # code: short lines, no full stops
            "```python\nimport socket\ntimeout = 10\nsocket.setdefaulttimeout(timeout)\n"
            'req = Request("http://example.org")\n```\n',
            "howto.md",
        ),
        ("- [Docs](index.md)\n- [Blog](blog.md)\n", "nav.md"),  # two titles say little
        (  # code in an HTML page, read with its inline elements joined: few code symbols
            "Watch a file descriptor for read events\n\nimport asyncio\n"
            "from socket import socketpair\n\nasync def main():\n"
            "    rsock, wsock = socketpair()\n    loop = asyncio.get_running_loop()\n"
            "    logger.setLevel(logging.DEBUG)\n    loop.add_reader(rsock, reader)\n",
            "asyncio-eventloop.html",
        ),
        (  # a console session
            "$ fastapi run main.py\n\nStarting production server\n\n"
            "Searching for package file structure\n$ uvicorn main:app --workers 4\n",
            "manually.md",
        ),
    ],
)
def test_prose_code_and_short_lists_are_not(text, path):
    assert not is_navigation(text, path)


def _chunk(chunk_id: int, document_id: int) -> StoredChunk:
    return StoredChunk(chunk_id, document_id, f"/d/{document_id}.md", 0, 0, 1, "")


def test_places_hold_navigation_below_the_first_places_in_its_order():
    navigation = {1, 2}
    places = Places(5, lambda chunk: chunk.id in navigation, every_passage=True)
    for chunk_id in range(1, 8):
        places.offer(_chunk(chunk_id, chunk_id), -chunk_id)
    assert [chunk.id for chunk, _ in places.hits()] == [3, 4, 5, 1, 2]
    fewer = Places(5, lambda chunk: chunk.id in navigation, every_passage=True)
    for chunk_id in (1, 2, 3):
        fewer.offer(_chunk(chunk_id, chunk_id), 0.0)
    assert not fewer.full and [chunk.id for chunk, _ in fewer.hits()] == [3, 1, 2]


def test_a_document_whose_best_passage_is_held_is_shown_by_its_next():
    places = Places(3, lambda chunk: chunk.id == 1)
    for chunk_id, document_id in ((1, 10), (2, 20), (3, 10), (4, 30), (5, 40)):
        places.offer(_chunk(chunk_id, document_id), 0.0)
    assert [chunk.id for chunk, _ in places.hits()] == [2, 3, 4]


def _changelog(folder, releases: int = 3 * LARGE_PASSAGES) -> None:
    """A huge, repetitive changelog beside the book: every release names its chapters
    (small releases are merged into passages: about 2 per passage)."""
    titles = [title.lower() for title, _, _ in CHAPTERS.values()]
    lines = ["# Changes", ""]
    for release in range(releases, 0, -1):
        first, second = titles[release % 5], titles[(release + 2) % 5]
        lines += [
            f"## Version 1.{release}",
            "",
            f"- Fix where {first} live and what {first} eat in the {second} chapter.",
            f"- Update how {second} hunt, #{release}.",
            "",
        ]
    (folder / "CHANGES.md").write_text("\n".join(lines))


def test_a_huge_changelog_takes_no_first_place_of_similar_or_a_query(
    any_index, tmp_path, fast_model
):
    folder = _book(tmp_path / "book")
    (folder / "SUMMARY.md").unlink()
    _changelog(folder)
    Indexer(any_index, model=fast_model).index_folder(folder)
    changes = str(folder / "CHANGES.md")
    with Searcher(any_index) as searcher:
        for mode in ("hybrid", "lexical", "contextual"):
            for query in ("where otters live", "how herons hunt", "what beavers eat"):
                paths = [hit.path for hit in searcher.search(query, mode=mode).results]
                # after every other hit when fewer than HELD_BELOW match (lexical)
                assert paths.index(changes) >= min(HELD_BELOW, len(paths) - 1), (mode, paths)
            passages = searcher.search("how herons hunt", mode=mode, all_chunks=True).results
            assert passages[0].path == str(folder / "ch02-herons.md"), mode
        for chapter in ("ch01-otters.md", "ch02-herons.md"):
            paths = [hit.path for hit in searcher.similar(str(folder / chapter)).results]
            assert changes not in paths[:HELD_BELOW], (chapter, paths)
        # searched alone, it is first
        alone = searcher.search("how herons hunt", path=["CHANGES.md"]).results
        assert [hit.path for hit in alone] == [changes]


def test_a_word_only_the_huge_changelog_holds_is_found_there(any_index, tmp_path, fast_model):
    """What the user typed is no chance: the passage of a swamping file that holds it
    exactly (a rare word, search.exact_evidence) takes its place among the first hits
    (a word just added at the top of a big changelog was held below them)."""
    folder = _book(tmp_path / "book")
    (folder / "SUMMARY.md").unlink()
    _changelog(folder)
    changes = folder / "CHANGES.md"
    changes.write_text(
        changes.read_text().replace(
            "# Changes\n\n", "# Changes\n\n## Version 2.0\n\n- Add the StreamingFormParser.\n\n"
        )
    )
    Indexer(any_index, model=fast_model).index_folder(folder)
    with Searcher(any_index) as searcher:
        for all_chunks in (False, True):
            hits = searcher.search("StreamingFormParser", k=3, all_chunks=all_chunks).results
            assert str(changes) in [hit.path for hit in hits], all_chunks
        # the rest of the changelog still waits below the first places
        paths = [hit.path for hit in searcher.search("how herons hunt").results]
        assert paths.index(str(changes)) >= HELD_BELOW, paths

"""One hit per content: files with the same extracted text are one hit, whose
`duplicates` lists the other paths, on every backend."""

from __future__ import annotations

import json

from click.testing import CliRunner

from indexer import Indexer
from search.cli import cli
from search.engine import Searcher

OTTERS = "Otters hold hands while they sleep so that they do not drift apart.\n"
QUERY = "otters and herons sleep"
HERONS = "Herons stand still in the shallows and wait for fish to come close.\n"


def _copies(tmp_path):
    folder = tmp_path / "docs"
    (folder / "backup").mkdir(parents=True)
    (folder / "otters.txt").write_text(OTTERS)
    (folder / "backup" / "otters copy.txt").write_text(OTTERS)
    (folder / "herons.txt").write_text(HERONS)
    return folder


def test_two_copies_of_a_file_are_one_hit_listing_the_other(any_index, tmp_path, tiny_model_dir):
    folder = _copies(tmp_path)
    Indexer(any_index, model=str(tiny_model_dir)).index_folder(folder)
    with Searcher(any_index) as searcher:
        for mode in ("lexical", "hybrid", "contextual"):
            hits = searcher.search(QUERY, mode=mode, k=2).results
            assert len(hits) == 2, mode  # the copy does not take a place of k
            otters = next(hit for hit in hits if "otters" in hit.path)
            [other] = otters.duplicates
            assert {otters.path, other} == {
                str(folder / "otters.txt"),
                str(folder / "backup" / "otters copy.txt"),
            }
            assert next(hit for hit in hits if hit is not otters).duplicates == []
        # every chunk of the copies, still one of them
        chunks = searcher.search(QUERY, mode="lexical", k=5, all_chunks=True).results
        assert len([hit for hit in chunks if "otters" in hit.path]) == 1
        # a filter that leaves one copy out lists none
        under = searcher.search("otters", mode="lexical", k=2, under=[str(folder / "backup")])
        assert [hit.duplicates for hit in under.results] == [[]]


def test_the_table_says_also_in_n_other_files(tmp_path, tiny_model_dir):
    folder = _copies(tmp_path)
    (folder / "third.txt").write_text(OTTERS)
    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).index_folder(folder)
    args = ["query", QUERY, "--index", str(index), "--mode", "lexical", "-k", "2"]
    table = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert "also in 2 other files" in table.stdout
    shown = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)["results"]
    assert sorted(len(hit["duplicates"]) for hit in shown) == [0, 2]


def test_old_rows_without_a_text_hash_fall_back_to_the_file_hash(tmp_path, tiny_model_dir):
    import sqlite3

    from indexer.store.local.index_files import DATABASE_FILE

    folder = _copies(tmp_path)
    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).index_folder(folder)
    with sqlite3.connect(index / DATABASE_FILE) as connection:
        connection.execute("UPDATE documents SET text_sha256 = NULL")
    connection.close()
    with Searcher(index) as searcher:
        hits = searcher.search(QUERY, mode="lexical", k=2).results
    assert sorted(len(hit.duplicates) for hit in hits) == [0, 1]


def test_the_copy_first_in_path_order_stands_for_the_others_in_every_mode(
    any_index, tmp_path, tiny_model_dir
):
    """Copies score alike, so which one a mode ranked first named the hit: the path shown
    changed with the mode and with the order files were indexed in."""
    folder = tmp_path / "docs"
    (folder / "zoo").mkdir(parents=True)
    (folder / "zoo" / "otters.md").write_text("# Otters\n\n" + OTTERS)
    (folder / "herons.txt").write_text(HERONS)
    indexer = Indexer(any_index, model=str(tiny_model_dir))
    indexer.index_folder(folder)
    (folder / "archive").mkdir()
    (folder / "archive" / "otters.md").write_text("# Otters\n\n" + OTTERS)  # indexed later
    indexer.index_folder(folder)
    with Searcher(any_index) as searcher:
        for mode in ("lexical", "hybrid", "contextual", "static"):
            otters = next(
                h for h in searcher.search(QUERY, mode=mode, k=2).results if "otters" in h.path
            )
            assert (otters.path, otters.duplicates) == (
                str(folder / "archive" / "otters.md"),
                [str(folder / "zoo" / "otters.md")],
            ), mode
            assert (otters.heading, otters.line, otters.end_line) == ("Otters", 1, 3), mode


def test_similar_leaves_out_the_items_copies_and_collapses_copied_neighbours(
    any_index, tmp_path, fast_model
):
    """The item's own copies are no neighbours (they are listed as the item's
    `duplicates`), and copies of a neighbour are one hit listing the others, as in a query."""
    folder = _copies(tmp_path)
    (folder / "backup" / "herons copy.txt").write_text(HERONS)
    (folder / "otters and herons.txt").write_text(OTTERS + HERONS)
    Indexer(any_index, model=fast_model).index_folder(folder)
    copy, herons = folder / "backup" / "otters copy.txt", folder / "herons.txt"
    with Searcher(any_index) as searcher:
        for options in ({}, {"line": 1}, {"all_chunks": True}):
            response = searcher.similar(str(folder / "otters.txt"), k=5, **options)
            hits = response.results
            assert [hit.path for hit in hits] == [
                str(folder / "otters and herons.txt"),
                str(folder / "backup" / "herons copy.txt"),
            ], options
            assert hits[1].duplicates == [str(herons)] and hits[0].duplicates == []
            assert response.item.duplicates == [str(copy)], options
        # a filter that leaves the copy out lists none
        scoped = searcher.similar(str(folder / "otters.txt"), under=[str(herons)])
        assert scoped.item.duplicates == [] and [h.path for h in scoped.results] == [str(herons)]
    shown = CliRunner().invoke(
        cli, ["similar", str(folder / "otters.txt"), "--index", str(any_index), "--json"]
    )
    assert json.loads(shown.stdout)["item"]["duplicates"] == [str(copy)]
    table = CliRunner().invoke(
        cli, ["similar", str(folder / "otters.txt"), "--index", str(any_index)]
    )
    assert "its 1 copy left out" in table.stderr and "also in 1 other file" in table.stdout

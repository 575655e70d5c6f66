"""Records from apps: upsert, delete, where filters, beside files, all or nothing.

A real (tiny, seeded) BERT, real SQLite, FAISS and PostgreSQL: `any_index` runs each
test on both backends.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer import Indexer, InvalidQuery, InvalidRecord
from search import Searcher
from search.cli import cli

MODES = ("hybrid", "contextual", "static", "lexical")


def records(count: int = 20) -> list[dict]:
    """Short notes on one subject, in two languages and three years."""
    return [
        {
            "id": f"note-{n:02d}",
            "text": f"Otters in the river number {n}: they dive, swim and eat fish {n} times.",
            "metadata": {"lang": "en" if n % 3 else "fr", "year": 2020 + n % 2, "n": n},
        }
        for n in range(count)
    ]


@pytest.fixture
def indexer(any_index, fast_model) -> Indexer:
    return Indexer(any_index, model=str(fast_model), batch_chunks=4)


def chunk_ids(searcher: Searcher, record_id: str) -> list[int]:
    found = searcher.search("otters", k=50, mode="lexical", all_chunks=True)
    return [hit.chunk_id for hit in found.results if hit.id == record_id]


def test_upsert_again_changes_only_what_changed(indexer, any_index):
    first = indexer.upsert_records(records())
    assert (first.added, first.updated, first.unchanged, first.chunks) == (20, 0, 0, 20)
    with Searcher(any_index) as searcher:
        before = chunk_ids(searcher, "note-05")
    again = Indexer(any_index).upsert_records(records())
    assert (again.added, again.updated, again.metadata_updated, again.unchanged) == (0, 0, 0, 20)
    assert again.chunks == 0 and again.query_export == ""  # no model loaded, nothing encoded
    changed = records()
    changed[5]["text"] = "Herons stand still in the shallows and spear fish."
    changed[6]["metadata"] = {"lang": "de"}
    third = indexer.upsert_records(changed[4:8])
    assert (third.updated, third.metadata_updated, third.unchanged, third.chunks) == (1, 1, 2, 1)
    assert third.total_documents == 20
    with Searcher(any_index) as searcher:
        assert chunk_ids(searcher, "note-05") == []  # its new text has no otters
        heron = searcher.search("herons shallows", k=1, mode="lexical").results[0]
        assert heron.id == "note-05" and heron.path == "record:note-05"
        assert heron.chunk_id not in before
        assert heron.metadata == {"lang": "en", "year": 2021, "n": 5}
        german = searcher.search("otters", k=5, where={"lang": "de"}).results
        assert [(hit.id, hit.metadata) for hit in german] == [("note-06", {"lang": "de"})]
        document = searcher.document(heron.document_id).to_dict()
        assert document["record_id"] == "note-05" and document["metadata"]["n"] == 5
        assert document["text"] == changed[5]["text"]


def self_score(index: Path, name: str, text: str) -> float:
    """The contextual score of `text` against the document it is the text of (a file
    name or a record id)."""
    with Searcher(index) as searcher:
        hits = searcher.search(text, k=50, mode="contextual").results
    return next(hit.score for hit in hits if name in (hit.id, Path(hit.path).name))


def test_a_long_lived_writer_follows_an_index_replaced_under_it(tmp_path, fast_model):
    """A writer that lives on (`serve --writable`, `watch`) encodes with the encoders of
    the index it writes into now, not of the one it first wrote into."""
    index, docs = tmp_path / "ix", tmp_path / "docs"
    docs.mkdir()
    writer = Indexer(index, model=str(fast_model))
    writer.upsert_records(records(2))  # its encoders: mean pooling
    shutil.rmtree(index)
    Indexer(index, model=str(fast_model), pooling="cls").upsert_records(records(1))
    heron = "Herons stand still in the shallows and spear fish."
    writer.upsert_records([{"id": "heron", "text": heron}])
    assert self_score(index, "heron", heron) == pytest.approx(1.0, abs=0.01)
    egrets = "Egrets follow the cattle across the wet field."
    (docs / "egrets.md").write_text(egrets)
    writer.index_folder(docs)
    assert self_score(index, "egrets.md", egrets) == pytest.approx(1.0, abs=0.01)
    shutil.rmtree(index)  # gone: the writer makes a new index with its own settings (mean)
    writer.upsert_records([{"id": "heron", "text": heron}])
    with Searcher(index) as searcher:
        assert searcher.manifest.pooling == "mean"
    assert self_score(index, "heron", heron) == pytest.approx(1.0, abs=0.01)


def test_delete_by_id_says_what_it_did_not_find(indexer, any_index):
    indexer.upsert_records(records(5))
    deleted = indexer.delete_records(["note-01", "note-03", "nobody", "note-01"])
    assert (deleted.deleted, deleted.not_found, deleted.removed_chunks) == (2, ["nobody"], 2)
    assert deleted.total_documents == 3
    nothing = indexer.delete_records(["nobody"])
    assert (nothing.deleted, nothing.not_found, nothing.total_documents) == (0, ["nobody"], 3)
    with Searcher(any_index) as searcher:
        found = {hit.id for hit in searcher.search("otters", k=10, mode="lexical").results}
    assert found == {"note-00", "note-02", "note-04"}


@pytest.mark.parametrize("mode", MODES)
def test_where_returns_k_hits_whenever_k_records_match(indexer, any_index, notes, mode):
    indexer.index_folder(notes)  # files: no metadata, so a where leaves them out
    indexer.upsert_records(records(30))
    with Searcher(any_index) as searcher:
        for where, expected in (({"lang": "fr"}, 10), (["lang=en", "year=2021"], 10)):
            hits = searcher.search("otters fish", k=expected, mode=mode, where=where).results
            assert len(hits) == expected, (mode, where)
            wanted = dict(pair.split("=") for pair in where) if isinstance(where, list) else where
            for hit in hits:
                assert all(str(hit.metadata[key]) == value for key, value in wanted.items())
        many = searcher.search("otters fish", k=50, mode=mode, where={"lang": "fr"}).results
        assert len(many) == 10  # exactly the ten that match, however deep it searches
        assert searcher.search("otters", k=3, mode=mode, where={"year": 2031}).results == []
        unfiltered = searcher.search("the river bank", k=40, mode=mode).results
        assert {hit.id is None for hit in unfiltered} == {True, False}  # files and records


def test_records_and_folders_share_an_index_without_touching_each_other(indexer, any_index, notes):
    indexer.index_folder(notes)
    indexer.upsert_records(records(4))
    (notes / "money.txt").unlink()
    run = indexer.index_folder(notes)
    assert run.removed == 1 and run.total_documents == 3 + 4  # the records stay
    indexer.upsert_records(records(6))
    with Searcher(any_index) as searcher:
        paths = {hit.path for hit in searcher.search("river", k=50, mode="lexical").results}
    assert "record:note-05" in paths and str(notes / "river.txt") in paths
    from indexer.runs.removal import remove_path
    from indexer.store.backends import describe_store, verify_target

    assert remove_path(any_index, notes)["removed_documents"] == 3
    described = describe_store(any_index)
    assert described["records"] == 6 and described["documents"] == 6
    assert [folder["root"] for folder in described["folders"]] == ["(records)"]
    assert verify_target(any_index).consistent


def test_a_failing_upsert_leaves_nothing(indexer, any_index):
    indexer.upsert_records(records(2))

    def fail_after_the_first_batch(event):
        if event.stage == "index" and event.chunks >= 4:
            raise RuntimeError("the app went away")

    with pytest.raises(RuntimeError):
        indexer.upsert_records(records(12)[2:], progress=fail_after_the_first_batch)
    with Searcher(any_index) as searcher:
        found = searcher.search("otters", k=50, mode="lexical").results
    assert sorted(hit.id for hit in found) == ["note-00", "note-01"]
    with pytest.raises(InvalidRecord, match="record 3: the text must be a non-empty string"):
        indexer.upsert_records([*records(2), {"id": "x", "text": "  "}])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"id": "", "text": "t"}, "record 1: the id must be a non-empty string, not ''"),
        ({"id": 7, "text": "t"}, "record 1: the id must be a non-empty string, not 7"),
        ({"id": "a"}, "record 1: the text must be a non-empty string"),
        ({"id": "a", "text": "t", "extra": 1}, "record 1: unknown field 'extra'"),
        ({"id": "a", "text": "t", "metadata": []}, "metadata must be an object"),
        (
            {"id": "a", "text": "t", "metadata": {"tags": ["x"]}},
            "metadata 'tags' must be a string, number or boolean, not list (metadata is flat)",
        ),
        ({"id": "a", "text": "t", "metadata": {"v": None}}, "not null"),
        ({"id": "a", "text": "t", "metadata": {"v": float("nan")}}, "a finite number"),
        ({"id": "a", "text": "t", "metadata": {"a=b": 1}}, "cannot hold '='"),
        ({"id": "a", "text": "t", "metadata": {"k": "v" * 501}}, "over 500 characters"),
        ({"id": "a" * 257, "text": "t"}, "the id is over 256 characters"),
        ({"id": "a", "text": "t\ud800"}, "not valid Unicode"),
        ("just text", "a record must be an object"),
    ],
)
def test_bad_records_are_refused_in_one_line_before_anything_is_written(tmp_path, record, message):
    target = tmp_path / "ix"
    with pytest.raises(InvalidRecord, match=message.replace("(", r"\(").replace(")", r"\)")):
        Indexer(target).upsert_records([record])
    assert not target.exists()


def test_bad_where_filters_and_id_lists_are_refused():
    with pytest.raises(InvalidRecord, match="record 2: the id 'a' is also record 1"):
        Indexer("/nonexistent/ix").upsert_records([{"id": "a", "text": "x"}] * 2)
    with pytest.raises(InvalidRecord, match="give a list of record ids"):
        Indexer("/nonexistent/ix").delete_records("note-01")
    from indexer.store.filters import make_filter

    for where, message in (
        (["lang"], "a where filter is key=value, not 'lang'"),
        ({"lang": [["en"]]}, "must be a string, number or boolean"),  # a list: any value
        (5, "where must be an object"),
    ):
        with pytest.raises(InvalidQuery, match=message):
            make_filter(where=where)


def run(*args: object, input: str | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_index_jsonl_upserts_a_file_and_a_bad_line_changes_nothing(tmp_path, fast_model):
    target = tmp_path / "ix"
    lines = [json.dumps(record) for record in records(6)]
    good = tmp_path / "notes.jsonl"
    good.write_text("\n".join(lines[:3]) + "\n\n" + "\n".join(lines[3:]) + "\n")
    made = run("index", "--jsonl", good, "--index", target, "--model", fast_model, "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["added"] == 6
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n" + '{"id": "z", "text": "fine"}\n{"id": "y", "text": \n')
    refused = run("index", "--jsonl", bad, "--index", target)
    assert refused.exit_code == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"Error: {bad} line 3: not a JSON object (Expecting value)"
    )
    nested = tmp_path / "nested.jsonl"
    nested.write_text('{"id": "n", "text": "t", "metadata": {"a": {"b": 1}}}\n')
    refused = run("index", "--jsonl", nested, "--index", target)
    assert refused.exit_code == 2 and f"{nested} line 1: metadata 'a'" in refused.stderr
    assert run("index", "--index", target).exit_code == 2  # neither PATH nor --jsonl
    changed = json.dumps({"id": "note-00", "text": "Herons fish.", "metadata": {"lang": "x"}})
    piped = run("index", "--jsonl", "-", "--index", target, "--json", input=changed + "\n")
    assert piped.exit_code == 0, piped.output
    summary = json.loads(piped.stdout)
    assert (summary["updated"], summary["total_documents"]) == (1, 6)
    found = run("query", "otters", "--index", target, "--where", "lang=fr", "--json", "-k", 9)
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["results"]
    assert sorted(hit["id"] for hit in hits) == ["note-03"]  # note-00 is lang x now
    assert json.loads(found.stdout)["filters"]["where"] == {"lang": "fr"}
    table = run("query", "herons", "--index", target, "--where", "lang=x", "--mode", "lexical")
    assert "record:note-00" in table.stdout and "lang=x" in table.stdout
    bad_where = run("query", "otters", "--index", target, "--where", "lang")
    assert bad_where.exit_code == 2 and "a where filter is key=value" in bad_where.stderr


def test_query_where_compares_a_number_given_as_text_as_a_number(tmp_path, fast_model):
    target = tmp_path / "ix"
    Indexer(target, model=str(fast_model)).upsert_records(records(6))
    odd = ["note-01", "note-03", "note-05"]  # year 2021
    for value in ("2021", "2021.0", "2.021e3"):
        found = run("query", "otters", "--index", target, "--where", f"year={value}", "--json")
        assert found.exit_code == 0, found.output
        assert sorted(hit["id"] for hit in json.loads(found.stdout)["results"]) == odd, value

"""Records from CSV, TSV and JSON array files as well as JSON lines (issue 27 item 7):
`index --jsonl/--records FILE`, the format from `--format` or the file's extension; the
`id` and `text` columns are the record's, the others its metadata, typed as a `where`
value from text is; a bad file is one line with its line number, and nothing is written."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner

from indexer.errors import InvalidRecord
from indexer.runs.record_files import read_records, record_format
from indexer.store.backends import store_exists
from search.cli.main import cli

CSV = (
    "id,text,year,lang,score,code\n"
    "kb-1,How to fix a flat tyre,2023,en,0.5,007\n"
    'kb-2,"Brakes, pads and cables",2021.0,fr,,12\n'
    "kb-3,Gear indexing,2024,en,1e3,x\n"
)


def run(*args: object, input: str | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_csv_columns_become_id_text_and_typed_metadata():
    records = read_records(io.BytesIO(CSV.encode()), "kb.csv", "csv")
    assert [record.id for record in records] == ["kb-1", "kb-2", "kb-3"]
    assert records[1].text == "Brakes, pads and cables"
    assert records[0].metadata == {"year": 2023, "lang": "en", "score": 0.5, "code": "007"}
    assert records[1].metadata == {"year": 2021.0, "lang": "fr", "code": 12}  # empty: left out
    assert records[2].metadata["score"] == 1000.0


def test_tsv_and_json_arrays_read_like_jsonl():
    tsv = CSV.replace(",", "\t").replace('"Brakes\t pads and cables"', "Brakes pads")
    records = read_records(io.BytesIO(tsv.encode()), "kb.tsv", "tsv")
    assert [record.metadata.get("lang") for record in records] == ["en", "fr", "en"]
    array = [{"id": "a", "text": "one", "metadata": {"n": 1}}, {"id": "b", "text": "two"}]
    records = read_records(io.BytesIO(json.dumps(array).encode()), "kb.json", "json")
    assert [(r.id, r.metadata) for r in records] == [("a", {"n": 1}), ("b", {})]


@pytest.mark.parametrize(
    ("name", "given", "expected"),
    [
        ("kb.csv", None, "csv"),
        ("KB.TSV", None, "tsv"),
        ("kb.json", None, "json"),
        ("kb.jsonl", None, "jsonl"),
        ("kb.ndjson", None, "jsonl"),
        ("stdin", None, "jsonl"),
        ("kb.txt", "csv", "csv"),
        ("kb.csv", "json", "json"),
    ],
)
def test_the_format_is_the_option_or_the_extension(name, given, expected):
    assert record_format(name, given) == expected


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("a.csv", "key,text\nk,t\n", "a.csv line 1: no id column (the columns are key, text)"),
        ("a.csv", "id,body\nk,t\n", "a.csv line 1: no text column (the columns are id, body)"),
        ("a.csv", "id,text,n\na,t,1\nb,t\nc,t,3\n", "a.csv line 3: 2 fields, the header has 3"),
        ("a.tsv", "id\ttext\na\tt\textra\n", "a.tsv line 2: 3 fields, the header has 2"),
        ("a.csv", "id,text,n,n\na,t,1,2\n", "a.csv line 1: the column n is there twice"),
        ("a.csv", "id,text\na,t\na,u\n", "a.csv line 3: the id 'a' is also on line 2"),
        ("a.csv", "id,text\n,t\n", "a.csv line 2: the id must be a non-empty string"),
        ("a.json", '[{"id": "a", "text": "t"},\n {"id": }]', "a.json line 2: not valid JSON"),
        ("a.json", '{"id": "a", "text": "t"}', "a.json: a JSON file of records holds an array"),
        ("a.json", '[{"id": "a", "text": "t"}, 5]', "a.json item 2: a record must be an object"),
    ],
)
def test_a_bad_file_is_one_line_with_its_place(name, content, message):
    with pytest.raises(InvalidRecord) as raised:
        read_records(io.BytesIO(content.encode()), name, record_format(name, None))
    assert str(raised.value).startswith(message), str(raised.value)
    assert "\n" not in str(raised.value)


def test_index_takes_csv_tsv_and_json_and_a_bad_file_writes_nothing(tmp_path, fast_model):
    target = tmp_path / "ix"
    (tmp_path / "kb.csv").write_text(CSV)
    made = run(
        "index",
        "--records",
        tmp_path / "kb.csv",
        "--index",
        target,
        "--model",
        fast_model,
        "--json",
    )
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["added"] == 3
    found = run("query", "tyre", "--index", target, "--where", "year>=2023", "--json")
    assert sorted(hit["id"] for hit in json.loads(found.stdout)["results"]) == ["kb-1", "kb-3"]
    tsv = "id\ttext\tyear\nkb-4\tChain wear\t2025\n"
    piped = run("index", "--jsonl", "-", "--format", "tsv", "--index", target, "--json", input=tsv)
    assert piped.exit_code == 0, piped.output
    assert json.loads(piped.stdout)["total_documents"] == 4
    (tmp_path / "more.json").write_text(json.dumps([{"id": "kb-5", "text": "Saddle height"}]))
    assert run("index", "--records", tmp_path / "more.json", "--index", target).exit_code == 0

    fresh = tmp_path / "fresh"
    (tmp_path / "bad.csv").write_text("id,text\na,fine\nb,ragged,row\n")
    refused = run(
        "index", "--records", tmp_path / "bad.csv", "--index", fresh, "--model", fast_model
    )
    assert refused.exit_code == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"Error: {tmp_path / 'bad.csv'} line 3: 3 fields, the header has 2"
    )
    assert not store_exists(fresh)
    unknown = run("index", "--records", tmp_path / "kb.csv", "--format", "xml", "--index", fresh)
    assert unknown.exit_code == 2 and "xml" in unknown.stderr
    folder = run("index", tmp_path, "--format", "csv", "--index", fresh)
    assert folder.exit_code == 2 and "--format" in folder.stderr

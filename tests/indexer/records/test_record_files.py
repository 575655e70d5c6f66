"""Records from CSV, TSV and JSON array files as well as JSON lines:
`index --jsonl/--records FILE`, the format from `--format` or the file's extension; the
`id` and `text` columns are the record's, the others its metadata, typed as a `where`
value from text is; a bad file is one line with its line number, and nothing is written."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner

from indexer.errors import InvalidRecord
from indexer.records.files import read_records, record_format
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


def stored_chunks(target, record_id: str) -> list:
    from indexer.store.backends import open_store

    store = open_store(target)
    try:
        with store.snapshot() as snapshot:
            [document] = snapshot.documents_at(f"record:{record_id}")
            return snapshot.document(document.id)[1]
    finally:
        store.close()


def assert_stored_as(target, record_id: str, text: str) -> None:
    """The record's passages hold `text` at their offsets, from its start to its end."""
    chunks = stored_chunks(target, record_id)
    assert all(text[chunk.start : chunk.end] == chunk.text for chunk in chunks)
    assert chunks[0].start == len(text) - len(text.lstrip())
    assert chunks[-1].end == len(text.rstrip())


def long_text(characters: int) -> str:
    words = " ".join(f"gear{n}" for n in range(characters // 5))
    return words[: characters - 1] + "."


@pytest.mark.parametrize(("name", "separator"), [("kb.csv", ","), ("kb.tsv", "\t")])
def test_a_long_text_is_read_from_csv_and_tsv_as_from_json_lines(
    tmp_path, fast_model, name, separator
):
    """Python's csv refuses a field over 131,072 characters unless told otherwise; a
    record's text may have up to 1,000,000, in every format, and one over is refused with
    the message JSON lines give."""
    import csv

    limit_before = csv.field_size_limit()
    text = long_text(233_399)
    path = tmp_path / name
    path.write_text(f"id{separator}text{separator}lang\nlong{separator}{text}{separator}en\n")
    target = tmp_path / "ix"
    made = run("index", "--records", path, "--index", target, "--model", fast_model, "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["added"] == 1
    assert_stored_as(target, "long", text)
    assert csv.field_size_limit() == limit_before  # the reader's setting is not left behind

    over = long_text(1_000_001)
    path.write_text(f"id{separator}text\nok{separator}short\nhuge{separator}{over}\n")
    jsonl = tmp_path / "kb.jsonl"
    jsonl.write_text(
        json.dumps({"id": "ok", "text": "short"}) + "\n" + json.dumps({"id": "huge", "text": over})
    )
    refused = run("index", "--records", path, "--index", target)
    assert refused.exit_code == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"Error: {path} line 3: the text is 1,000,001 characters long; the most is 1,000,000"
    )
    as_jsonl = run("index", "--records", jsonl, "--index", target)
    assert as_jsonl.stderr.strip().splitlines()[-1] == (
        f"Error: {jsonl} line 2: the text is 1,000,001 characters long; the most is 1,000,000"
    )
    assert csv.field_size_limit() == limit_before


def test_tsv_is_tab_separated_with_no_quoting_and_backslash_escapes(tmp_path, fast_model):
    """TSV is not CSV with tabs: a quote is an ordinary character (a text may start with
    one and keeps them all), and a tab, a line break or a backslash inside a field is
    written `\\t`, `\\n` (`\\r`) or `\\\\`; a backslash before anything else is itself."""
    rows = [
        ("quoted", '"Quoted" at the start, and "here" too'),
        ("lone", 'A lone " quote'),
        ("escaped", r"one\ttab\nnext line\\n and C:\data"),
    ]
    path = tmp_path / "kb.tsv"
    path.write_text("id\ttext\tnote\n" + "".join(f'{i}\t{t}\t"x"\n' for i, t in rows))
    target = tmp_path / "ix"
    made = run("index", "--records", path, "--index", target, "--model", fast_model, "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["added"] == 3
    assert_stored_as(target, "quoted", '"Quoted" at the start, and "here" too')
    assert_stored_as(target, "lone", 'A lone " quote')
    assert_stored_as(target, "escaped", "one\ttab\nnext line\\n and C:\\data")
    [chunk, *_] = stored_chunks(target, "quoted")
    assert json.loads(chunk.metadata_json) == {"note": '"x"'}
    # a CRLF file is read the same, its carriage returns ending lines
    path.write_bytes(b'id\ttext\tnote\r\nquoted\t"Quoted" at the start, and "here" too\t"x"\r\n')
    again = run("index", "--records", path, "--index", target, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["unchanged"] == 1

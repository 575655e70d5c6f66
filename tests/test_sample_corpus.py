"""The bundled sample corpus and its BEIR-layout judgements stay consistent."""

import json

from tests.conftest import SAMPLE_CORPUS


def corpus_ids():
    return {
        path.relative_to(SAMPLE_CORPUS).with_suffix("").as_posix()
        for path in SAMPLE_CORPUS.rglob("*")
        if path.is_file() and path.name not in {"queries.jsonl", "qrels.tsv"}
    }


def test_sample_corpus_is_big_enough_and_judged():
    queries = [
        json.loads(line) for line in (SAMPLE_CORPUS / "queries.jsonl").read_text().splitlines()
    ]
    lines = (SAMPLE_CORPUS / "qrels.tsv").read_text().splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore"
    qrels = [line.split("\t") for line in lines[1:]]
    ids = corpus_ids()
    assert len(ids) >= 40 and len(queries) >= 30
    assert {q for q, _, _ in qrels} == {q["_id"] for q in queries}
    assert {doc for _, doc, _ in qrels} <= ids
    assert all(int(score) > 0 for _, _, score in qrels)

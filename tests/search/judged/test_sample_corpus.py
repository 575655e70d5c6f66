"""The bundled sample corpus and its BEIR-layout judgements stay consistent."""

import json

from tests.conftest import SAMPLE_CORPUS


def corpus_ids():
    return {
        path.relative_to(SAMPLE_CORPUS).with_suffix("").as_posix()
        for path in SAMPLE_CORPUS.rglob("*")
        if path.is_file() and path.name not in {"queries.jsonl", "qrels.tsv"}
    }


def judgements(path):
    lines = path.read_text().splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore"
    return [line.split("\t") for line in lines[1:]]


def test_sample_corpus_is_big_enough_and_judged():
    queries = [
        json.loads(line) for line in (SAMPLE_CORPUS / "queries.jsonl").read_text().splitlines()
    ]
    keywords = judgements(SAMPLE_CORPUS / "qrels.tsv")
    questions = judgements(SAMPLE_CORPUS / "qrels" / "questions.tsv")
    ids = corpus_ids()
    assert len(ids) >= 40 and len(queries) >= 30
    keyword_ids = {q for q, _, _ in keywords}
    question_ids = {q for q, _, _ in questions}
    assert not keyword_ids & question_ids
    assert keyword_ids | question_ids == {q["_id"] for q in queries}
    assert len(question_ids) >= 30
    for qrels in (keywords, questions):
        assert {doc for _, doc, _ in qrels} <= ids
        assert all(int(score) > 0 for _, _, score in qrels)


def test_the_questions_are_a_split_of_their_own():
    from search.judged.collection import load_retrieval_dataset

    keywords = load_retrieval_dataset(SAMPLE_CORPUS)
    questions = load_retrieval_dataset(SAMPLE_CORPUS, "questions")
    assert keywords.corpus == questions.corpus
    assert set(keywords.queries) == set(keywords.qrels) and len(keywords.queries) == 85
    assert set(questions.queries) == set(questions.qrels) and len(questions.queries) == 50

"""`eval-index`: each search mode scored through the user's own index on a judged
collection, a BEIR folder or a folder of documents beside its queries and judgements."""

import json

from click.testing import CliRunner

from indexer import Indexer
from search.cli import cli
from tests.conftest import copy_sample_corpus

METRICS = {"ndcg@10", "mrr@10", "recall@100", "map@100"}


def beir_collection(folder):
    """Five documents and three judged queries in BEIR's layout, one id with a folder."""
    folder.mkdir()
    documents = {
        "d1": "Sourdough bread rises with wild yeast and lactic acid bacteria.",
        "d2": "A cricket bat is made of willow and knocked in before a match.",
        "banks/d3": "Central banks raise interest rates to slow inflation.",
        "d4": "Tower cranes are tied to the building and climb as it rises.",
        "d5": "Cast iron pans need oil after washing so they do not rust.",
    }
    queries = {"q1": "sourdough yeast", "q2": "willow cricket bat", "q3": "interest rates"}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in documents.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries.items())
    )
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\tbanks/d3\t1\n"
    )
    return folder


def eval_index(*args):
    result = CliRunner().invoke(cli, ["eval-index", *map(str, args), "--json", "--quiet"])
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(result.stdout)


def test_a_folder_of_documents_in_subfolders_is_scored_in_every_mode(tmp_path, fast_model):
    """The sample corpus's own judged queries, its documents indexed where they are (ids
    are paths under the folder, subfolders included)."""
    corpus = copy_sample_corpus(tmp_path / "sample_corpus")
    index = tmp_path / "ix"
    Indexer(index, model=fast_model).index_folder(corpus)
    result = eval_index(corpus, "--index", index, "--files-dir", tmp_path / "files")
    assert result["queries"] == 85 and result["documents"] >= 40
    assert not (tmp_path / "files").exists()  # the documents were indexed as they are
    assert set(result["modes"]) == {"static", "contextual", "lexical", "hybrid"}
    for figures in result["modes"].values():
        assert figures.keys() >= METRICS and all(0 <= figures[m] <= 1 for m in METRICS)
    assert result["modes"]["lexical"]["ndcg@10"] > 0.3


def test_a_beir_collection_is_written_as_files_and_its_judged_documents_found(tmp_path, fast_model):
    collection = beir_collection(tmp_path / "tiny")
    index = tmp_path / "ix"
    Indexer(index, model=fast_model).index_folder(copy_sample_corpus(tmp_path / "other"))
    result = eval_index(
        collection, "--index", index, "--files-dir", tmp_path / "files", "--modes", "lexical"
    )
    assert (tmp_path / "files" / "tiny" / "banks" / "d3.txt").exists()
    # every query's one relevant document first, the index's other documents around them
    assert result["modes"]["lexical"]["mrr@10"] == 1.0


def test_a_document_id_that_cannot_be_a_file_is_one_line(tmp_path):
    collection = beir_collection(tmp_path / "tiny")
    lines = (collection / "corpus.jsonl").read_text().replace('"d5"', '"../d5"')
    (collection / "corpus.jsonl").write_text(lines)
    arguments = [collection, "--index", tmp_path / "ix", "--files-dir", tmp_path / "files"]
    result = CliRunner().invoke(cli, ["eval-index", *map(str, arguments)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.strip().splitlines() == [
        "Error: document id '../d5' of tiny cannot be a file name: its parts may not be "
        "empty or start with a dot"
    ]
    assert not (tmp_path / "ix").exists()

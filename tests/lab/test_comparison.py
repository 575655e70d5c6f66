"""The lab's commands end to end on small real data: eval, polysemy, sts, wic,
tune-fusion and bench."""

import json

import pytest
from click.testing import CliRunner

from search.cli import cli
from tests.conftest import SAMPLE_CORPUS, SHARED_EVAL

METRIC_KEYS = {"ndcg@10", "mrr@10", "recall@100", "map@100"}


def run_json(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args] + ["--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# Every method but model2vec: distilling the real model takes minutes
# (tests/search/lab/test_classic.py distils a tiny BERT; the slow tests distil the real one).
ALL_BUT_MODEL2VEC = (
    "glove,word2vec,fasttext,static,contextual,cls,max,mean-last2,mean-last4,layers,"
    "lexical,hybrid,hybrid-rrf,hybrid-linear,hybrid-zscore"
)


def test_eval_on_the_sample_corpus_every_method_then_from_cache(tmp_path):
    work = tmp_path / "work"
    report = tmp_path / "report"
    first = run_json(
        "lab",
        "eval",
        SAMPLE_CORPUS,
        "--work-dir",
        work,
        "--methods",
        ALL_BUT_MODEL2VEC,
        "--out",
        report,
    )
    methods = first["methods"]
    assert {"static", "contextual", "cls", "max", "mean-last4", "layer-0", "layer-6"} <= set(
        methods
    )
    for values in methods.values():
        assert values.keys() >= METRIC_KEYS
        assert all(0.0 <= values[key] <= 1.0 for key in METRIC_KEYS)
    assert methods["contextual"]["ndcg@10"] > methods["static"]["ndcg@10"]
    assert methods["layer-6"]["ndcg@10"] == methods["contextual"]["ndcg@10"]
    assert {"lexical", "hybrid", "hybrid-rrf", "hybrid-linear", "hybrid-zscore"} <= set(methods)
    assert methods["lexical"]["kind"] == "lexical" and methods["lexical"]["index_bytes"] > 0
    for name in ("glove", "word2vec", "fasttext", "static"):
        assert methods[name]["kind"] == "static" and methods[name]["docs_per_second"] > 0
        assert methods[name]["ndcg@10"] < methods["contextual"]["ndcg@10"]
    assert methods["glove"]["setup_seconds"] is None and methods["glove"]["dim"] == 50
    assert methods["word2vec"]["setup_seconds"] > 0 and methods["fasttext"]["setup_seconds"] > 0
    # FastText has a vector for every query word; Word2Vec only for the corpus's words.
    assert methods["fasttext"]["query_word_coverage"] == 1.0
    assert methods["word2vec"]["query_word_coverage"] < 1.0
    assert (report / "report.md").exists() and (report / "layers.png").exists()
    assert "](static-vs-contextual.png)" in (report / "report.md").read_text()
    assert (report / "static-vs-contextual.png").stat().st_size > 10_000
    (corpus_cache,) = work.glob("sample_corpus-*")
    cached = sorted(p.name for p in corpus_cache.glob("*.faiss"))
    assert {"contextual.faiss", "static.faiss", "glove.faiss", "fasttext.faiss"} <= set(cached)
    assert len(list((work / "static-models").glob("word2vec-*"))) == 1

    stamps = {p: p.stat().st_mtime_ns for p in work.rglob("*") if p.is_file()}
    second = run_json(
        "lab", "eval", SAMPLE_CORPUS, "--work-dir", work, "--methods", "static,contextual,word2vec"
    )
    assert set(second["methods"]) == {"static", "contextual", "word2vec"}
    for name in ("contextual", "word2vec"):
        assert second["methods"][name]["ndcg@10"] == methods[name]["ndcg@10"]
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps, "re-encoded or re-trained"


def test_eval_refuses_unknown_methods_and_missing_files(tmp_path):
    result = CliRunner().invoke(
        cli, ["lab", "eval", str(SAMPLE_CORPUS), "--methods", "bogus", "--work-dir", str(tmp_path)]
    )
    assert result.exit_code == 2 and "unknown method" in result.stderr
    result = CliRunner().invoke(cli, ["lab", "eval", str(tmp_path)])
    assert result.exit_code == 2 and "queries.jsonl is missing" in result.stderr


def test_polysemy_static_is_constant_and_contextual_separates_senses(tmp_path):
    payload = run_json(
        "lab",
        "polysemy",
        "bank",
        "We sat on the bank of the river.",
        "The river bank was muddy after the flood.",
        "I deposited the cheque at the bank.",
        "--methods",
        "glove,word2vec,fasttext,static,contextual",
        "--work-dir",
        tmp_path,
    )
    assert payload["methods"] == ["glove", "word2vec", "fasttext", "static", "contextual"]
    for name in ("glove", "word2vec", "fasttext", "static"):
        assert all(value == pytest.approx(1.0) for row in payload[name] for value in row), name
    contextual = payload["contextual"]
    assert contextual[0][1] > contextual[0][2]  # river-river closer than river-money
    assert payload["vocabulary"]["word2vec"]["bank"]["in_vocabulary"] is True
    assert payload["training_sentences"] == 3 + 424


def test_polysemy_marks_a_form_a_method_has_no_vector_for(tmp_path):
    payload = run_json(
        "lab",
        "polysemy",
        "riverbank",
        "The riverbanks flooded.",
        "A riverbank path.",
        "--methods",
        "word2vec,fasttext",
        "--work-dir",
        tmp_path,
    )
    # Each form occurs once, below word2vec's min_count of 2: no vector, shown as None.
    assert payload["word2vec"] == [[None, None], [None, None]]
    assert payload["vocabulary"]["fasttext"]["riverbanks"]["built_from_ngrams"] == 34
    # FastText builds both forms from n-grams, so every cell has a value.
    assert all(value is not None for row in payload["fasttext"] for value in row)


def test_polysemy_refuses_a_sentence_without_the_word():
    result = CliRunner().invoke(cli, ["lab", "polysemy", "bank", "A river.", "The bank."])
    assert result.exit_code == 2 and "does not occur" in result.stderr


@pytest.mark.skipif(not (SHARED_EVAL / "stsb").exists(), reason="no STS-B data")
def test_sts_on_a_slice_contextual_beats_static(tmp_path):
    lines = (SHARED_EVAL / "stsb" / "sts-test.csv").read_text().splitlines()[:200]
    (tmp_path / "sts-test.csv").write_text("\n".join(lines))
    payload = run_json(
        "lab", "sts", tmp_path, "--methods", "glove,word2vec,fasttext,static,contextual",
        "--work-dir", tmp_path / "work",
    )  # fmt: skip
    assert payload["pairs"] == 200 and payload["corpus_sentences"] == 400
    assert payload["contextual"] > payload["static"] > 0
    assert payload["contextual"] > payload["glove"] > 0
    assert {"word2vec", "fasttext"} <= set(payload)


@pytest.mark.skipif(not (SHARED_EVAL / "wic").exists(), reason="no WiC data")
def test_wic_on_a_slice(tmp_path):
    for split, count in (("train", 300), ("dev", 120)):
        source = SHARED_EVAL / "wic" / split
        (tmp_path / split).mkdir()
        for suffix in ("data", "gold"):
            lines = (source / f"{split}.{suffix}.txt").read_text().splitlines()[:count]
            (tmp_path / split / f"{split}.{suffix}.txt").write_text("\n".join(lines) + "\n")
    payload = run_json(
        "lab", "wic", tmp_path, "--methods", "static,glove,fasttext,contextual", "--work-dir",
        tmp_path / "work",
    )  # fmt: skip
    methods = payload["methods"]
    assert payload["items"] == 120
    for name in ("static", "fasttext"):  # one vector per word: the same in both sentences
        assert methods[name]["auc"] == pytest.approx(0.5)
        assert methods[name]["mean_cosine"] == pytest.approx(1.0)
    # GloVe lacks a few rare target words (cosine 0 there), so its AUC is near 0.5, not at it.
    assert methods["glove"]["auc"] == pytest.approx(0.5, abs=0.05)
    assert methods["contextual"]["auc"] > 0.55
    assert {"layer-0", "layer-6"} <= set(methods)


def tiny_collection(folder):
    """A BEIR-layout collection of five documents and three judged queries, by hand."""
    folder.mkdir()
    documents = {
        "d1": "Sourdough bread rises with wild yeast and lactic acid bacteria.",
        "d2": "A cricket bat is made of willow and knocked in before a match.",
        "d3": "Central banks raise interest rates to slow inflation.",
        "d4": "Tower cranes are tied to the building and climb as it rises.",
        "d5": "Cast iron pans need oil after washing so they do not rust.",
    }
    queries = {"q1": "bread rising with yeast", "q2": "willow bat", "q3": "why rates go up"}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in documents.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries.items())
    )
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n"
    )
    return folder


def test_a_document_folder_is_tuned_on_as_search_reads_it(tmp_path):
    """A document folder's split comes from an index of it: its figures for contextual
    and for the default hybrid are those of `Searcher.search` on that index."""
    from lab.fusion_tuning import default_variant, load_split, measure
    from lab.index_splits import index_dir_of
    from search.engine import Searcher
    from search.judged.metrics import mean_metrics
    from search.modes import Mode

    split = load_split(SAMPLE_CORPUS, "questions", work_dir=tmp_path)
    assert set(split.texts) == set(split.dense) and len(split.dense) == 50
    documents = {
        path.relative_to(SAMPLE_CORPUS).with_suffix("").as_posix()
        for path in SAMPLE_CORPUS.rglob("*")
        if path.is_file()
    }
    assert set(split.doc_ids.values()) <= documents  # rows are chunks, mapped to documents
    default = default_variant()
    assert default.name == "adaptive+exact s=0.5 cos=0.6-1.0 q=0.7 d=200"
    index = index_dir_of(SAMPLE_CORPUS, tmp_path)
    with Searcher(index) as searcher:
        for mode, figure in (
            ("contextual", split.score(split.dense, Mode.CONTEXTUAL)),
            ("hybrid", measure(split, default)),
        ):
            run = {}
            for query_id, text in split.texts.items():
                hits = searcher.search(text, k=100, mode=mode).results
                run[query_id] = {
                    hit.path.removeprefix(f"{SAMPLE_CORPUS}/").rsplit(".", 1)[0]: 100.0 - hit.rank
                    for hit in hits
                }
            assert mean_metrics(run, split.qrels)["ndcg@10"] == pytest.approx(
                figure["ndcg@10"], abs=1e-9
            ), mode


def test_tune_fusion_leaves_each_collection_out(tmp_path):
    tiny = tiny_collection(tmp_path / "tiny")
    payload = run_json(
        "lab",
        "tune-fusion",
        SAMPLE_CORPUS,
        f"{SAMPLE_CORPUS}:questions",
        "--eval-only",
        f"{tiny}:test",
        "--depths",
        "100",
        "--work-dir",
        tmp_path / "work",
    )
    assert payload["splits"] == ["sample_corpus:test", "sample_corpus:questions", "tiny:test"]
    assert payload["tuned_on"] == ["sample_corpus:test", "sample_corpus:questions"]
    # leaving the sample corpus out leaves nothing to tune on: only tiny's fold runs
    [fold] = payload["folds"]
    assert fold["held_out"] == "tiny" and fold["tuned_on"] == payload["tuned_on"]
    assert set(fold["held_out_figures"]) == {"tiny:test"}
    assert fold["chosen"] in payload["variants"] and payload["chosen"] in payload["variants"]
    for label in payload["splits"]:
        parts = payload["parts"][label]
        assert payload["best_part"][label] == max(
            parts["contextual"]["ndcg@10"], parts["lexical"]["ndcg@10"]
        )
        # all dense weight: contextual's ranking, but for the support a document gets from
        # its other sections, which is hybrid's (`search.document_scores.SUPPORT`)
        dense_only = payload["variants"]["minmax w=1.0 d=100"][label]
        assert dense_only["ndcg@10"] == pytest.approx(parts["contextual"]["ndcg@10"], abs=0.01)
    assert {"minmax", "zscore", "dbsf", "rrf", "adaptive"} <= set(payload["families"])


def test_eval_without_methods_leaves_out_methods_without_their_package(model, monkeypatch):
    import sys

    from lab.evaluation import default_methods

    for module in ("model2vec", "gensim"):  # as if neither were installed
        monkeypatch.setitem(sys.modules, module, None)
    chosen, left_out = default_methods(model)
    assert left_out == ["word2vec", "fasttext", "model2vec"]
    assert {"glove", "static", "contextual", "layer-6", "hybrid-linear"} <= set(chosen)
    assert not set(left_out) & set(chosen) and "hybrid" in chosen


def test_eval_mode_option_selects_a_search_mode(tmp_path):
    payload = run_json("lab", "eval", SAMPLE_CORPUS, "--work-dir", tmp_path, "--mode", "hybrid")
    assert list(payload["methods"]) == ["hybrid"]


def test_bench_reports_ratios_against_baselines_of_the_same_run(sample_index, notes, tmp_path):
    payload = run_json(
        "lab", "bench",
        "--texts", notes,
        "--limit", "4",
        "--index", sample_index,
        "--only", "encoding,overhead,startup,faiss",
        "--faiss-sizes", "1000",
        "--out", tmp_path / "bench.json",
    )  # fmt: skip
    rows = {row["benchmark"]: row for row in payload["rows"]}
    encoder = rows["contextual encoder vs SentenceTransformer.encode"]
    assert encoder["ratio"] > 0 and encoder["baseline_seconds"] > 0 and encoder["seconds"] > 0
    assert "min cosine 1.0000" in encoder["note"] or "0.9999" in encoder["note"]
    assert rows["static encoder vs contextual encoder"]["ratio"] > 0
    reduced = rows["contextual encoder in bf16 vs SentenceTransformer.encode"]
    assert reduced["ratio"] > 0 and "min cosine 0.999" in reduced["note"]
    for mode in ("lexical", "static", "contextual", "hybrid"):
        process = rows[f"ctxsearch query --mode {mode}, whole process"]
        assert process["seconds"] > 0 and process["baseline_seconds"] > 0
    assert "query encoder onnx" in rows["ctxsearch query --mode hybrid, whole process"]["note"]
    assert {"ctxsearch --help", "ctxsearch info"} <= set(rows)
    assert rows["ctxsearch query (hybrid, one process)"]["timings"]["model_load_seconds"] > 0
    assert rows["indexing a folder vs its encoders alone"]["baseline_seconds"] > 0
    structures = {row["structure"]: row for row in payload["rows"] if "structure" in row}
    assert set(structures) == {"flat", "hnsw", "ivf", "ivfpq"}
    assert structures["flat"]["recall@10"] == 1.0 and structures["hnsw"]["recall@10"] > 0.9
    assert json.loads((tmp_path / "bench.json").read_text())["rows"] == payload["rows"]


@pytest.mark.slow
def test_bench_scaling_and_incremental_sections_run_real_index_processes(tmp_path):
    payload = run_json(
        "lab", "bench",
        "--only", "scaling,incremental",
        "--scale-sizes", "10,30",
        "--incremental-files", "20",
        "--out", tmp_path / "bench.json",
    )  # fmt: skip
    rows = {row["benchmark"]: row for row in payload["rows"]}
    assert [row["chunks"] for row in payload["rows"] if "chunks" in row] == [10, 30]
    assert all(row["peak_megabytes"] > 0 for row in payload["rows"] if "chunks" in row)
    assert rows["re-index 20 files, 1 file changed"]["seconds"] > 0
    assert (tmp_path / "bench-scaling.png").exists()


def test_bench_fusion_times_both_fusions_on_one_searcher(sample_index):
    payload = run_json(
        "lab", "bench",
        "--only", "fusion",
        "--index", sample_index,
        "--queries", SAMPLE_CORPUS / "queries.jsonl",
        "--limit", "4",
    )  # fmt: skip
    old, default, old_step, default_step = payload["rows"]
    assert old["benchmark"] == "hybrid query, old fusion" and old["queries"] == 4
    assert default["benchmark"] == "hybrid query, default fusion"
    assert default_step["benchmark"] == "fusion step alone, default fusion"
    assert old_step["queries"] == default_step["queries"] == 4
    for row in (old, default, old_step, default_step):
        assert 0 < row["p50_ms"] <= row["p95_ms"]
    assert default["ratio_p50"] == pytest.approx(default["p50_ms"] / old["p50_ms"], rel=0.01)
    usage = CliRunner().invoke(
        cli, ["lab", "bench", "--only", "fusion", "--index", str(sample_index)]
    )
    assert usage.exit_code == 2 and "needs --index and --queries" in usage.output


def test_bench_refuses_an_unknown_section():
    result = CliRunner().invoke(cli, ["lab", "bench", "--only", "encoding,warp"])
    assert result.exit_code == 2 and "unknown section warp" in result.output

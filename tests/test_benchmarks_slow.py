"""The published reference figures, on the full data sets (`make eval`, not `make test`)."""

import pytest

from tests.conftest import SHARED_EVAL

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not (SHARED_EVAL / "scifact").exists(), reason="no SciFact data")
def test_scifact_reproduces_the_published_contextual_figure():
    from search.lab.evaluation import evaluate_retrieval

    result = evaluate_retrieval(
        SHARED_EVAL / "scifact", split="test", methods=["static", "contextual"]
    )
    assert result["methods"]["contextual"]["ndcg@10"] == pytest.approx(0.645, abs=0.005)
    assert 0.39 <= result["methods"]["static"]["ndcg@10"] <= 0.46


@pytest.mark.skipif(not (SHARED_EVAL / "stsb").exists(), reason="no STS-B data")
def test_stsb_reproduces_the_published_contextual_figure(model):
    from search.lab.datasets import load_sts
    from search.lab.similarity import sts_correlation

    result = sts_correlation(model, load_sts(SHARED_EVAL / "stsb" / "sts-test.csv"))
    assert result["contextual"] == pytest.approx(0.820, abs=0.005)
    assert result["static"] < result["contextual"]

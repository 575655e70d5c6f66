"""The reference figures of `words` and `classify` on the full data (`make eval`)."""

import pytest

from tests.conftest import SHARED_EVAL

pytestmark = pytest.mark.slow


def test_glove_reproduces_gensims_four_figures_unrestricted_analogies_included():
    from lab.intrinsic import evaluate_words

    result = evaluate_words(["glove"], unrestricted=True)
    glove = result["methods"]["glove"]
    assert glove["analogy_unrestricted"] == pytest.approx(0.4622, abs=0.005)
    assert glove["analogy_unrestricted_candidates"] == 400_000
    assert result["reference"]["reproduced"] is True
    assert result["reference"]["measured"]["analogy_unrestricted"] is not None


@pytest.mark.skipif(not (SHARED_EVAL / "sst2").exists(), reason="no SST-2 data")
def test_sst2_probe_reproduces_the_reference_accuracies():
    from lab.classification import evaluate_classification

    result = evaluate_classification(SHARED_EVAL / "sst2", methods=["static", "contextual"])
    assert (result["train"], result["dev"], result["test"]) == (60_614, 6_735, 872)
    methods = result["methods"]
    # scikit-learn's LogisticRegression (C=1) on all of train.tsv, measured here.
    assert methods["contextual"]["c1_accuracy"] == pytest.approx(0.8108, abs=0.005)
    assert methods["static"]["c1_accuracy"] == pytest.approx(0.7844, abs=0.005)
    assert methods["static"]["accuracy"] < methods["contextual"]["accuracy"]

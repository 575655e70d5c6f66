"""The encoders only the lab uses, checked against the product's."""

import numpy as np

from indexer.encoders.transformer import ContextualEncoder
from tests.indexer.encoders.test_encoders import TEXTS


def test_one_pass_gives_the_same_vectors_as_each_pooling_alone(model):
    from lab.encoders.layers import LayerwiseEncoder

    vectors = LayerwiseEncoder(model, batch_size=4).encode(TEXTS)
    assert set(vectors) >= {"contextual", "cls", "max", "mean-last4", "layer-0", "layer-6"}
    for method, pooling in [("contextual", "mean"), ("cls", "cls"), ("mean-last4", "mean-last4")]:
        alone = ContextualEncoder(model, pooling).encode(TEXTS)
        assert np.allclose(vectors[method], alone, atol=1e-5), method
    assert np.allclose(vectors["layer-6"], vectors["contextual"], atol=1e-6)
    assert not np.allclose(vectors["layer-0"], vectors["contextual"], atol=1e-2)

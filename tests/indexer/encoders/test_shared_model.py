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


def test_a_manifest_becomes_checked_encoders_and_a_holder_keeps_the_model(tmp_path, tiny_model_dir):
    from dataclasses import replace

    import pytest

    from indexer import Indexer, ModelMismatch, open_index
    from indexer.encoders.for_index import EncoderHolder, encoders_for

    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).upsert_records([{"id": "a", "text": "Owls."}])
    store = open_index(index)
    manifest = store.manifest
    store.close()
    made = encoders_for(manifest)
    assert made.loaded is load_model(str(tiny_model_dir))
    assert sorted(made.spaces) == ["contextual", "static"]
    with pytest.raises(ModelMismatch, match="differ from those the index was built with"):
        encoders_for(replace(manifest, model_fingerprint="0123456789abcdef"))
    holder = EncoderHolder("fp32")
    loads: list[bool] = []
    mean = holder.for_index(manifest, loads.append)
    assert holder.for_index(manifest, loads.append) is mean
    cls = holder.for_index(replace(manifest, pooling="cls"), loads.append)
    assert cls is not mean and cls.loaded is mean.loaded and cls.key.pooling == "cls"
    # told once, as the holder took the model; the new pooling needed no model again
    assert loads == [False, True]

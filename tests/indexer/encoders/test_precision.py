"""bf16 encoding: chosen by the CPU's abilities, close to fp32, recorded in the manifest."""

from pathlib import Path

import numpy as np
import pytest

from indexer import Indexer
from indexer.encoders.precision import native_bf16, resolve_precision
from indexer.encoders.transformer import ContextualEncoder
from indexer.errors import InvalidSettings
from indexer.splitting.model_input import model_input
from indexer.store.backends import open_store
from tests.indexer.encoders.test_encoders import TEXTS


def test_auto_is_bf16_exactly_where_the_cpu_has_it_natively():
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    expected = "bf16" if flags & {"avx512_bf16", "amx_bf16"} else "fp32"
    assert native_bf16() == (expected == "bf16")
    assert resolve_precision("auto") == resolve_precision(None) == expected
    assert resolve_precision("fp32") == "fp32" and resolve_precision("bf16") == "bf16"


def test_an_unknown_precision_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(InvalidSettings, match="unknown precision 'int8'"):
        Indexer(tmp_path / "ix", precision="int8")
    assert not (tmp_path / "ix").exists()


def test_bf16_vectors_agree_with_fp32_to_cosine_0_9999(model):
    fp32 = ContextualEncoder(model).encode(TEXTS)
    bf16 = ContextualEncoder(model, precision="bf16").encode(TEXTS)
    assert bf16.dtype == np.float32
    assert np.allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-5)
    assert (fp32 * bf16).sum(axis=1).min() >= 0.9999
    assert not np.array_equal(fp32, bf16)  # it did compute in bf16


def test_the_manifest_records_the_precision_of_the_last_run(tmp_path, notes):
    Indexer(tmp_path / "ix", precision="bf16").index_folder(notes)
    (notes / "new.txt").write_text("Bread rises because yeast makes carbon dioxide.\n")
    store = open_store(tmp_path / "ix")
    try:
        assert store.manifest.precision == "bf16"
    finally:
        store.close()
    Indexer(tmp_path / "ix", precision="fp32").index_folder(notes)
    store = open_store(tmp_path / "ix")
    try:
        assert store.manifest.precision == "fp32"
    finally:
        store.close()


def test_a_run_that_encodes_nothing_leaves_the_recorded_precision(tmp_path, notes):
    Indexer(tmp_path / "ix", precision="bf16").index_folder(notes)
    summary = Indexer(tmp_path / "ix", precision="fp32").index_folder(notes)
    assert summary.chunks == 0
    store = open_store(tmp_path / "ix")
    try:
        assert store.manifest.precision == "bf16"
    finally:
        store.close()


def test_repair_encodes_in_the_precision_the_manifest_records(tmp_path, notes, model):
    """A repaired bf16 index holds bf16 vectors, as its manifest says (fp32 vectors, at
    cosine 0.99997 to them, would be another index's)."""
    from indexer.runs.repair import repair_index

    index = tmp_path / "ix"
    Indexer(index, precision="bf16").index_folder(notes)
    repair_index(index)
    store = open_store(index)
    try:
        assert store.manifest.precision == "bf16"
        with store.snapshot() as snapshot:
            chunks = snapshot.chunks(range(1, 1000))
            window = store.manifest.chunk_tokens  # each passage with its trail in front
            fresh = ContextualEncoder(model, precision="bf16").encode(
                [
                    model_input(chunk.text, chunk.section, model.token_spans, window)
                    for chunk in chunks.values()
                ]
            )
            for chunk_id, vector in zip(chunks, fresh, strict=True):
                stored = snapshot.vectors("contextual", [chunk_id])[chunk_id]
                assert float(stored @ vector) == pytest.approx(1.0, abs=1e-6)
    finally:
        store.close()

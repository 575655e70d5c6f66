"""ctxsearch's `index` side by side with its peers on the same documents and model.

The first `limit` documents of a BEIR corpus (SciFact's abstracts, say) are indexed by
`ctxsearch index` (its default, and each speed option given) and by each peer (llm,
Chroma, txtai, bare sentence-transformers: `lab.peer_systems`, in the peers' own
virtualenv, `lab.peer_venv`), every one as its own process, in rounds: each round runs
every system once, so a busy moment of the machine hurts all alike. A system's row holds
its median whole-process wall time, docs/s and tokens/s at that median, the tokens it
encoded (its passages' model inputs for ctxsearch; each text cut where the peer cuts it
for the peers), its largest peak RSS, and its docs/s as a ratio to the fastest peer's.

A matmul probe (`lab.matmul_probe`) gives this CPU's fp32 and bf16 rates; ctxsearch's
passages encoded here by its contextual encoder alone, in each precision of the rows,
give its tokens/s while encoding and the share of the bf16 ceiling that is.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.bench_indexing import write_beir_folder

Row = dict[str, Any]
PEERS = ("llm", "chroma", "txtai", "sentence-transformers")
# Where each peer cuts a text, in the model's tokens (special tokens included):
# sentence-transformers' max_seq_length for the first three, the tokenizer's
# model_max_length for txtai's own transformers pooling.
PEER_TOKEN_LIMITS = {"llm": 256, "chroma": 256, "sentence-transformers": 256, "txtai": 512}
# ctxsearch's settings measured by default: `index` as it is, and each speed option.
CTXSEARCH_SETTINGS = {"ctxsearch": (), "ctxsearch --precision fp32": ("--precision", "fp32")}


@dataclass(frozen=True)
class Run:
    """One whole process: its wall seconds, peak resident memory and load average."""

    seconds: float
    peak_megabytes: float
    load: float


def run_process(command: list[str], environment: dict[str, str] | None = None) -> Run:
    """Run `command` to its end; its wall time and its own peak RSS (`wait4`), or
    `RuntimeError` with the last line it wrote on stderr if it failed."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
    )
    errors = process.stderr.read() if process.stderr else b""
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        lines = errors.decode(errors="replace").strip().splitlines() or ["(no message)"]
        raise RuntimeError(f"{Path(command[0]).name} {command[1]}: {lines[-1]}")
    return Run(seconds, usage.ru_maxrss / 1024, load)


@dataclass(frozen=True)
class Inputs:
    """The same documents for every system: a folder of text files (ctxsearch reads
    it) and JSON lines of {"id", "text"} with each file's text (the peers read them)."""

    folder: Path
    texts: Path
    count: int


def write_inputs(corpus: Path, limit: int, where: Path) -> Inputs:
    """The first `limit` documents of the BEIR `corpus` as `Inputs` under `where`."""
    folder = write_beir_folder(corpus, where / "documents", limit)
    files = sorted(folder.iterdir())
    texts = where / "texts.jsonl"
    with texts.open("w") as handle:
        for path in files:
            handle.write(json.dumps({"id": path.stem, "text": path.read_text().strip()}) + "\n")
    return Inputs(folder, texts, len(files))


def peer_rows(
    corpus: Path,
    limit: int,
    rounds: int,
    settings: dict[str, tuple[str, ...]],
    peers: list[str],
    peers_venv: Path,
    log: Callable[[str], None],
) -> list[Row]:
    """The side-by-side table over the first `limit` documents of `corpus`: a row per
    ctxsearch setting (`settings`: a name and its extra `index` options) and per peer
    of `peers`, each the median of `rounds` rounds; then the matmul probe and
    ctxsearch's encoder alone, at each precision of `settings`."""
    from lab.peer_venv import peers_python

    python = peers_python(peers_venv, log) if peers else None
    environment = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }

    def command(name: str, inputs: Inputs, work: Path) -> list[str]:
        if name in settings:
            index = [sys.executable, "-m", "search", "index", str(inputs.folder), "--index"]
            return [*index, str(work / "index"), "--quiet", "--json", *settings[name]]
        script = str(Path(__file__).with_name("peer_systems.py"))
        # -I: the script's folder (the lab's, with a datasets.py) must not shadow packages
        return [str(python), "-I", script, name, str(inputs.texts), str(work), _model_folder()]

    names = [*settings, *peers]
    runs: dict[str, list[Run]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="ctxsearch-peers-") as scratch_name:
        scratch = Path(scratch_name)
        inputs = write_inputs(corpus, limit, scratch / "inputs")
        warm = write_inputs(corpus, min(limit, 5), scratch / "warm")
        for position, name in enumerate(names):  # a first run fills caches (ONNX export)
            work = scratch / f"warm-{position}"
            work.mkdir()
            run_process(command(name, warm, work), environment)
        for number in range(1, rounds + 1):  # systems alternate, so load hurts all alike
            for position, name in enumerate(names):
                work = scratch / f"round-{number}-{position}"
                work.mkdir()
                run = run_process(command(name, inputs, work), environment)
                runs[name].append(run)
                log(f"round {number}/{rounds}: {name} {run.seconds:.1f} s, load {run.load:.2f}")
        model_inputs = ctxsearch_inputs(inputs.folder)
        texts = [json.loads(line)["text"] for line in inputs.texts.read_text().splitlines()]
    tokens = {name: token_counts(model_inputs) for name in settings}
    tokens |= {peer: token_counts(texts, PEER_TOKEN_LIMITS[peer]) for peer in peers}
    rows = [_system_row(name, runs[name], inputs.count, tokens[name]) for name in names]
    fastest = max((row["docs_per_second"] for row in rows if row["system"] in peers), default=0)
    for row in rows:
        row["ratio"] = round(row["docs_per_second"] / fastest, 2) if fastest else None
    precisions = sorted({_precision(options) for options in settings.values()})
    return rows + encoder_rows(model_inputs, precisions, log)


def _model_folder() -> str:
    from indexer.encoders.loading import DEFAULT_MODEL, model_location

    return model_location(DEFAULT_MODEL)


def _precision(options: tuple[str, ...]) -> str:
    """The precision `index` computes in with these options (resolved as it resolves it)."""
    from indexer.encoders.precision import resolve_precision

    given = list(options)
    named = given[given.index("--precision") + 1] if "--precision" in given else None
    return resolve_precision(named)


def _system_row(name: str, runs: list[Run], documents: int, tokens: list[int]) -> Row:
    median = statistics.median(run.seconds for run in runs)
    return {
        "benchmark": name,
        "system": name,
        "seconds": round(median, 2),
        "all_seconds": [round(run.seconds, 1) for run in runs],
        "docs_per_second": round(documents / median, 2),
        "passages": len(tokens),
        "tokens": sum(tokens),
        "tokens_per_second": round(sum(tokens) / median, 1),
        "peak_megabytes": round(max(run.peak_megabytes for run in runs), 1),
        "load": [round(run.load, 2) for run in runs],
        "note": f"median of {len(runs)} whole processes",
    }


def ctxsearch_inputs(folder: Path) -> list[str]:
    """What ctxsearch's model reads for the folder's documents: each passage's model
    input (its section trail and text), split as `index` splits them."""
    from indexer.encoders.loading import load_model
    from indexer.reading.sources import read_document, walk_folder
    from indexer.runs.write_settings import DEFAULT_OVERLAP
    from indexer.splitting.chunking import chunk_document

    loaded = load_model()
    content_tokens = loaded.max_tokens - loaded.tokenizer.num_special_tokens_to_add()
    inputs = []
    for source in walk_folder(folder):
        document = read_document(source)
        chunks = chunk_document(
            document.text,
            str(document.path),
            document.layout,
            loaded.token_spans,
            content_tokens,
            DEFAULT_OVERLAP,
        )
        inputs += [chunk.encoded_text for chunk in chunks]
    return inputs


def token_counts(texts: list[str], limit: int | None = None) -> list[int]:
    """Each text's tokens as the model reads it (special tokens included), cut at
    `limit` (None: the model's own window)."""
    from indexer.encoders.loading import load_model

    loaded = load_model()
    encoded = loaded.tokenize(
        texts, truncation=True, max_length=limit or loaded.max_tokens, verbose=False
    )
    return [len(ids) for ids in encoded["input_ids"]]


def encoder_rows(texts: list[str], precisions: list[str], log: Callable[[str], None]) -> list[Row]:
    """The matmul probe (fp32 and bf16 GFLOPS here), then ctxsearch's contextual encoder
    alone on `texts` (its passages' model inputs, in batches as `index`'s fill hands them over)
    at each of `precisions`: tokens/s while encoding and the share of the bf16 ceiling,
    counting each text's operations at its own length (padding is not work done)."""
    from indexer.encoders.loading import load_model
    from indexer.encoders.transformer import ContextualEncoder
    from indexer.runs.write_settings import FILL_BATCH_CHUNKS
    from lab.matmul_probe import matmul_rates, text_flops

    loaded = load_model()
    counts = token_counts(texts)
    flops = text_flops(loaded.model.config, counts)
    rates = matmul_rates()
    rows: list[Row] = [
        {
            "benchmark": f"matmul probe, {name}",
            "gflops": round(rate, 1),
            "note": "torch.matmul (4096 x 384) @ (384 x 1536), best of 5, "
            f"load {os.getloadavg()[0]:.2f}",
        }
        for name, rate in rates.items()
    ]
    for precision in precisions:
        encoder = ContextualEncoder(loaded, precision=precision)
        encoder.encode(texts[:32])  # warm up
        load = os.getloadavg()[0]
        started = time.perf_counter()
        for first in range(0, len(texts), FILL_BATCH_CHUNKS):
            encoder.encode(texts[first : first + FILL_BATCH_CHUNKS])
        seconds = time.perf_counter() - started
        share = flops / seconds / (rates["bf16"] * 1e9)
        log(f"ctxsearch's encoder alone, {precision}: {seconds:.1f} s, load {load:.2f}")
        rows.append(
            {
                "benchmark": f"ctxsearch's contextual encoder alone, {precision}",
                "seconds": round(seconds, 2),
                "tokens": sum(counts),
                "tokens_per_second": round(sum(counts) / seconds, 1),
                "gflops": round(flops / seconds / 1e9, 1),
                "share_of_bf16_ceiling": round(share, 3),
                "note": f"{flops / sum(counts) / 1e6:.1f} MFLOP per token at these lengths; "
                f"load {load:.2f}",
            }
        )
    return rows

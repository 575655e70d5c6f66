"""The contextual encoder: a transformer's hidden states, pooled with the attention mask."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from indexer.encoders.base import Encoder, length_sorted_batches
from indexer.encoders.loading import LoadedModel
from indexer.encoders.pooling import Pooling

# A call to encode at most this many texts runs on one thread. For a few passages (an edit
# under `watch`) a second thread buys little on a quiet machine, and on a busy one its
# barrier waits cost seconds for a single passage, twenty times what one thread takes.
# A larger call runs whole batches side by side instead, one thread each (`_encoded_batches`).
ONE_THREAD_TEXTS = 4


class ContextualEncoder(Encoder):
    """Encodes texts with every token seeing every other, then pools the last layer(s)."""

    def __init__(
        self,
        loaded: LoadedModel,
        pooling: str = "mean",
        batch_size: int = 32,
        precision: str = "fp32",
    ):
        if precision not in ("fp32", "bf16"):
            raise ValueError(f"precision must be fp32 or bf16, not {precision!r}")
        self.loaded = loaded
        self.precision = precision
        self.pooling = Pooling(pooling)
        self.name = "contextual"
        self.dim = loaded.dim
        self.batch_size = batch_size
        if self.pooling.layers > loaded.layer_count:
            raise ValueError(
                f"pooling {pooling} needs {self.pooling.layers} layers; "
                f"the model has {loaded.layer_count}"
            )

    def tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """Tokenize a batch as the model expects it, padded to its longest text."""
        return self.loaded.tokenize(
            texts,
            padding=True,
            truncation=True,
            max_length=self.loaded.max_tokens,
            return_tensors="pt",
        )

    def token_ids(self, texts: Sequence[str]) -> Any:
        """Each text's tokens (ids, attention mask and the like, special tokens included),
        as many as the model takes, unpadded: a batch is padded from these."""
        return self.loaded.tokenize(
            list(texts), truncation=True, max_length=self.loaded.max_tokens, verbose=False
        )

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's tokens, as many as the model takes: a batch costs its longest text's
        tokens times its size, and characters per token vary severalfold between prose,
        numbers and identifiers, so texts alike in characters can pad each other a lot."""
        return [len(ids) for ids in self.token_ids(texts)["input_ids"]]

    def hidden_states(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """All hidden states of a tokenized batch: the embedding output, then each layer."""
        with torch.inference_mode(), self._autocast():
            if self.pooling.layers == 1:
                return (self.loaded.model(**batch).last_hidden_state.float(),)
            states = self.loaded.model(**batch, output_hidden_states=True).hidden_states
            return tuple(state.float() for state in states)

    def one_text_states(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """`hidden_states` of a tokenized batch of one text, on one thread as `encode`
        runs a few texts."""
        with _threads(1):
            return self.hidden_states(batch)

    def _autocast(self) -> contextlib.AbstractContextManager:
        """bf16 matrix products (kept in fp32 where autocast says they must be), or nothing."""
        if self.precision == "bf16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _encoded_batches(self, texts: Sequence[str]) -> Iterable[tuple[list[int], np.ndarray]]:
        """Whole batches side by side, as many at once as torch has threads, each batch's
        every operation on one thread (a call of a few texts: one batch at a time).

        Splitting each operation across threads (torch's own way) makes the threads meet
        at a barrier after every matrix product, LayerNorm and softmax: on a busy machine
        a thread that lost its core stalls the other, which spins, and the process burnt
        about twice the CPU time for the same vectors. Batches side by side never wait
        for each other; the vectors are the same. Batches are made small enough that
        every worker gets one."""
        # Every text is tokenized once, here: batches are sorted by these tokens, and
        # each is padded from them.
        tokens = self.token_ids(texts)
        lengths = [len(ids) for ids in tokens["input_ids"]]
        workers = 1 if len(texts) <= ONE_THREAD_TEXTS else torch.get_num_threads()
        size = min(self.batch_size, math.ceil(len(texts) / workers))
        batches = list(length_sorted_batches(lengths, size))

        def encoded(batch: list[int]) -> np.ndarray:
            return self._encode_tokens(self._padded(tokens, batch))

        with _threads(1):
            if workers == 1:
                yield from ((batch, encoded(batch)) for batch in batches)
                return
            with ThreadPoolExecutor(workers, thread_name_prefix="encode") as pool:
                yield from zip(batches, pool.map(encoded, batches), strict=True)

    def _padded(self, tokens: Any, batch: list[int]) -> dict[str, torch.Tensor]:
        """The texts at `batch` of the tokenized `tokens`, padded to the longest as the
        tokenizer pads (the same tensors as `tokenize` of those texts)."""
        rows = {key: [values[i] for i in batch] for key, values in tokens.items()}
        with self.loaded.tokenizer_lock:
            return self.loaded.tokenizer.pad(rows, padding=True, return_tensors="pt")

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self._encode_tokens(self.tokenize(texts))

    def _encode_tokens(self, batch: dict[str, torch.Tensor]) -> np.ndarray:
        pooled = self.pooling(self.hidden_states(batch), batch["attention_mask"])
        return pooled.float().numpy()


@contextlib.contextmanager
def _threads(count: int) -> Iterator[None]:
    """torch's intra-op threads set to `count` for the block (process-wide)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)

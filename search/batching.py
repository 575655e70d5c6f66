"""Query encodings of concurrent callers, gathered into one forward pass per space.

A caller adds its query to the queue. If no thread is encoding, it becomes the one that
does: it takes every query waiting, encodes them together (one `Encoder.encode` call per
space), hands each caller its row, and goes on while more queries arrived meanwhile.
Callers that arrive while an encoding runs wait for the next one, so a batch holds what
gathered while the encoder was busy: one query alone is encoded at once, with no added
wait, and N concurrent queries cost about one forward pass instead of N.

One thread encodes at a time, whatever the space: the encoders of an index share the
model's tokenizer, which is not safe to call from two threads at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from indexer.faults import kill_point

# The most queries encoded in one pass; more wait for the next one.
MAX_BATCH = 64


@dataclass
class _Request:
    """One caller's query, and where its vector (or the failure) is left."""

    space: str
    text: str
    woken: threading.Event = field(default_factory=threading.Event)
    finished: bool = False  # False when woken: this caller encodes the next batch
    vector: np.ndarray | None = None
    error: BaseException | None = None


class QueryBatcher:
    """Encodes queries for many threads, those waiting together in one pass.

    `encoder_of(space)` returns the index's encoder of that space (it may load it).
    """

    def __init__(self, encoder_of: Callable[[str], Any], max_batch: int = MAX_BATCH):
        self._encoder_of = encoder_of
        self.max_batch = max_batch
        self._waiting: list[_Request] = []
        self._lock = threading.Lock()
        self._encoding = False
        self.batches = 0  # passes made, and the most queries one held (tests read them)
        self.largest = 0

    def encode(self, space: str, text: str) -> np.ndarray:
        """The (1, dim) vector of `text` in `space`: `Encoder.encode([text])`, up to float
        rounding (a row of a batch differs from a pass of one by about 1e-7)."""
        return self.encode_many(space, [text])

    def encode_many(self, space: str, texts: list[str]) -> np.ndarray:
        """The (len(texts), dim) vectors of `texts` in `space`, queued together, so that
        up to `max_batch` of them are encoded in one pass."""
        requests = [_Request(space, text) for text in texts]
        with self._lock:
            self._waiting.extend(requests)
            lead = not self._encoding
            self._encoding = True
        for n, request in enumerate(requests):
            if n or not lead:
                request.woken.wait()
            if not request.finished:
                self._encode_next_batch()  # holds this request: it is first in line
        for request in requests:
            if request.error is not None:
                raise request.error
        return np.concatenate(
            [request.vector for request in requests if request.vector is not None]
        )

    def _encode_next_batch(self) -> None:
        """Encode the queries waiting (up to `max_batch`), then hand the encoder on.

        The first caller still waiting encodes the batch after this one, so that nobody
        encodes for others once its own answer is ready."""
        with self._lock:
            batch = self._waiting[: self.max_batch]
            del self._waiting[: self.max_batch]
        try:
            self._encode(batch)
        finally:
            for request in batch:
                request.finished = True
                request.woken.set()
            with self._lock:
                if self._waiting:
                    self._waiting[0].woken.set()
                else:
                    self._encoding = False

    def _encode(self, batch: list[_Request]) -> None:
        self.batches += 1
        self.largest = max(self.largest, len(batch))
        by_space: dict[str, list[_Request]] = {}
        for request in batch:
            by_space.setdefault(request.space, []).append(request)
        for space, requests in by_space.items():
            try:
                kill_point("query-encode")
                vectors = self._encoder_of(space).encode([request.text for request in requests])
            except BaseException as error:  # every waiting caller gets it, none hangs
                for request in requests:
                    request.error = error
            else:
                for row, request in enumerate(requests):
                    request.vector = vectors[row : row + 1]

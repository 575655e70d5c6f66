"""`hashed-words`: a deterministic test and development encoder, without torch.

A reserved model name (`ctxsearch index --model hashed-words`, `Indexer(model=...)`)
that stands for a hashed bag of words instead of a transformer: a text's words are
lower-cased, each is hashed to a few signed buckets of a fixed dimension, the buckets are
summed and the vector L2-normalised. The contextual space also hashes each pair of
neighbouring words, so that word order counts there and not in the static space. It
loads in microseconds, gives the same vectors on every machine, and is recorded in the
manifest like any model, so queries of an index built with it use it too.

Texts that share words are near, others are not: enough for tests where the model is
not the point (runs, moves, records, stores, crash safety, the CLI's plumbing), never
for judging search quality. It is never the default.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from functools import lru_cache

import numpy as np

from indexer.encoders.base import Encoder
from indexer.encoders.choices import HASHED_MODEL

DIM = 256
BUCKETS_PER_WORD = 3
MAX_TOKENS = 128  # the window a chunk may fill, as a small transformer's would
_VERSION = 1  # bumped when the vectors change, so the fingerprint (and old indexes) do
_WORD = re.compile(r"\w+|[^\w\s]")  # a word, or one punctuation mark: a "token"
_WORDS = re.compile(r"\w+")  # what the vectors hash: words only
_SPACE_SALTS = {"contextual": b"ctx", "static": b"static"}


class _NoSpecialTokens:
    """What a run asks of a tokenizer: how many special tokens a window adds (none)."""

    def num_special_tokens_to_add(self) -> int:
        return 0


class HashedWordsModel:
    """The `LoadedModel` of `hashed-words`: a name, a fingerprint, a window, token spans."""

    name = HASHED_MODEL
    dim = DIM
    layer_count = 0
    max_tokens = MAX_TOKENS
    fingerprint = hashlib.sha256(
        f"{HASHED_MODEL}/v{_VERSION}/dim={DIM}/buckets={BUCKETS_PER_WORD}".encode()
    ).hexdigest()[:16]
    tokenizer = _NoSpecialTokens()
    tokenizer_id = f"{HASHED_MODEL}-{fingerprint}"

    @property
    def model(self):
        """There is no transformer: what needs one (the lab's layers, polysemy, the ONNX
        export) is refused in one line."""
        from indexer.errors import ModelNotAvailable

        raise ModelNotAvailable(
            f"{HASHED_MODEL} is the test encoder, a hashed bag of words with no transformer: "
            "this needs a real model"
        )

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """The character span of every word and punctuation mark of `text`."""
        return [match.span() for match in _WORD.finditer(text)]


HASHED_WORDS = HashedWordsModel()


def is_hashed(model: object) -> bool:
    """Whether a loaded model (or a model name) is `hashed-words`."""
    return getattr(model, "name", model) == HASHED_MODEL


class HashedWordsEncoder(Encoder):
    """The hashed bag of words of one vector space (`contextual` adds word pairs)."""

    def __init__(self, space: str):
        self.name = f"{HASHED_MODEL}-{space}"
        self.dim = DIM
        self._salt = _SPACE_SALTS[space]
        self._pairs = space == "contextual"
        self.settings = (
            {} if self._pairs else {"table": "hashed words", "model": HASHED_MODEL, "v": _VERSION}
        )

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            hashed = [_hashed(feature, self._salt) for _span, feature in self.features(text)]
            if hashed:
                buckets = np.concatenate([bucket for bucket, _ in hashed])
                signs = np.concatenate([sign for _, sign in hashed])
                np.add.at(vectors[row], buckets, signs)
        return vectors

    def features(self, text: str) -> list[tuple[tuple[int, int], str]]:
        """What a text's vector sums, each with its span in the text: its lower-cased
        words, then (contextual space) each pair of neighbouring words."""
        words = [(match.span(), match.group().lower()) for match in _WORDS.finditer(text)]
        if not self._pairs:
            return words
        pairs = [
            ((a_span[0], b_span[1]), f"{a} {b}")
            for (a_span, a), (b_span, b) in itertools.pairwise(words)
        ]
        return words + pairs

    def feature_vector(self, feature: str) -> np.ndarray:
        """The (unnormalised) vector one feature adds to a text's."""
        vector = np.zeros(self.dim, dtype=np.float32)
        buckets, signs = _hashed(feature, self._salt)
        np.add.at(vector, buckets, signs)
        return vector

    def word_vector(self, word: str) -> np.ndarray:
        """The unit vector of a word on its own."""
        return self.encode([word])[0]


@lru_cache(maxsize=65536)
def _hashed(feature: str, salt: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The buckets and signs (+1 or -1) a feature adds to, the same on every machine."""
    digest = hashlib.blake2b(feature.encode(), digest_size=4 * BUCKETS_PER_WORD, salt=salt)
    values = np.frombuffer(digest.digest(), dtype="<u4")
    buckets = (values >> 1) % DIM
    signs = np.where(values & 1, 1.0, -1.0).astype(np.float32)
    return buckets.astype(np.intp), signs


def hashed_space_encoders(pooling: str, static: str) -> dict[str, Encoder]:
    """The encoders of both vector spaces; `pooling` is recorded but changes nothing
    (there are no hidden states to pool), and the static space is the hashed words."""
    from indexer.errors import InvalidSettings

    if static != "token":
        raise InvalidSettings(
            f"the {HASHED_MODEL} test encoder keeps only the token static space, not {static}"
        )
    return {space: HashedWordsEncoder(space) for space in ("contextual", "static")}

"""A text's vector taken apart: the term each token (or feature) adds to it.

The pooled vector of a text is a sum of parts, one per token: mean pooling adds each
token's state divided by the token count, the static space each token's table row divided
by it, the `hashed-words` test encoder each word's (and, in its contextual space, each
word pair's) hashed vector. The stored vector is that sum L2-normalised, so for a unit
query vector q the cosine is exactly the sum over parts of q . part / |sum of parts|:
each part's share of the similarity (`search.word_shares`).

Only encoders whose vector is such a sum can be taken apart: mean pooling and
mean-of-last-layers (not `cls` or `max`), the `token` static space (not GloVe or
model2vec, whose own tokenisation this does not see). `Undecomposable` says why not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from indexer.encoders.base import Encoder

if TYPE_CHECKING:
    from indexer.encoders.hashed import HashedWordsEncoder
    from indexer.encoders.static import StaticEncoder
    from indexer.encoders.transformer import ContextualEncoder


class Undecomposable(Exception):
    """The encoder's vector is not a sum of per-token parts; the message says why."""


@dataclass(frozen=True)
class TokenParts:
    """Each part's [start, end) in the text (None for a special token such as [CLS])
    and its term of the pooled vector (rows of `vectors`, float64), before normalising."""

    spans: list[tuple[int, int] | None]
    vectors: np.ndarray


def token_parts(encoder: Encoder, text: str) -> TokenParts:
    """The parts of `encoder`'s vector of `text` (`Undecomposable` when it has none)."""
    from indexer.encoders.hashed import HashedWordsEncoder

    if isinstance(encoder, HashedWordsEncoder):
        return _hashed_parts(encoder, text)
    from indexer.encoders.static import StaticEncoder
    from indexer.encoders.transformer import ContextualEncoder

    if isinstance(encoder, ContextualEncoder):
        return _contextual_parts(encoder, text)
    if isinstance(encoder, StaticEncoder):
        return _static_parts(encoder, text)
    raise Undecomposable(f"the {encoder.name} encoder's vectors are not sums of token parts")


def _contextual_parts(encoder: ContextualEncoder, text: str) -> TokenParts:
    """Each token's last-layer state (or mean of the last layers) over the token count,
    special tokens included, as the index encodes the text (truncated to the window)."""
    if encoder.pooling.name != "mean" and not encoder.pooling.name.startswith("mean-last"):
        raise Undecomposable(
            f"{encoder.pooling.name} pooling is not a mean of tokens: no exact token shares"
        )
    loaded = encoder.loaded
    batch = loaded.tokenize(
        [text],
        truncation=True,
        max_length=loaded.max_tokens,
        return_tensors="pt",
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
    )
    offsets = batch.pop("offset_mapping")[0].tolist()
    special = batch.pop("special_tokens_mask")[0].tolist()
    layers = encoder.pooling.layers
    states = encoder.one_text_states(batch)
    last = [state[0].numpy().astype(np.float64) for state in states[-layers:]]
    hidden = last[0] if layers == 1 else np.mean(last, axis=0)
    vectors = hidden / hidden.shape[0]
    spans = [
        None if is_special else (a, b) for (a, b), is_special in zip(offsets, special, strict=True)
    ]
    return TokenParts(spans, vectors)


def _static_parts(encoder: StaticEncoder, text: str) -> TokenParts:
    """Each token's row of the embedding table over the token count (no special tokens)."""
    encoding = encoder.loaded.tokenize(
        text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
    )
    ids = encoding["input_ids"]
    table = encoder.bag.weight.detach().numpy()  # a view of the model's table, not a copy
    rows = table[ids].astype(np.float64) if ids else np.zeros((0, encoder.dim))
    spans: list[tuple[int, int] | None] = [tuple(span) for span in encoding["offset_mapping"]]
    return TokenParts(spans, rows / max(len(ids), 1))


def _hashed_parts(encoder: HashedWordsEncoder, text: str) -> TokenParts:
    """Each word's hashed vector, and in the contextual space each pair of neighbouring
    words' (spanning both words), as `HashedWordsEncoder` sums them."""
    features = encoder.features(text)
    spans: list[tuple[int, int] | None] = [span for span, _feature in features]
    vectors = np.zeros((len(features), encoder.dim))
    for row, (_span, feature) in enumerate(features):
        vectors[row] = encoder.feature_vector(feature)
    return TokenParts(spans, vectors)

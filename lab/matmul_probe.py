"""How fast this CPU multiplies matrices, and how much of that an encoder's work is.

`matmul_rates` times torch matrix products of the shapes a small BERT's feed-forward
layers compute (a batch of 32 passages of 128 tokens, hidden 384, intermediate 1,536)
in fp32 and in bf16: the most either number format can give this model here, its
"ceiling". `flops_per_token` counts the floating-point operations a BERT encoder spends
on one token of a text of `length` tokens, from the model's own shape, so that a rate in
tokens per second becomes a share of the ceiling.
"""

from __future__ import annotations

import time
from typing import Any

# rows (batch x tokens), inner and outer width of the probe's products
PROBE_SHAPE = (32 * 128, 384, 1536)


def flops_per_token(config: Any, length: int) -> float:
    """Multiply-adds (x2) per token of a `length`-token text through a BERT encoder:
    per layer, the query, key, value and output projections (4 of d x d), the
    feed-forward pair (d x f and f x d), and attention's scores and weighted sum (each
    `length` x d). The pooler, embeddings, LayerNorm and softmax are left out (small)."""
    d = config.hidden_size
    f = config.intermediate_size
    per_layer = 2 * (4 * d * d + 2 * d * f + 2 * length * d)
    return float(config.num_hidden_layers * per_layer)


def text_flops(config: Any, token_counts: list[int]) -> float:
    """The operations of encoding texts of these token counts, each at its own length
    (no padding): the work that has to be done."""
    return sum(count * flops_per_token(config, count) for count in token_counts)


def matmul_rates(repeats: int = 5, shape: tuple[int, int, int] = PROBE_SHAPE) -> dict[str, float]:
    """GFLOPS of `shape`'s product in fp32 and bf16 on torch's current threads: the best
    of `repeats` (the least disturbed by the rest of the machine)."""
    import torch

    rows, inner, outer = shape
    rates = {}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        left = torch.randn(rows, inner).to(dtype)
        right = torch.randn(inner, outer).to(dtype)
        torch.matmul(left, right)  # warm up: the first call picks its kernel
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            for _ in range(10):
                torch.matmul(left, right)
            best = min(best, (time.perf_counter() - started) / 10)
        rates[name] = 2 * rows * inner * outer / best / 1e9
    return rates

"""Pooling: turn per-token hidden states into one vector per text.

Pure functions of tensors. `hidden` is (batch, tokens, dim); `mask` is the attention
mask (batch, tokens), 1 for real tokens and 0 for padding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch

POOLING_CHOICES = ("mean", "cls", "max", "mean-lastK")
_LAST_K = re.compile(r"^mean-last(\d+)$")


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of the real tokens' states (the denominator is clamped for empty rows)."""
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)


def cls_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The state of the first token ([CLS] for BERT-style models)."""
    return hidden[:, 0]


def max_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Element-wise maximum over the real tokens; a row with no real token pools to 0."""
    masked = hidden.masked_fill(mask.unsqueeze(-1) == 0, float("-inf"))
    pooled = masked.max(dim=1).values
    return torch.where(torch.isinf(pooled), torch.zeros_like(pooled), pooled)


def mean_of_last_layers(
    hidden_states: Sequence[torch.Tensor], mask: torch.Tensor, layers: int
) -> torch.Tensor:
    """Mean pooling of the average of the last `layers` hidden-state layers."""
    stacked = torch.stack(tuple(hidden_states[-layers:]), dim=0).mean(dim=0)
    return mean_pool(stacked, mask)


@dataclass(frozen=True)
class Pooling:
    """A pooling method by name: `mean`, `cls`, `max` or `mean-lastK` (K last layers)."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in ("mean", "cls", "max") and not _LAST_K.match(self.name):
            raise ValueError(
                f"unknown pooling {self.name!r}: use mean, cls, max or mean-lastK (e.g. mean-last4)"
            )

    @property
    def layers(self) -> int:
        """How many final layers the method reads (1 for all but mean-lastK)."""
        match = _LAST_K.match(self.name)
        return int(match.group(1)) if match else 1

    def __call__(self, hidden_states: Sequence[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        """Pool a model's hidden states (embedding output first, last layer last)."""
        if self.layers > 1:
            return mean_of_last_layers(hidden_states, mask, self.layers)
        last = hidden_states[-1]
        if self.name == "cls":
            return cls_pool(last, mask)
        if self.name == "max":
            return max_pool(last, mask)
        return mean_pool(last, mask)

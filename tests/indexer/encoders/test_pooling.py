"""Pooling functions against tensors computed by hand."""

import pytest
import torch

from indexer.encoders.pooling import Pooling, cls_pool, max_pool, mean_of_last_layers, mean_pool

# Two texts, three positions, two dimensions; the second text has one padding position.
HIDDEN = torch.tensor(
    [
        [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
        [[-1.0, 0.0], [3.0, -2.0], [100.0, 100.0]],
    ]
)
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])


def test_mean_pool_ignores_padding():
    expected = torch.tensor([[3.0, 4.0], [1.0, -1.0]])
    assert torch.allclose(mean_pool(HIDDEN, MASK), expected)


def test_mean_pool_of_an_empty_row_is_zero_not_nan():
    pooled = mean_pool(HIDDEN[:1], torch.tensor([[0, 0, 0]]))
    assert torch.equal(pooled, torch.zeros(1, 2))


def test_cls_pool_takes_the_first_token():
    assert torch.equal(cls_pool(HIDDEN, MASK), torch.tensor([[1.0, 2.0], [-1.0, 0.0]]))


def test_max_pool_ignores_padding_even_when_it_is_largest():
    assert torch.equal(max_pool(HIDDEN, MASK), torch.tensor([[5.0, 6.0], [3.0, 0.0]]))


def test_max_pool_of_an_empty_row_is_zero():
    assert torch.equal(max_pool(HIDDEN[:1], torch.tensor([[0, 0, 0]])), torch.zeros(1, 2))


def test_mean_of_last_layers_averages_layers_then_tokens():
    first = torch.ones(1, 2, 2)
    second = torch.tensor([[[3.0, 5.0], [7.0, 9.0]]])
    third = torch.tensor([[[1.0, 1.0], [1.0, 3.0]]])
    mask = torch.tensor([[1, 1]])
    # layers 2 and 3 averaged: [[2,3],[4,6]]; then mean over tokens: [3, 4.5]
    pooled = mean_of_last_layers((first, second, third), mask, layers=2)
    assert torch.allclose(pooled, torch.tensor([[3.0, 4.5]]))


@pytest.mark.parametrize(
    ("name", "layers"), [("mean", 1), ("cls", 1), ("max", 1), ("mean-last4", 4)]
)
def test_pooling_names_parse(name, layers):
    assert Pooling(name).layers == layers


@pytest.mark.parametrize("name", ["average", "mean-last", "last4", ""])
def test_unknown_pooling_names_are_refused(name):
    with pytest.raises(ValueError, match="unknown pooling"):
        Pooling(name)


def test_pooling_object_dispatches_on_hidden_states():
    states = (torch.zeros_like(HIDDEN), HIDDEN)
    assert torch.allclose(Pooling("mean")(states, MASK), mean_pool(HIDDEN, MASK))
    assert torch.equal(Pooling("cls")(states, MASK), cls_pool(HIDDEN, MASK))
    assert torch.equal(Pooling("max")(states, MASK), max_pool(HIDDEN, MASK))
    assert torch.allclose(Pooling("mean-last2")(states, MASK), mean_pool(HIDDEN / 2, MASK))

"""Shared fixtures: small exact-checkable functions and helpers."""

import itertools

import numpy as np
import pytest

from lca import targets


def all_points(n: int) -> np.ndarray:
    """Every point of {-1,1}^n, in lca.exact's index order (bit i of t <-> x_i = -1)."""
    index = np.arange(2 ** n)[:, None]
    bits = (index >> np.arange(n)) & 1
    return (1 - 2 * bits).astype(np.int8)


@pytest.fixture
def small_tree():
    """A noise-free random tree of 8 leaves over 20 variables."""
    return targets.random_tree(n=20, leaves=8, seed=5)


def product_points(n: int):
    return np.array(list(itertools.product((-1, 1), repeat=n)), dtype=np.int8)

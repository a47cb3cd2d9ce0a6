"""BuildDT (Figure "BuildDT", Lemma "Error of BuildDT"): a proper learner from distance estimates.

:func:`build_dt` learns a size-``s``, depth-``d`` tree from any
:class:`~lca.tester.distance.DistanceEstimator`; :func:`builddt_error_bound`
is the lemma's bound on its error. Sampled leaf means use purpose
``"builddt-mean"`` at the leaf's path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lca import derive, exact
from lca._validate import check_int, check_real, check_seed, show
from lca.derive import Path
from lca.oracle import Oracle, oracle_n
from lca.targets import DecisionTree
from lca.tester.distance import DistanceEstimator, Restriction, format_path

__all__ = ["BuildReport", "build_dt", "build_dt_report", "builddt_error_bound"]

_MEAN_PURPOSE = "builddt-mean"


@dataclass(frozen=True)
class BuildReport:
    """Result of :func:`build_dt_report`.

    Attributes:
        tree: the learned tree (at most ``s`` leaves, depth at most ``d``).
        estimator_calls: calls to the distance estimator.
        splits: recursive calls that split (at most ``s - 1``).
        leaves: recursive calls that returned a leaf.
    """

    tree: Any
    estimator_calls: int
    splits: int
    leaves: int


def builddt_error_bound(opt: float, s: int, d: int, gamma: float, c: float) -> float:
    """Lemma "Error of BuildDT": ``c^d opt + gamma (c^d - 1)/(c - 1) + s / 2^(d+2)``.

    For ``c = 1`` the middle term is its limit ``gamma * d``.
    """
    geometric = gamma * d if c == 1 else gamma * (c ** d - 1) / (c - 1)
    return c ** d * opt + geometric + s / 2 ** (d + 2)


def _finite_estimate(value: Any, where: str) -> float:
    try:
        return check_real("build_dt", "distance estimate", value, -math.inf, math.inf)
    except (TypeError, ValueError):
        raise TypeError(f"build_dt: the distance estimator must return a finite real "
                        f"number; got {show(value)} at {where}") from None


def build_dt_report(oracle: Oracle, s: int, d: int, gamma: float, *,
                    distance_estimator: DistanceEstimator | Callable[..., float],
                    mean_samples: int | None = None, seed: int = 0,
                    path: Path = ()) -> BuildReport:
    """Figure "BuildDT" with its work counters; see :func:`build_dt`."""
    owner = "build_dt"
    if not isinstance(oracle, Oracle):
        raise TypeError(f"The 'oracle' parameter of {owner} must be an lca.oracle.Oracle. "
                        f"Got {type(oracle).__name__} instead.")
    oracle_n(oracle)
    s = check_int(owner, "s", s, 1)
    d = check_int(owner, "d", d, 0)
    gamma = check_real(owner, "gamma", gamma, 0.0, 1.0, open_low=False)
    if not callable(distance_estimator):
        raise TypeError(f"The 'distance_estimator' parameter of {owner} must be callable "
                        "as estimator(f_alpha, s, gamma). Got "
                        f"{type(distance_estimator).__name__} instead.")
    if mean_samples is not None:
        mean_samples = check_int(owner, "mean_samples", mean_samples, 1)
    seed = check_seed(owner, seed)
    root = Restriction(oracle, derive.check_path(path, oracle.n, owner))
    counters = {"estimator": 0, "splits": 0, "leaves": 0}

    def leaf(function: Restriction) -> int:
        counters["leaves"] += 1
        if mean_samples is None:
            total = exact.mean(function.base, function.path)
        else:
            key = derive.node_key(seed, _MEAN_PURPOSE, function.path)
            words = derive.uniform_points(key, function.n, 0, mean_samples, function.path)
            total = int(function.base.query(derive.unpack_points(words, function.n))
                        .sum(dtype=np.int64))
        # sign(E[f]) with sign(0) = +1, as the reconstructor's leaves and lca.exact.
        return 1 if total >= 0 else -1

    def estimate(function: Restriction, budget: int) -> float:
        counters["estimator"] += 1
        where = f"{format_path(function.path)} with s={budget}"
        return _finite_estimate(distance_estimator(function, budget, gamma), where)

    def build(function: Restriction, budget: int, depth: int) -> Any:
        free = function.free_variables
        if budget == 1 or depth == 0 or not free:  # step 1 (and nothing left to query)
            return leaf(function)
        best: tuple[float, int, int] | None = None
        for var in free:  # step 2; ties keep the lowest variable, then the smallest s0
            minus, plus = function.restrict(var, -1), function.restrict(var, 1)
            eta_minus = [estimate(minus, s0) for s0 in range(1, budget)]
            eta_plus = [estimate(plus, budget - s0) for s0 in range(1, budget)]
            for s0 in range(1, budget):
                error = (eta_minus[s0 - 1] + eta_plus[s0 - 1]) / 2
                if best is None or error < best[0]:
                    best = (error, var, s0)
        assert best is not None
        _, var, s0 = best  # step 3
        counters["splits"] += 1
        return {"var": var,
                "minus": build(function.restrict(var, -1), s0, depth - 1),
                "plus": build(function.restrict(var, 1), budget - s0, depth - 1)}

    tree = DecisionTree.from_nested(build(root, s, d), oracle.n)
    return BuildReport(tree=tree, estimator_calls=counters["estimator"],
                       splits=counters["splits"], leaves=counters["leaves"])


def build_dt(oracle: Oracle, s: int, d: int, gamma: float, *,
             distance_estimator: DistanceEstimator | Callable[..., float],
             mean_samples: int | None = None, seed: int = 0, path: Path = ()) -> Any:
    """Properly learn a size-``s``, depth-``d`` tree (Figure "BuildDT").

    ``BuildDT(f, s, d, gamma)``: if ``s = 1`` or ``d = 0`` return the leaf
    ``sign(E[f])``; otherwise, for every free variable ``i`` and split
    ``s0 + s1 = s`` (``s0, s1 >= 1``) get ``eta(x_i=-1, s0)`` and
    ``eta(x_i=+1, s1)`` from the distance estimator, and recurse on the
    ``(i, s0, s1)`` minimising ``(eta(x_i=-1, s0) + eta(x_i=+1, s1)) / 2``.
    (The paper's ``x_i = 0 / 1`` are ``x_i = +1 / -1`` here; the ``"minus"``
    branch is ``x_i = -1``.) Variables already fixed are skipped, and a node
    with no free variable is a leaf.

    Lemma "Error of BuildDT": if every estimate satisfies
    ``eta <= opt <= c eta + gamma`` and the leaf means are exact,
    ``dist(T, f) <= builddt_error_bound(opt_s(f), s, d, gamma, c)``. With
    :class:`ExactDistance` (``c = 1``, exact) and exact means, a size-``s``
    tree is recovered exactly (as a function) whenever ``d >= s - 1``.

    Cost: at most ``s - 1`` splitting calls, each making
    ``2 (s - 1)`` estimator calls per free variable: at most
    ``2 n (s - 1)^2`` estimator calls in all (:class:`DistanceFromTester` makes up
    to ``ceil(c / gamma)`` tester calls per estimate).

    Args:
        oracle: query access to ``f``.
        s, d, gamma: the paper's size, depth and accuracy parameters.
        distance_estimator: ``estimator(f_alpha, s, gamma) -> eta``
            (:class:`DistanceEstimator`).
        mean_samples: ``None`` — leaf labels from the exact mean (enumerates the
            free subcube, at most 20 free variables); an int — from that many
            uniform samples of purpose ``"builddt-mean"`` at the leaf's path
            under ``seed`` (adds the estimate's error to each leaf, see the
            remark after the lemma).
        seed: used only by sampled means.
        path: start from ``f_path`` instead of ``f``.

    Returns:
        :class:`lca.targets.DecisionTree` over ``n`` variables; deterministic
        given a deterministic estimator.
    """
    return build_dt_report(oracle, s, d, gamma, distance_estimator=distance_estimator,
                           mean_samples=mean_samples, seed=seed, path=path).tree

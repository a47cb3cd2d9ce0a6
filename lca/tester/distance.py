"""Distance to size-``s`` trees: from a tolerant tester (Lemma "distance-estimator"), or exactly.

:func:`estimate_distance` runs any :class:`Tester` on the grid ``eps =
gamma/c, 2 gamma/c, ..., 1`` [PRR06] and gives ``eta <= opt_s <= c * eta +
gamma``; :class:`ExactTester` is an exact tester for small ``n``. BuildDT
(:mod:`lca.tester.builddt`) asks for the distance of restrictions ``f_alpha``
(:class:`Restriction`) through a :class:`DistanceEstimator`:
:class:`ExactDistance` or :class:`DistanceFromTester`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from lca import derive, exact
from lca._validate import check_int, check_real
from lca.derive import Path
from lca.oracle import Oracle, oracle_n

__all__ = [
    "MAX_GRID",
    "Tester",
    "DistanceEstimate",
    "epsilon_grid",
    "estimate_distance",
    "ExactTestResult",
    "ExactTester",
    "Restriction",
    "DistanceEstimator",
    "ExactDistance",
    "DistanceFromTester",
]


class Tester(Protocol):
    """Anything called as ``tester(oracle, s, eps)`` returning an object with ``.accepted``.

    ``functools.partial(tolerant_test, delta=0.05, seed=1)`` is one;
    :class:`ExactTester` is another.
    """

    def __call__(self, oracle: Oracle, s: int, eps: float) -> Any: ...


@dataclass(frozen=True)
class DistanceEstimate:
    """Result of :func:`estimate_distance`.

    Attributes:
        eta: the largest grid ``eps`` the tester rejected, ``0`` if none.
        lower, upper: the lemma's bracket ``eta <= opt_s <= c * eta + gamma``
            (``upper`` is ``c * eta + gamma``, not clipped).
        gamma, c, s: the inputs.
        grid: the ``eps`` values ``gamma/c, 2 gamma/c, ..., 1``.
        outcomes: ``(eps, accepted)`` for every tester call made, in call order
            (from the top of the grid down).
    """

    eta: float
    lower: float
    upper: float
    gamma: float
    c: float
    s: int
    grid: tuple[float, ...]
    outcomes: tuple[tuple[float, bool], ...]

    @property
    def calls(self) -> int:
        """Tester calls made (at most ``len(grid)``)."""
        return len(self.outcomes)


MAX_GRID = 10 ** 6
""":func:`epsilon_grid` refuses more points than this (each costs a tester call)."""


def epsilon_grid(gamma: float, c: float) -> tuple[float, ...]:
    """``eps_j = j * gamma / c`` for ``j = 1 .. J``, ``J = ceil(c / gamma)``, last clipped to 1.

    ``J`` may be at most :data:`MAX_GRID` (``ValueError`` otherwise).

    ``c / gamma`` within ``1e-9`` of an integer counts as that integer, so
    ``gamma = 0.1, c = 1`` gives exactly ten values, ``0.1, 0.2, ..., 1.0``.
    """
    gamma = check_real("epsilon_grid", "gamma", gamma, 0.0, 1.0)
    c = check_real("epsilon_grid", "c", c, 1.0, math.inf, open_low=False)
    ratio = c / gamma
    if not ratio <= MAX_GRID:  # also inf
        raise ValueError(f"epsilon_grid: J = ceil(c / gamma) must be at most {MAX_GRID} "
                         f"(one tester call each); got c / gamma = {ratio:.3g} for "
                         f"gamma={gamma!r}, c={c!r}; raise 'gamma' or lower 'c'")
    count = round(ratio) if abs(ratio - round(ratio)) < 1e-9 else math.ceil(ratio)
    # j * gamma / c computed exactly from the shortest decimals of gamma and c
    # (their repr) and rounded once, so gamma = 0.1 gives 0.3, not 0.30000000000000004.
    step = Fraction(repr(gamma)) / Fraction(repr(c))
    return tuple(min(1.0, float(j * step)) for j in range(1, count + 1))


def estimate_distance(tester: Tester, oracle: Oracle, s: int, gamma: float,
                      c: float) -> DistanceEstimate:
    """Distance of ``f`` to size-``s`` trees from a tolerant tester (Lemma "distance-estimator").

    The lemma runs ``tester(oracle, s, eps)`` for ``eps = gamma/c, 2 gamma/c,
    ..., 1`` and returns ``eta``, the largest ``eps`` that rejected (``0`` if
    none). If the tester accepts every ``f`` that is ``eps``-close to size-``s``
    trees and rejects every ``f`` that is ``c eps``-far, then
    ``eta <= opt_s(f) <= c * eta + gamma`` (w.h.p. for a randomized tester:
    failure at most the sum of the calls' failure probabilities).

    The grid is scanned from the top down and stops at the first rejection,
    which *is* the largest rejected ``eps``: the same ``eta`` with at most
    ``ceil(c / gamma)`` calls.
    """
    owner = "estimate_distance"
    if not callable(tester):
        raise TypeError(f"The 'tester' parameter of {owner} must be callable as "
                        f"tester(oracle, s, eps). Got {type(tester).__name__} instead.")
    if not isinstance(oracle, Oracle):
        raise TypeError(f"The 'oracle' parameter of {owner} must be an lca.oracle.Oracle. "
                        f"Got {type(oracle).__name__} instead.")
    oracle_n(oracle)
    s = check_int(owner, "s", s, 1)
    gamma = check_real(owner, "gamma", gamma, 0.0, 1.0)
    c = check_real(owner, "c", c, 1.0, math.inf, open_low=False)
    grid = epsilon_grid(gamma, c)
    outcomes = []
    eta = 0.0
    for eps in reversed(grid):
        result = tester(oracle, s, eps)
        accepted = getattr(result, "accepted", None)
        if not isinstance(accepted, (bool, np.bool_)):
            raise TypeError(f"{owner}: the tester must return an object with a bool "
                            f"'accepted' attribute; got {result!r}")
        outcomes.append((eps, bool(accepted)))
        if not accepted:
            eta = eps
            break
    return DistanceEstimate(eta=eta, lower=eta, upper=c * eta + gamma, gamma=gamma, c=c,
                            s=s, grid=grid, outcomes=tuple(outcomes))


@dataclass(frozen=True)
class ExactTestResult:
    """Outcome of :class:`ExactTester`: ``accepted`` iff ``opt <= threshold``."""

    accepted: bool
    opt: float
    eps: float
    s: int
    threshold: float


class _OptCache:
    """``opt_s`` of oracles and restrictions, keyed by identity of the base oracle.

    Keeps a reference to every base oracle it has seen, so an ``id`` is never
    reused while its entry lives; a restriction is keyed by its *set* of fixed
    coordinates (the order a path fixed them does not change ``f_alpha``).
    """

    def __init__(self) -> None:
        self._values: dict[tuple[int, frozenset, int], float] = {}
        self._bases: dict[int, Oracle] = {}

    def opt(self, oracle: Oracle, s: int) -> float:
        base, path = (oracle.base, oracle.path) if isinstance(oracle, Restriction) \
            else (oracle, ())
        key = (id(base), frozenset(path), s)
        if key not in self._values:
            self._bases[id(base)] = base
            table, _ = exact.restrict(base, path)
            self._values[key] = exact.opt_size(table, s).distance
        return self._values[key]


class ExactTester:
    """A deterministic tolerant tester for ``n <= 12`` built on :func:`lca.exact.opt_size`.

    ``tester(oracle, s, eps)`` accepts iff ``opt_s(f) <= slack * eps``, with
    ``opt_s`` the exact distance to the closest tree of at most ``s`` leaves.
    For every ``c >= slack >= 1`` it is an exact ``(eps, c eps)`` tester:
    it accepts every ``eps``-close ``f`` and rejects every ``f`` with
    ``opt_s > c eps`` — with no failure probability, so
    :func:`estimate_distance` with it satisfies the lemma's bracket always.

    ``opt_s`` is computed once per ``(oracle, s)`` and cached (the cache
    holds a reference to the oracle).
    """

    def __init__(self, slack: float = 1.0) -> None:
        self.slack = check_real("ExactTester", "slack", slack, 1.0, math.inf,
                                open_low=False)
        self._cache = _OptCache()
        self.calls = 0

    def opt(self, oracle: Oracle, s: int) -> float:
        """``opt_s(f)``, exactly (cached)."""
        return self._cache.opt(oracle, s)

    def __call__(self, oracle: Oracle, s: int, eps: float) -> ExactTestResult:
        if not isinstance(oracle, Oracle):
            raise TypeError("The 'oracle' parameter of ExactTester must be an "
                            f"lca.oracle.Oracle. Got {type(oracle).__name__} instead.")
        s = check_int("ExactTester", "s", s, 1)
        eps = check_real("ExactTester", "eps", eps, 0.0, 1.0, open_high=False)
        self.calls += 1
        opt = self.opt(oracle, s)
        threshold = self.slack * eps
        return ExactTestResult(accepted=opt <= threshold, opt=opt, eps=eps, s=s,
                               threshold=threshold)

    def __repr__(self) -> str:
        return f"ExactTester(slack={self.slack:g})"

class Restriction(Oracle):
    """``f_alpha``: ``f`` with the coordinates of ``path`` fixed (an oracle on all ``n``).

    ``query`` overwrites the fixed coordinates of each row with the path's
    values before asking ``f``, so ``f_alpha`` ignores them; its distance to
    size-``s`` trees over ``{-1,1}^n`` equals that of ``f`` restricted to the
    subcube. A restriction of a restriction is flattened.
    """

    base: Oracle
    path: Path

    def __init__(self, base: Oracle, path: Path = ()) -> None:
        if not isinstance(base, Oracle):
            raise TypeError("The 'base' parameter of Restriction must be an "
                            f"lca.oracle.Oracle. Got {type(base).__name__} instead.")
        oracle_n(base)
        if isinstance(base, Restriction):
            path = tuple(base.path) + tuple(path)
            base = base.base
        self.base = base
        self.n = base.n
        self.path = derive.check_path(path, base.n, "Restriction")
        self.name = f"{base.name}|{format_path(self.path)}"
        self._vars = np.array([v for v, _ in self.path], dtype=np.int64)
        self._values = np.array([b for _, b in self.path], dtype=np.int8)

    @property
    def free_variables(self) -> tuple[int, ...]:
        """Variables not on the path, increasing."""
        fixed = {v for v, _ in self.path}
        return tuple(i for i in range(self.n) if i not in fixed)

    def restrict(self, variable: int, value: int) -> Restriction:
        """``f_{alpha, x_variable = value}``."""
        return Restriction(self.base, self.path + ((variable, value),))

    def query(self, points: np.ndarray) -> np.ndarray:
        if self.path:
            points = points.copy()
            points[:, self._vars] = self._values
        return self.base.query(points)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The base oracle's description, with this restriction's path as ancestors."""
        return self.base.describe(variable, bit, self.path + tuple(path))


def format_path(path: Path) -> str:
    """``x1=+1,x3=-1``: a path as a restriction's name shows it, ``root`` if empty."""
    return ",".join(f"x{v}={'+' if b > 0 else '-'}1" for v, b in path) or "root"


class DistanceEstimator(Protocol):
    """``estimator(f_alpha, s, gamma) -> eta`` with ``eta <= opt_s(f_alpha) <= c eta + gamma``.

    ``f_alpha`` is a :class:`Restriction`. :class:`ExactDistance` (``c = 1``,
    exact) and :class:`DistanceFromTester` (Lemma "distance-estimator") are two.
    """

    def __call__(self, function: Restriction, s: int, gamma: float) -> float: ...


class ExactDistance:
    """``eta = opt_s(f_alpha)`` exactly, by :func:`lca.exact.opt_size` (``n <= 12``).

    Satisfies the estimator condition with ``c = 1`` and any ``gamma >= 0``.
    Results are cached by ``(set of fixed coordinates, s)``: the order in which
    a path fixed its coordinates does not change ``f_alpha``.
    """

    def __init__(self) -> None:
        self._cache = _OptCache()
        self.calls = 0

    def __call__(self, function: Restriction, s: int, gamma: float = 0.0) -> float:
        self.calls += 1
        return self._cache.opt(function, s)


class DistanceFromTester:
    """Lemma "distance-estimator" as a :class:`DistanceEstimator`: ``estimate_distance(...).eta``.

    Args:
        tester: a :class:`Tester`, e.g. ``functools.partial(tolerant_test,
            delta=0.05, seed=1)``.
        c: the tester's gap constant (accepts ``eps``-close, rejects
            ``c eps``-far). For :func:`tolerant_test` the nominal value is
            ``kappa + 1`` (see :data:`THRESHOLD_FACTOR`).
    """

    def __init__(self, tester: Tester, c: float) -> None:
        if not callable(tester):
            raise TypeError("The 'tester' parameter of DistanceFromTester must be callable. "
                            f"Got {type(tester).__name__} instead.")
        self.tester = tester
        self.c = check_real("DistanceFromTester", "c", c, 1.0, math.inf, open_low=False)
        self.calls = 0
        self.tester_calls = 0

    def __call__(self, function: Restriction, s: int, gamma: float) -> float:
        result = estimate_distance(self.tester, function, s, gamma, self.c)
        self.calls += 1
        self.tester_calls += result.calls
        return result.eta

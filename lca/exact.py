"""Exact references for small ``n``: enumeration, Fourier, NS_p, scores, opt.

Everything here is exact (up to float64 rounding of the final formula) and a
deterministic function of its inputs: no randomness, no sampling. These are the
yardsticks the estimators and the reconstructor are tested against.

Two parts:

* **Enumeration** (at most :data:`MAX_ENUMERATION_VARIABLES` free variables):
  :func:`truth_table`, :func:`restrict`, :func:`mean`, :func:`distance`,
  :func:`fourier`, :func:`fourier_degree`, :func:`noise_sensitivity` and
  :func:`scores` (the quantities of section "Structural component" of the
  paper). They accept an :class:`~lca.oracle.Oracle` or a truth table; with
  repeated calls, compute the table once with :func:`truth_table`.
* **Optimum over decision trees** (at most :data:`MAX_OPTIMUM_VARIABLES`
  variables): :func:`opt_size` and :func:`opt_depth`, the distance from ``f``
  to the closest tree with at most ``s`` leaves / of depth at most ``d``, by
  dynamic programming over the ``3**n`` subcubes; the optimal tree on request.

Conventions:

* **Truth table**: a 1-D ``int8`` array of ``±1`` of length ``2**n``. Entry
  ``t`` is ``f(x)`` with ``x_i = (-1)**b_i`` where ``b_i`` is bit ``i`` of
  ``t`` (so ``x_i = +1`` is bit 0, the bit convention of :mod:`lca.oracle`).
* **Path** (restriction, node of a tree): a tuple of ``(variable, value)``
  pairs, ``value`` in ``{-1, +1}``, each variable at most once. ``f_α`` is a
  function of the *free* variables in increasing order; its table uses the
  same bit convention with bit ``j`` standing for the ``j``-th free variable.
  Noise re-randomizes free coordinates only.
* **Fourier**: ``fhat(S) = E[f(x) prod_{i in S} x_i]``, indexed by the bitmask
  ``S`` (bit ``i`` set iff ``i in S``).
* **Nested tree**: a leaf is the int ``+1`` or ``-1``; an internal node is
  ``{"var": i, "minus": subtree, "plus": subtree}`` where ``"minus"`` is the
  branch ``x_i == -1`` (the format ``lca.targets.DecisionTree.from_nested``
  reads).

Example:
    >>> import numpy as np
    >>> table = np.array([1, -1, -1, 1], dtype=np.int8)   # x_0 * x_1
    >>> float(noise_sensitivity(table, 0.5))               # (1 - (1-p)**2) / 2
    0.375
    >>> opt_depth(table, 1).distance
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lca import derive
from lca._validate import check_flag, check_int, check_real
from lca.oracle import CountingOracle, Oracle

__all__ = [
    "MAX_ENUMERATION_VARIABLES",
    "MAX_OPTIMUM_VARIABLES",
    "Optimum",
    "truth_table",
    "restrict",
    "mean",
    "distance",
    "fourier",
    "fourier_degree",
    "noise_sensitivity",
    "scores",
    "opt_size",
    "opt_depth",
]

MAX_ENUMERATION_VARIABLES = 20
"""Most free variables :func:`truth_table` enumerates (``2**20`` points)."""

MAX_OPTIMUM_VARIABLES = 12
"""Most variables :func:`opt_size` / :func:`opt_depth` accept (``3**12`` subcubes)."""

_CHUNK_ROWS = 1 << 16  # rows per oracle call: bounds memory at ~64K * n bytes

FunctionLike = Oracle | np.ndarray
NestedTree = int | dict


# --------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------

def _check_table(table: Any, what: str) -> tuple[np.ndarray, int]:
    if not isinstance(table, np.ndarray):
        raise TypeError(
            f"{what} must be an lca.oracle.Oracle or a truth table (1-D numpy "
            f"integer array of ±1 of length 2**n); got {type(table).__name__}"
        )
    if table.dtype == np.bool_ or not np.issubdtype(table.dtype, np.integer):
        raise TypeError(f"{what} must be a truth table of integers ±1; got dtype {table.dtype}")
    if table.ndim != 1 or table.size == 0 or table.size & (table.size - 1):
        raise TypeError(
            f"{what} must be a truth table of shape (2**n,); got shape {table.shape}"
        )
    if not np.all((table == 1) | (table == -1)):
        bad = table[(table != 1) & (table != -1)][0]
        raise ValueError(f"{what} must contain only -1 and +1; found {int(bad)}")
    return np.ascontiguousarray(table, dtype=np.int8), table.size.bit_length() - 1


def _as_table(f: Any, what: str) -> tuple[np.ndarray, int]:
    if isinstance(f, Oracle):
        return truth_table(f), f.n
    return _check_table(f, what)


def _function_n(f: Any, what: str) -> int:
    """``n`` of an oracle or a table, without enumerating the oracle."""
    if isinstance(f, Oracle):
        return f.n
    return _check_table(f, what)[1]


def _check_path(path: Any, n: int, where: str) -> dict[int, int]:
    """Validate a path (:func:`lca.derive.check_path`); ``{variable: value}`` in path order."""
    return dict(derive.check_path(path, n, where))


def _check_noise_rate(p: Any, where: str) -> float:
    return check_real(where, "p", p, 0.0, 1.0, open_low=False, open_high=False)


# --------------------------------------------------------------------------
# Part A: enumeration references
# --------------------------------------------------------------------------

def truth_table(oracle: Oracle, path: Sequence[tuple[int, int]] = ()) -> np.ndarray:
    """Return ``f_α`` on all points of the subcube ``α = path``, exactly.

    Args:
        oracle: the function ``f``.
        path: the restriction ``α`` (default: none, the whole cube).

    Returns:
        ``int8`` array of length ``2**k``, ``k`` the number of free variables;
        entry ``t`` is ``f`` at the point whose ``j``-th free variable is
        ``(-1)**(bit j of t)`` (see the module docstring).

    Raises:
        ValueError: more than :data:`MAX_ENUMERATION_VARIABLES` free variables.
        lca.oracle.OracleError: the oracle answered something other than ``±1``.

    The oracle is queried in increasing index order, in chunks of at most
    65536 rows; the result does not depend on the chunking.
    """
    checked = CountingOracle(oracle)  # validates the type here and every answer below
    n = oracle.n
    fixed = _check_path(path, n, "truth_table")
    free = np.array([i for i in range(n) if i not in fixed], dtype=np.int64)
    k = free.size
    if k > MAX_ENUMERATION_VARIABLES:
        raise ValueError(
            f"truth_table enumerates 2**k points and supports at most "
            f"{MAX_ENUMERATION_VARIABLES} free variables; got k={k} (n={n}, "
            f"{len(fixed)} fixed by the path)"
        )
    base = np.zeros(n, dtype=np.int8)
    for var, value in fixed.items():
        base[var] = value
    shifts = np.arange(k, dtype=np.int64)
    table = np.empty(1 << k, dtype=np.int8)
    for start in range(0, 1 << k, _CHUNK_ROWS):
        stop = min(start + _CHUNK_ROWS, 1 << k)
        bits = (np.arange(start, stop, dtype=np.int64)[:, None] >> shifts) & 1
        points = np.tile(base, (stop - start, 1))
        points[:, free] = (1 - 2 * bits).astype(np.int8)
        table[start:stop] = checked.query(points)
    return table


def _restrict_table(table: np.ndarray, n: int, fixed: dict[int, int]) -> np.ndarray:
    if not fixed:
        return table
    # C-order axis n-1-i of the (2,)*n view is bit i, i.e. variable i.
    index: list[Any] = [slice(None)] * n
    for var, value in fixed.items():
        index[n - 1 - var] = 0 if value == 1 else 1
    return np.ascontiguousarray(table.reshape((2,) * n)[tuple(index)]).reshape(-1)


def restrict(
    f: FunctionLike, path: Sequence[tuple[int, int]]
) -> tuple[np.ndarray, tuple[int, ...]]:
    """Return the truth table of ``f_α`` and its free variables, exactly.

    For an oracle only the ``2**k`` points of the subcube are queried, so ``n``
    may exceed :data:`MAX_ENUMERATION_VARIABLES` when the path is long enough.

    Returns:
        ``(table, free_vars)``: ``table`` as in :func:`truth_table` and
        ``free_vars`` the free variables in increasing order (bit ``j`` of a
        table index is variable ``free_vars[j]``).
    """
    table, free, _ = _restricted(f, path, "restrict")
    if isinstance(f, np.ndarray) and np.shares_memory(table, f):
        table = table.copy()  # never hand back a view of the caller's array
    return table, free


def _restricted(f: Any, path: Any, where: str) -> tuple[np.ndarray, tuple[int, ...], int]:
    n = _function_n(f, f"{where}: f")
    fixed = _check_path(path, n, where)
    free = tuple(i for i in range(n) if i not in fixed)
    if isinstance(f, Oracle):
        return truth_table(f, path), free, n
    table, _ = _check_table(f, f"{where}: f")
    return _restrict_table(table, n, fixed), free, n


def mean(f: FunctionLike, path: Sequence[tuple[int, int]] = ()) -> float:
    """Return ``E[f_α(x)]`` for uniform ``x`` over the subcube ``α = path``, exactly."""
    table, _, _ = _restricted(f, path, "mean")
    return int(table.sum(dtype=np.int64)) / table.size


def distance(f: FunctionLike, g: FunctionLike) -> float:
    """Return ``dist(f, g) = Pr_x[f(x) != g(x)]`` for uniform ``x``, exactly."""
    table_f, n_f = _as_table(f, "distance: f")
    table_g, n_g = _as_table(g, "distance: g")
    if n_f != n_g:
        raise ValueError(f"distance: f and g must have the same n; got {n_f} and {n_g}")
    return int(np.count_nonzero(table_f != table_g)) / table_f.size


def _walsh_hadamard_inplace(values: np.ndarray) -> None:
    """Unnormalised WHT in place: ``values[S] <- sum_t (-1)**|S & t| values[t]``."""
    assert values.ndim == 1 and values.flags.c_contiguous
    n = values.size.bit_length() - 1
    for i in range(n):  # one butterfly stage per variable, vectorised
        view = values.reshape(-1, 2, 1 << i)
        low = view[:, 0, :].copy()
        view[:, 0, :] += view[:, 1, :]
        np.subtract(low, view[:, 1, :], out=view[:, 1, :])


def _spectrum(table: np.ndarray) -> np.ndarray:
    """Integer coefficients ``2**n * fhat(S)`` (exact in int64)."""
    coefficients = table.astype(np.int64)
    _walsh_hadamard_inplace(coefficients)
    return coefficients


def _levels(n: int) -> np.ndarray:
    return np.bitwise_count(np.arange(1 << n, dtype=np.uint32)).astype(np.int64)


def fourier(f: FunctionLike) -> np.ndarray:
    """Return all Fourier coefficients ``fhat(S)``, indexed by the bitmask ``S``.

    Exact: computed in integers by a fast Walsh–Hadamard transform
    (``O(n 2**n)``) and divided by ``2**n``, a power of two.
    """
    table, _ = _as_table(f, "fourier: f")
    return _spectrum(table) / float(table.size)


def fourier_degree(f: FunctionLike) -> int:
    """Return ``max{|S| : fhat(S) != 0}`` (0 for a constant), exactly."""
    table, n = _as_table(f, "fourier_degree: f")
    return int(_levels(n)[_spectrum(table) != 0].max())


def _level_weights(coefficients: np.ndarray, levels: np.ndarray, n: int) -> np.ndarray:
    # Squares are <= 4**20 and their sum is 4**n (Parseval), so float64 is exact.
    return np.bincount(levels, weights=coefficients.astype(np.float64) ** 2, minlength=n + 1)


def _noise_sensitivity_table(table: np.ndarray, p: float) -> float:
    k = table.size.bit_length() - 1
    weights = _level_weights(_spectrum(table), _levels(k), k)
    rho = 1.0 - p
    # NS_p = 1/2 - 1/2 sum_S rho^|S| fhat(S)^2 = 1/2 sum_S (1 - rho^|S|) fhat(S)^2
    # (Parseval), the second form has no cancellation at small p.
    decay = 1.0 - rho ** np.arange(k + 1, dtype=np.float64)
    return float(np.dot(decay, weights) / (2.0 * float(table.size) ** 2))


def noise_sensitivity(f: FunctionLike, p: float, path: Sequence[tuple[int, int]] = ()) -> float:
    """Return ``NS_p(f_α)`` exactly, ``α = path``.

    ``NS_p(g) = Pr[g(x) != g(y)]``, ``x`` uniform on the free coordinates and
    ``y`` a p-noisy copy (each free coordinate re-randomized with probability
    ``p``, i.e. flipped with probability ``p/2``). Computed from the spectrum:
    ``NS_p = 1/2 - 1/2 sum_S (1-p)^|S| fhat(S)^2``.
    """
    p = _check_noise_rate(p, "noise_sensitivity")
    table, _, _ = _restricted(f, path, "noise_sensitivity")
    return _noise_sensitivity_table(table, p)


def scores(f: FunctionLike, p: float, path: Sequence[tuple[int, int]] = ()) -> np.ndarray:
    """Return ``Score_i(f_α, p)`` for every variable ``i``, exactly, ``α = path``.

    ``Score_i(g, p) = NS_p(g) - E_b[NS_p(g_{x_i=b})]`` (Definition "Score of a
    variable"). Expanding both sides in the Fourier basis gives
    ``Score_i = p/2 * sum_{S ∋ i} (1-p)^(|S|-1) fhat(S)^2``, which is what is
    computed; the tests check it against the definition.

    Returns:
        float64 array of length ``n`` (the ``n`` of ``f``, not of ``f_α``):
        entry ``i`` is the score of variable ``i``; variables fixed by the
        path get 0.
    """
    p = _check_noise_rate(p, "scores")
    table, free, n = _restricted(f, path, "scores")
    k = len(free)
    coefficients = _spectrum(table)
    levels = _levels(k)
    rho = 1.0 - p
    # rho^(|S|-1) for |S| >= 1; 0.0**0 == 1.0 so p == 1 needs no special case.
    powers = rho ** np.arange(max(k, 1), dtype=np.float64)
    out = np.zeros(n, dtype=np.float64)
    for j, var in enumerate(free):
        contains = ((np.arange(1 << k) >> j) & 1).astype(bool)
        weights = _level_weights(coefficients[contains], levels[contains], k)
        out[var] = p / 2.0 * float(np.dot(powers, weights[1:])) / float(table.size) ** 2
    return out


# --------------------------------------------------------------------------
# Part B: exact optimum over decision trees, DP over subcubes
# --------------------------------------------------------------------------
#
# A subcube is c in {+1, -1, *}^n, encoded as code(c) = sum_i digit_i 3**i with
# digit 0 for x_i = +1, 1 for x_i = -1 and 2 for a star (free). So the
# star-free codes carry the truth-table bits, the root (all stars) is 3**n - 1,
# and for a star at i the children are code - 2*3**i (x_i = +1) and
# code - 3**i (x_i = -1). Viewing a length-3**n array as
# (3**(n-1-i), 3, 3**i) puts digit i on the middle axis, so "every subcube with
# a star at i" and "its two children" are three strided slices: no index
# arrays, one numpy operation per (variable, budget).

@dataclass(frozen=True)
class Optimum:
    """The exact optimum of :func:`opt_size` or :func:`opt_depth`.

    Attributes:
        distance: ``errors / 2**n``, the distance from ``f`` to the closest tree
            in the class.
        errors: the number of points where that tree and ``f`` differ.
        tree: an optimal tree as a nested tree (module docstring) when asked
            for with ``return_tree=True``, else ``None``.
    """

    distance: float
    errors: int
    tree: NestedTree | None = None


def _digit_view(values: np.ndarray, n: int, i: int) -> np.ndarray:
    return values.reshape(3 ** (n - 1 - i), 3, 3 ** i)


def _subcube_counts(table: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(#points with f=+1, #points)`` for every subcube code."""
    plus = (table == 1).astype(np.int32).reshape((2,) * n)
    size = np.ones((2,) * n, dtype=np.int32)
    for axis in range(n):  # append the star (union of the two halves) along each axis
        plus = np.concatenate([plus, plus.sum(axis=axis, keepdims=True)], axis=axis)
        size = np.concatenate([size, size.sum(axis=axis, keepdims=True)], axis=axis)
    return plus.reshape(-1), size.reshape(-1)


def _prepare(f: Any, where: str) -> tuple[int, np.ndarray, np.ndarray]:
    n = _function_n(f, f"{where}: f")
    if n > MAX_OPTIMUM_VARIABLES:
        raise ValueError(
            f"{where} works on all 3**n subcubes and supports n <= "
            f"{MAX_OPTIMUM_VARIABLES}; got n={n}"
        )
    table, _ = _as_table(f, f"{where}: f")
    plus, size = _subcube_counts(table, n)
    leaf_errors = np.minimum(plus, size - plus)
    return n, leaf_errors, plus


def _star_digits(code: int, n: int) -> list[int]:
    return [i for i in range(n) if (code // 3 ** i) % 3 == 2]


def _leaf_label(plus: np.ndarray, code: int, n: int) -> int:
    # Majority label; an exact tie gets +1.
    stars = len(_star_digits(code, n))
    return 1 if 2 * int(plus[code]) >= 1 << stars else -1


def opt_depth(f: FunctionLike, d: int, *, return_tree: bool = False) -> Optimum:
    """Return the distance from ``f`` to the closest decision tree of depth ``<= d``.

    Exact and deterministic. Dynamic programming over subcubes ``c``:
    ``D_0(c) = min(#plus(c), #minus(c))`` and
    ``D_k(c) = min(D_0(c), min_{i star in c} D_{k-1}(c|x_i=-1) + D_{k-1}(c|x_i=+1))``;
    the answer is ``D_d(root) / 2**n``. Depths beyond ``n`` change nothing, and
    the recursion stops early once ``D_k == D_{k-1}`` everywhere (a fixed point).

    Cost: ``O(min(d, n) * n * 3**(n-1))`` int32 operations, vectorised over
    subcubes, and ``(min(d, n) + 1) * 3**n * 4`` bytes (n = 12: 2 MB a level).

    Args:
        f: an oracle or a truth table with ``n <= 12`` variables.
        d: the depth bound, an int ``>= 0`` (depth 0 is a single leaf).
        return_tree: also return an optimal tree.

    Returns:
        :class:`Optimum`. Tie-breaking for the tree, at every node: the
        smallest depth achieving the node's optimum (so a leaf whenever a leaf
        is optimal), then the lowest variable; leaves take the majority label,
        ``+1`` on a tie.
    """
    d = check_int("opt_depth", "d", d, 0)
    return_tree = check_flag("opt_depth", "return_tree", return_tree)
    n, leaf_errors, plus = _prepare(f, "opt_depth")
    levels = [leaf_errors]
    for _ in range(min(d, n)):
        previous = levels[-1]
        current = leaf_errors.copy()
        for i in range(n):
            before = _digit_view(previous, n, i)
            after = _digit_view(current, n, i)
            np.minimum(after[:, 2, :], before[:, 0, :] + before[:, 1, :], out=after[:, 2, :])
        if np.array_equal(current, previous):
            break
        levels.append(current)
    root = 3 ** n - 1
    errors = int(levels[-1][root])
    tree = None
    if return_tree:
        def build(code: int, depth: int) -> NestedTree:
            target = levels[depth][code]
            while depth > 0 and levels[depth - 1][code] == target:
                depth -= 1
            if depth == 0:
                return _leaf_label(plus, code, n)
            for i in _star_digits(code, n):
                minus, plus_child = code - 3 ** i, code - 2 * 3 ** i
                if levels[depth - 1][minus] + levels[depth - 1][plus_child] == target:
                    return {"var": i, "minus": build(minus, depth - 1),
                            "plus": build(plus_child, depth - 1)}
            raise AssertionError("opt_depth: no split attains the optimum")

        tree = build(root, len(levels) - 1)
    return Optimum(distance=errors / 2 ** n, errors=errors, tree=tree)


def opt_size(f: FunctionLike, s: int, *, return_tree: bool = False) -> Optimum:
    """Return the distance from ``f`` to the closest decision tree with ``<= s`` leaves.

    Exact and deterministic. Dynamic programming over subcubes ``c``:
    ``S_1(c) = min(#plus(c), #minus(c))`` and
    ``S_k(c) = min(S_{k-1}(c), min_{i star in c, k1+k2=k} S_{k1}(c|x_i=-1) + S_{k2}(c|x_i=+1))``;
    the answer is ``S_s(root) / 2**n``. The recursion stops early once the root
    reaches 0 errors. (It may *not* stop when ``S_k == S_{k-1}`` everywhere: for
    the parity of two variables ``S_2 == S_3`` on every subcube, yet
    ``S_4(root) = 0 < S_3(root)``.)

    Cost: about ``s**2 / 2 * n * 3**(n-1)`` int32 operations, vectorised over
    subcubes, and ``s * 3**n * 4`` bytes (n = 12, s = 16: 34 MB).

    Args:
        f: an oracle or a truth table with ``n <= 12`` variables.
        s: the size bound, an int ``>= 1`` (number of leaves).
        return_tree: also return an optimal tree.

    Returns:
        :class:`Optimum`. Tie-breaking for the tree, at every node: the fewest
        leaves achieving the node's optimum (so a leaf whenever a leaf is
        optimal, and the whole tree has the fewest leaves among optimal trees),
        then the lowest variable, then the smallest leaf budget for the
        ``"minus"`` branch; leaves take the majority label, ``+1`` on a tie.
    """
    s = check_int("opt_size", "s", s, 1)
    return_tree = check_flag("opt_size", "return_tree", return_tree)
    n, leaf_errors, plus = _prepare(f, "opt_size")
    root = 3 ** n - 1
    best: list[np.ndarray] = [leaf_errors, leaf_errors]  # best[k]: at most k leaves; [0] unused
    scratch = np.empty(3 ** max(n - 1, 0), dtype=np.int32)
    for k in range(2, s + 1):
        if best[-1][root] == 0:
            break
        current = best[k - 1].copy()
        for i in range(n):
            target = _digit_view(current, n, i)[:, 2, :]
            pair = scratch.reshape(target.shape)
            for k_minus in range(1, k):
                minus = _digit_view(best[k_minus], n, i)[:, 1, :]
                plus_child = _digit_view(best[k - k_minus], n, i)[:, 0, :]
                np.add(minus, plus_child, out=pair)
                np.minimum(target, pair, out=target)
        best.append(current)
    errors = int(best[-1][root])
    tree = None
    if return_tree:
        def build(code: int, budget: int) -> NestedTree:
            target = best[budget][code]
            while budget > 1 and best[budget - 1][code] == target:
                budget -= 1
            if budget == 1:
                return _leaf_label(plus, code, n)
            for i in _star_digits(code, n):
                minus, plus_child = code - 3 ** i, code - 2 * 3 ** i
                for k_minus in range(1, budget):
                    if best[k_minus][minus] + best[budget - k_minus][plus_child] == target:
                        return {"var": i, "minus": build(minus, k_minus),
                                "plus": build(plus_child, budget - k_minus)}
            raise AssertionError("opt_size: no split attains the optimum")

        tree = build(root, len(best) - 1)
    return Optimum(distance=errors / 2 ** n, errors=errors, tree=tree)

"""Benchmark functions ``f : {-1,1}^n -> {-1,1}`` with known decision trees.

Every target is an :class:`lca.oracle.Oracle`: a *fixed*, picklable function,
evaluated on a whole ``(m, n)`` batch of ``±1`` rows with numpy (no Python loop
over rows). Where a decision tree computing the function is known, ``size`` is
its number of leaves and ``depth`` its depth, and :meth:`decision_tree` returns
that tree as a :class:`DecisionTree`.

Conventions (shared with :mod:`lca.oracle`):

* The bit of a coordinate is ``b = (1 - x) / 2``: ``+1 <-> 0``, ``-1 <-> 1``.
  Boolean "true" is ``-1`` (bit 1) wherever a target has a logical reading
  (:class:`Tribes`).
* A tree node queries ``x[var]``; its ``minus`` child is taken when
  ``x[var] == -1`` and its ``plus`` child when ``x[var] == +1``.
* Seeded constructors (:func:`random_tree`, :func:`parity`, ...) are
  deterministic functions of their arguments. Their bits come only from the
  raw Philox4x64-10 stream (``numpy.random.Philox(key=K).random_raw``, which
  NumPy keeps stable across releases) keyed by
  ``K = xxh3_128(b"lca/targets/v1" || u64le(len(P)) || P || u64le(seed))`` for
  a per-use purpose string ``P``; ``Generator`` methods and global RNG state
  are never used. Integers below a bound are drawn by rejection from the
  smallest covering power of two; bits are read least significant first.

Why one module of this size: each target is small (a class and its
constructor), and together they are the suite's one catalogue; the seeded
bits they draw come from :mod:`lca.derive`.
"""

from __future__ import annotations

import bisect
import json
import math
import os
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from lca._validate import MAX_N, check_int, check_seed, is_int
from lca.derive import WordStream, constructor_key, pack_bits, point_hashes
from lca.oracle import Oracle, check_points, oracle_n

__all__ = [
    "DecisionTree",
    "random_tree",
    "LabelNoise",
    "with_label_noise",
    "Parity",
    "parity",
    "Multiplexer",
    "multiplexer",
    "Tribes",
    "tribes",
    "Majority",
    "majority",
    "Junta",
    "junta",
]

Nested = int | dict

_U64 = (1 << 64) - 1
_MAX_JUNTA_BITS = 24
_LABEL_SCHEMES = ("iid", "sibling_differing")


# --------------------------------------------------------------------------
# validation helpers


def _check_n(n: Any, owner: str) -> int:
    return check_int(owner, "n", n, 1, MAX_N, high_text="2**31 - 1")


def _check_variables(variables: Any, n: int, owner: str,
                     name: str = "variables") -> np.ndarray:
    """Return distinct variable indices in ``[0, n)`` as an ``int64`` array."""
    expected = f"a sequence of distinct ints in [0, {n})"
    if isinstance(variables, np.ndarray):
        if variables.ndim != 1 or not all(is_int(v) for v in variables.tolist()) \
                or variables.dtype == np.bool_:
            raise TypeError(
                f"The {name!r} parameter of {owner} must be {expected}. "
                f"Got an array of dtype {variables.dtype} and shape "
                f"{variables.shape} instead."
            )
        items = variables.tolist()
    elif isinstance(variables, (list, tuple, range)):
        items = list(variables)
        bad = [v for v in items if not is_int(v)]
        if bad:
            raise TypeError(
                f"The {name!r} parameter of {owner} must be {expected}. "
                f"Got element {bad[0]!r} of type {type(bad[0]).__name__} instead."
            )
    else:
        raise TypeError(
            f"The {name!r} parameter of {owner} must be {expected} "
            f"(list, tuple, range or 1-d integer array). "
            f"Got {type(variables).__name__} instead."
        )
    items = [int(v) for v in items]
    out_of_range = [v for v in items if not 0 <= v < n]
    if out_of_range:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be {expected}. "
            f"Got {out_of_range[0]} instead."
        )
    if len(set(items)) != len(items):
        repeated = next(v for i, v in enumerate(items) if v in items[:i])
        raise ValueError(
            f"The {name!r} parameter of {owner} must be {expected}. "
            f"Got {repeated} more than once."
        )
    return np.asarray(items, dtype=np.int64)


def _check_signs(values: Any, length: int, name: str, owner: str) -> np.ndarray:
    """Return a length-``length`` ``int8`` array of ``±1``, else raise."""
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"The {name!r} parameter of {owner} must be an integer array of ±1 "
            f"values. Got dtype {arr.dtype} instead."
        )
    if arr.shape != (length,):
        raise ValueError(
            f"The {name!r} parameter of {owner} must have shape ({length},). "
            f"Got shape {arr.shape} instead."
        )
    if arr.size and not np.all((arr == 1) | (arr == -1)):
        bad = arr[(arr != 1) & (arr != -1)][0]
        raise ValueError(
            f"The {name!r} parameter of {owner} must contain only -1 and +1. "
            f"Got {int(bad)} instead."
        )
    return arr.astype(np.int8)


# --------------------------------------------------------------------------
# explicit decision trees


def _preorder(var: np.ndarray, minus: np.ndarray, plus: np.ndarray,
              owner: str) -> tuple[list[int], list[int]]:
    """Node ids in pre-order (node, minus subtree, plus subtree) and their depths.

    Raises ValueError unless the arrays form one tree rooted at node 0.
    """
    size = len(var)
    seen = np.zeros(size, dtype=bool)
    order: list[int] = []
    depths: list[int] = []
    stack = [(0, 0)]
    while stack:
        node, depth = stack.pop()
        if not 0 <= node < size:
            raise ValueError(f"{owner}: child index {node} is not a node in [0, {size}).")
        if seen[node]:
            raise ValueError(f"{owner}: node {node} is reached twice; not a tree.")
        seen[node] = True
        order.append(node)
        depths.append(depth)
        if var[node] >= 0:
            stack.append((int(plus[node]), depth + 1))
            stack.append((int(minus[node]), depth + 1))
    if not seen.all():
        raise ValueError(
            f"{owner}: node {int(np.flatnonzero(~seen)[0])} is not reachable from "
            "the root (node 0)."
        )
    return order, depths


class DecisionTree(Oracle):
    """An explicit decision tree over ``n`` variables.

    Stored as flat arrays indexed by node id, in pre-order (root 0, then the
    whole ``minus`` subtree, then the ``plus`` subtree):

    * ``var[i]``: variable queried at node ``i``, or ``-1`` at a leaf;
    * ``minus[i]`` / ``plus[i]``: child taken when ``x[var[i]]`` is ``-1`` /
      ``+1`` (``-1`` at a leaf);
    * ``value[i]``: the leaf's label ``±1`` (``0`` at an internal node).

    The nested form used by :meth:`from_nested` and :meth:`to_nested` is: a
    leaf is the int ``+1`` or ``-1``; an internal node is the dict
    ``{"var": i, "minus": subtree, "plus": subtree}``. A variable may repeat on
    a root-to-leaf path (legal, merely redundant). Evaluation walks all rows
    down one level per step: ``depth`` vectorised gathers.

    Args:
        n: number of input variables.
        var, minus, plus, value: the arrays above, in any node order whose
            root is node 0; they are validated and renumbered to pre-order.
    """

    size: int  # an explicit tree knows both
    depth: int

    def __init__(self, n: int, var: Any, minus: Any, plus: Any, value: Any) -> None:
        owner = "DecisionTree"
        self.n = _check_n(n, owner)
        arrays = {}
        for name, arr in (("var", var), ("minus", minus), ("plus", plus), ("value", value)):
            arr = np.asarray(arr)
            if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer) \
                    or arr.ndim != 1:
                raise TypeError(
                    f"The {name!r} parameter of {owner} must be a 1-d integer array. "
                    f"Got dtype {arr.dtype} and shape {arr.shape} instead."
                )
            arrays[name] = arr.astype(np.int64)
        var, minus, plus, value = (arrays[k] for k in ("var", "minus", "plus", "value"))
        if not len(var) == len(minus) == len(plus) == len(value) >= 1:
            raise ValueError(
                f"{owner}: 'var', 'minus', 'plus' and 'value' must have the same "
                f"length >= 1. Got lengths {len(var)}, {len(minus)}, {len(plus)}, "
                f"{len(value)} instead."
            )
        bad = np.flatnonzero((var < -1) | (var >= self.n))
        if bad.size:
            raise ValueError(
                f"{owner}: node {bad[0]} queries variable {var[bad[0]]}, outside "
                f"[0, n) = [0, {self.n})."
            )
        leaf = var == -1
        bad = np.flatnonzero(leaf & (value != 1) & (value != -1))
        if bad.size:
            raise ValueError(
                f"{owner}: leaf {bad[0]} has value {value[bad[0]]}; leaf values "
                "must be -1 or +1."
            )
        order, depths = _preorder(var, minus, plus, owner)
        new_id = np.empty(len(var), dtype=np.int64)
        new_id[order] = np.arange(len(var))
        var = var[order]
        leaf = var == -1
        self.var = var
        self.minus = np.where(leaf, -1, new_id[np.where(leaf, 0, minus[order])])
        self.plus = np.where(leaf, -1, new_id[np.where(leaf, 0, plus[order])])
        self.value = np.where(leaf, value[order], 0).astype(np.int8)
        self.size = int(leaf.sum())
        self.depth = max(depths)
        self.name = f"tree(size={self.size}, depth={self.depth})"
        # Evaluation tables: leaves loop to themselves, so every row may take
        # exactly `depth` steps; child of node i for bit b is at 2*i + b.
        self._query_var = np.where(leaf, 0, var)
        self._child = np.empty(2 * len(var), dtype=np.int64)
        self._child[0::2] = np.where(leaf, np.arange(len(var)), self.plus)
        self._child[1::2] = np.where(leaf, np.arange(len(var)), self.minus)

    @property
    def leaves(self) -> int:
        """Number of leaves (same as :attr:`size`)."""
        return self.size

    def query(self, points: np.ndarray) -> np.ndarray:
        """Value of the tree on each row; deterministic."""
        points = np.ascontiguousarray(check_points(points, self.n))
        m = points.shape[0]
        flat = points.reshape(-1)
        # Flat gathers are ~2.5x faster than points[rows, columns].
        row_start = np.arange(m, dtype=np.int64) * self.n
        node = np.zeros(m, dtype=np.int64)
        for _ in range(self.depth):
            bit = flat[row_start + self._query_var[node]] < 0
            node = self._child[2 * node + bit]
        return self.value[node]

    def decision_tree(self) -> DecisionTree:
        """This tree."""
        return self

    @classmethod
    def from_nested(cls, tree: Nested, n: int) -> DecisionTree:
        """Tree from the nested form described in the class docstring."""
        owner = "DecisionTree.from_nested"
        n = _check_n(n, owner)
        var: list[int] = []
        minus: list[int] = []
        plus: list[int] = []
        value: list[int] = []
        # (subtree, parent id, which child list to patch, path for messages)
        stack: list[tuple[Any, int, list[int] | None, str]] = [(tree, -1, None, "tree")]
        while stack:
            node, parent, slot, path = stack.pop()
            me = len(var)
            if slot is not None:
                slot[parent] = me
            if isinstance(node, dict):
                if set(node) != {"var", "minus", "plus"}:
                    raise ValueError(
                        f"{owner}: internal node at {path} must have exactly the keys "
                        f"'var', 'minus', 'plus'. Got keys {sorted(map(str, node))}."
                    )
                i = node["var"]
                if not is_int(i):
                    raise TypeError(
                        f"{owner}: 'var' at {path} must be an int in [0, {n}). "
                        f"Got {i!r} of type {type(i).__name__} instead."
                    )
                if not 0 <= i < n:
                    raise ValueError(
                        f"{owner}: 'var' at {path} must be an int in [0, {n}). "
                        f"Got {i} instead."
                    )
                var.append(int(i))
                minus.append(-1)
                plus.append(-1)
                value.append(0)
                stack.append((node["plus"], me, plus, path + "['plus']"))
                stack.append((node["minus"], me, minus, path + "['minus']"))
            elif is_int(node):
                if node not in (1, -1):
                    raise ValueError(
                        f"{owner}: leaf at {path} must be -1 or +1. Got {node} instead."
                    )
                var.append(-1)
                minus.append(-1)
                plus.append(-1)
                value.append(int(node))
            else:
                raise TypeError(
                    f"{owner}: node at {path} must be a leaf (the int -1 or +1) or a "
                    "dict with keys 'var', 'minus', 'plus'. "
                    f"Got {node!r} of type {type(node).__name__} instead."
                )
        return cls(n, var, minus, plus, value)

    def to_nested(self) -> Nested:
        """Nested form (see the class docstring); inverse of :meth:`from_nested`."""
        built: list[Nested] = [0] * len(self.var)
        for node in range(len(self.var) - 1, -1, -1):  # children come after parents
            if self.var[node] < 0:
                built[node] = int(self.value[node])
            else:
                built[node] = {"var": int(self.var[node]),
                               "minus": built[self.minus[node]],
                               "plus": built[self.plus[node]]}
        return built[0]

    @classmethod
    def from_json(cls, source: str | os.PathLike, n: int | None = None) -> DecisionTree:
        """Tree from JSON text or a JSON file: ``{"n": n, "tree": nested}``.

        ``source`` is read as JSON text when it is a ``str`` starting with
        ``{`` (after whitespace), otherwise as a path. ``"n"`` may be omitted
        from the JSON if ``n`` is given; if both are present they must agree.
        """
        owner = "DecisionTree.from_json"
        if isinstance(source, str) and source.lstrip().startswith("{"):
            text = source
        elif isinstance(source, (str, os.PathLike)):
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
        else:
            raise TypeError(
                f"The 'source' parameter of {owner} must be JSON text or a path. "
                f"Got {type(source).__name__} instead."
            )
        data = json.loads(text)
        if not isinstance(data, dict) or "tree" not in data or not set(data) <= {"n", "tree"}:
            keys = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ValueError(
                f"{owner}: expected a JSON object with key 'tree' and optional key "
                f"'n'. Got {keys} instead."
            )
        if "n" in data:
            json_n = check_int(f"{owner} (JSON)", "n", data["n"], 1)
            if n is not None and _check_n(n, owner) != json_n:
                raise ValueError(f"{owner}: n={n} given but the JSON says n={json_n}.")
            n = json_n
        elif n is None:
            raise ValueError(f"{owner}: the JSON has no 'n'; pass n.")
        return cls.from_nested(data["tree"], n)

    def to_json(self) -> str:
        """JSON text ``{"n": n, "tree": nested}``; inverse of :meth:`from_json`."""
        return json.dumps({"n": self.n, "tree": self.to_nested()})


def random_tree(n: int, leaves: int, seed: int, labels: str = "iid") -> DecisionTree:
    """Random decision tree with exactly ``leaves`` leaves over ``n`` variables.

    Shape: start from a single leaf; while there are fewer than ``leaves``
    leaves, pick a uniform leaf among those of depth ``< n`` and split it on a
    uniform variable not already on its root path. Labels, read in pre-order
    from a separate stream (so the shape does not depend on ``labels``):

    * ``"iid"``: every leaf is uniform ``±1``, independently;
    * ``"sibling_differing"``: at every node whose two children are both
      leaves, the ``minus`` leaf is uniform and the ``plus`` leaf is its
      negation; every other leaf is uniform, independently.

    Deterministic in ``(n, leaves, seed, labels)``; purposes
    ``"random_tree/shape"`` and ``"random_tree/labels"``.
    """
    owner = "random_tree"
    n = _check_n(n, owner)
    leaves = check_int(owner, "leaves", leaves, 1, 1 << n, high_text="2**n")
    seed = check_seed(owner, seed)
    if not isinstance(labels, str):
        raise TypeError(
            f"The 'labels' parameter of {owner} must be one of {_LABEL_SCHEMES}. "
            f"Got {labels!r} of type {type(labels).__name__} instead."
        )
    if labels not in _LABEL_SCHEMES:
        raise ValueError(
            f"The 'labels' parameter of {owner} must be one of {_LABEL_SCHEMES}. "
            f"Got {labels!r} instead."
        )
    shape = WordStream("random_tree/shape", seed)
    var, minus, plus = [-1], [-1], [-1]
    path: list[list[int]] = [[]]  # sorted variables on each node's root path
    splittable = [0]
    for _ in range(leaves - 1):
        pick = shape.below(len(splittable))
        node = splittable[pick]
        splittable[pick] = splittable[-1]
        splittable.pop()
        # The u-th variable (in increasing order) not on the sorted path p is
        # u + #{i : p[i] - i <= u}; p[i] - i is nondecreasing, so bisect.
        used = path[node]
        skip = shape.below(n - len(used))
        chosen = skip + bisect.bisect_right(range(len(used)), skip,
                                            key=lambda i: used[i] - i)
        child_path = used.copy()
        bisect.insort(child_path, chosen)
        var[node] = chosen
        minus[node], plus[node] = len(var), len(var) + 1
        for _child in range(2):
            var.append(-1)
            minus.append(-1)
            plus.append(-1)
            path.append(child_path)
        if len(child_path) < n:
            splittable.extend((minus[node], plus[node]))
    order, _depths = _preorder(np.asarray(var), np.asarray(minus), np.asarray(plus), owner)
    new_id = np.empty(len(var), dtype=np.int64)
    new_id[order] = np.arange(len(var))
    var_arr = np.asarray(var, dtype=np.int64)[order]
    is_leaf = var_arr == -1
    minus_arr = np.where(is_leaf, -1, new_id[np.asarray(minus)[order].clip(0)])
    plus_arr = np.where(is_leaf, -1, new_id[np.asarray(plus)[order].clip(0)])
    value = np.zeros(len(var), dtype=np.int8)
    value[is_leaf] = WordStream("random_tree/labels", seed).signs(leaves)
    if labels == "sibling_differing":
        bottom = np.flatnonzero(~is_leaf)
        bottom = bottom[is_leaf[minus_arr[bottom]] & is_leaf[plus_arr[bottom]]]
        value[plus_arr[bottom]] = -value[minus_arr[bottom]]
    tree = DecisionTree(n, var_arr, minus_arr, plus_arr, value)
    tree.name = f"random_tree(n={n}, leaves={leaves}, seed={seed}, labels={labels!r})"
    return tree


# --------------------------------------------------------------------------
# label noise


class LabelNoise(Oracle):
    """``target`` with the label of a fixed, pseudo-random set of points flipped.

    ``f(x) = -target(x)`` iff ``h(x) < T`` where ``T = floor(rate * 2**64)``
    (exact integer arithmetic on the binary value of ``rate``) and

        h(x) = mix(... mix(mix(K ^ w_0) ^ w_1) ... ^ w_{W-1}),

    with ``w_0 .. w_{W-1}`` the ``W = ceil(n/64)`` little-endian ``uint64``
    words of the bits ``b_i = (1 - x_i)/2`` (coordinate ``64w+j`` is bit ``j``
    of word ``w``, tail bits zero), ``mix`` the SplitMix64 finaliser
    ``z ^= z>>30; z *= 0xbf58476d1ce4e5b9; z ^= z>>27; z *= 0x94d049bb133111eb;
    z ^= z>>31`` (wrapping), and ``K`` the low 64 bits of the key for purpose
    ``"label_noise"`` and ``seed`` (module docstring). So ``f`` is a fixed
    function of ``x``: independent of batching, order and call count.

    The target's ``size``/``depth`` do not describe the noisy function, so
    both are ``None``; the target and rate stay available as :attr:`target`
    and :attr:`rate` (:attr:`threshold` is ``T``).
    """

    def __init__(self, target: Oracle, rate: float, seed: int) -> None:
        owner = "with_label_noise"
        if not isinstance(target, Oracle):
            raise TypeError(
                f"The 'target' parameter of {owner} must be an lca.oracle.Oracle. "
                f"Got {type(target).__name__} instead."
            )
        oracle_n(target)
        if isinstance(rate, (bool, np.bool_)) or not isinstance(
                rate, (int, float, Fraction, np.integer, np.floating)):
            raise TypeError(
                f"The 'rate' parameter of {owner} must be a real number in [0, 0.5]. "
                f"Got {rate!r} of type {type(rate).__name__} instead."
            )
        if not (isinstance(rate, (int, Fraction, np.integer)) or math.isfinite(rate)) \
                or not 0 <= rate <= 0.5:
            raise ValueError(
                f"The 'rate' parameter of {owner} must be a real number in [0, 0.5]. "
                f"Got {rate!r} instead."
            )
        self.seed = check_seed(owner, seed)
        self.target = target
        self.rate = rate
        self.n = target.n
        self.threshold = math.floor(Fraction(rate) * (1 << 64))
        self.name = f"{target.name}+noise({float(rate):g}, seed={self.seed})"
        self.size = None
        self.depth = None
        self._key = np.uint64(constructor_key("label_noise", self.seed) & _U64)

    def flips(self, points: np.ndarray) -> np.ndarray:
        """Boolean mask of the rows whose label is flipped; deterministic."""
        return self._flips(check_points(points, self.n))

    def _flips(self, points: np.ndarray) -> np.ndarray:
        return point_hashes(self._key, pack_bits(points)) < np.uint64(self.threshold)

    def query(self, points: np.ndarray) -> np.ndarray:
        """Noisy value of the target on each row; deterministic."""
        # Validate once here; the target validates its own input again.
        points = check_points(points, self.n)
        # Flips first: the target may write into its input.
        flips = self._flips(points)
        values = np.asarray(self.target.query(points)).astype(np.int8)
        return np.where(flips, -values, values).astype(np.int8)

    def describe(self, variable: int, bit: int, path: tuple = ()) -> str:
        """The target's description: label noise does not change what a bit means."""
        return self.target.describe(variable, bit, path)


def with_label_noise(target: Oracle, rate: float, seed: int) -> LabelNoise:
    """``target`` with fixed label noise of rate ``rate`` in ``[0, 0.5]`` (:class:`LabelNoise`)."""
    return LabelNoise(target, rate, seed)


# --------------------------------------------------------------------------
# structured targets


def _index_bits(points: np.ndarray, variables: np.ndarray) -> np.ndarray:
    """Integer whose bit ``j`` is the bit ``(1 - x)/2`` of ``variables[j]``."""
    bits = (points[:, variables] < 0).astype(np.int64)
    return bits @ (np.int64(1) << np.arange(len(variables), dtype=np.int64))


class Parity(Oracle):
    """Parity of the given variables: ``f(x) = prod_i x[variables[i]]``.

    ``size = 2**k`` and ``depth = k`` for ``k = len(variables)`` (the full
    tree, which is optimal). ``k = 0`` is the constant ``+1``.
    """

    def __init__(self, n: int, variables: Sequence[int] | np.ndarray) -> None:
        self.n = _check_n(n, "Parity")
        self.variables = np.sort(_check_variables(variables, self.n, "Parity"))
        k = len(self.variables)
        self.size = 2 ** k
        self.depth = k
        self.name = f"parity(k={k})"

    def query(self, points: np.ndarray) -> np.ndarray:
        """Parity on each row; deterministic."""
        points = check_points(points, self.n)
        odd = np.count_nonzero(points[:, self.variables] < 0, axis=1) & 1
        return (1 - 2 * odd).astype(np.int8)

    def decision_tree(self) -> DecisionTree:
        """The full tree of depth ``k``, querying variables in increasing order."""
        def build(i: int, sign: int) -> Nested:
            if i == len(self.variables):
                return sign
            return {"var": int(self.variables[i]),
                    "minus": build(i + 1, -sign), "plus": build(i + 1, sign)}
        return DecisionTree.from_nested(build(0, 1), self.n)


def parity(n: int, k: int, seed: int) -> Parity:
    """Parity of ``k`` distinct variables drawn uniformly from ``n`` (purpose ``"parity"``)."""
    n = _check_n(n, "parity")
    k = check_int("parity", "k", k, 0, n, high_text="n")
    return Parity(n, WordStream("parity", check_seed("parity", seed)).sample(n, k))


class Multiplexer(Oracle):
    """Addressing function: ``k`` address variables select one of ``2**k`` data variables.

    ``variables`` lists the ``k`` address variables then the ``2**k`` data
    variables (default ``range(k + 2**k)``). The address is the integer whose
    bit ``j`` is ``(1 - x[address[j]])/2``; ``f(x) = x[data[address]]``.
    The natural tree (address tree of depth ``k``, then the selected data
    variable) has ``size = 2**(k+1)`` and ``depth = k + 1``.
    """

    def __init__(self, n: int, address_bits: int,
                 variables: Sequence[int] | np.ndarray | None = None) -> None:
        owner = "Multiplexer"
        self.n = _check_n(n, owner)
        k = check_int(owner, "address_bits", address_bits, 0)
        if k + 2 ** k > self.n:
            raise ValueError(
                f"The 'address_bits' parameter of {owner} must be an int k >= 0 with "
                f"k + 2**k <= n = {self.n}. Got {k} instead."
            )
        if variables is None:
            variables = range(k + 2 ** k)
        chosen = _check_variables(variables, self.n, owner)
        if len(chosen) != k + 2 ** k:
            raise ValueError(
                f"The 'variables' parameter of {owner} must have k + 2**k = "
                f"{k + 2 ** k} entries for address_bits={k}. Got {len(chosen)} instead."
            )
        self.address_bits = k
        self.address = chosen[:k]
        self.data = chosen[k:]
        self.size = 2 ** (k + 1)
        self.depth = k + 1
        self.name = f"multiplexer(k={k})"

    def query(self, points: np.ndarray) -> np.ndarray:
        """Selected data variable on each row; deterministic."""
        points = check_points(points, self.n)
        selected = self.data[_index_bits(points, self.address)]
        return points[np.arange(points.shape[0]), selected]

    def decision_tree(self) -> DecisionTree:
        """Address variables in order ``address[0], address[1], ...``, then the data variable."""
        def build(j: int, index: int) -> Nested:
            if j == self.address_bits:
                return {"var": int(self.data[index]), "minus": -1, "plus": 1}
            return {"var": int(self.address[j]),
                    "minus": build(j + 1, index | (1 << j)), "plus": build(j + 1, index)}
        return DecisionTree.from_nested(build(0, 0), self.n)


def multiplexer(n: int, k: int, seed: int) -> Multiplexer:
    """Multiplexer with ``k`` address bits on ``k + 2**k`` distinct variables drawn
    uniformly from ``n``, in random order (purpose ``"multiplexer"``)."""
    n = _check_n(n, "multiplexer")
    k = check_int("multiplexer", "k", k, 0)
    if k + 2 ** k > n:
        raise ValueError(
            f"The 'k' parameter of multiplexer must be an int k >= 0 with "
            f"k + 2**k <= n = {n}. Got {k} instead."
        )
    stream = WordStream("multiplexer", check_seed("multiplexer", seed))
    return Multiplexer(n, k, stream.sample(n, k + 2 ** k))


class Tribes(Oracle):
    """OR of ``count`` ANDs ("tribes") of ``width`` variables each, TRUE being ``-1``.

    ``f(x) = -1`` iff some tribe has all its variables equal to ``-1``; else
    ``+1``. Tribe ``t`` is ``variables[t*width : (t+1)*width]`` (default
    ``range(width*count)``). ``depth = width*count`` (tribes is evasive).
    ``size`` is the leaf count of the natural tree (tribes in order, each
    tribe's variables in order, leaving a tribe at its first ``+1``):
    ``L(c) = width * L(c-1) + 1``, ``L(0) = 1``, i.e.
    ``sum_{i<=count} width**i`` — an upper bound on the minimum size.
    """

    def __init__(self, n: int, width: int, count: int,
                 variables: Sequence[int] | np.ndarray | None = None) -> None:
        owner = "Tribes"
        self.n = _check_n(n, owner)
        self.width = check_int(owner, "width", width, 1, self.n, high_text="n")
        self.count = check_int(owner, "count", count, 1, self.n // self.width,
                               high_text="n // width")
        if variables is None:
            variables = range(self.width * self.count)
        self.variables = _check_variables(variables, self.n, owner)
        if len(self.variables) != self.width * self.count:
            raise ValueError(
                f"The 'variables' parameter of {owner} must have width*count = "
                f"{self.width * self.count} entries. Got {len(self.variables)} instead."
            )
        self.depth = self.width * self.count
        self.size = sum(self.width ** i for i in range(self.count + 1))
        self.name = f"tribes(width={self.width}, count={self.count})"

    def query(self, points: np.ndarray) -> np.ndarray:
        """Tribes on each row; deterministic."""
        points = check_points(points, self.n)
        true = (points[:, self.variables] < 0).reshape(-1, self.count, self.width)
        return np.where(np.any(true.all(axis=2), axis=1), -1, 1).astype(np.int8)

    def decision_tree(self) -> DecisionTree:
        """The natural tree described in the class docstring."""
        def build(tribe: int, j: int) -> Nested:
            if tribe == self.count:
                return 1
            if j == self.width:
                return -1
            return {"var": int(self.variables[tribe * self.width + j]),
                    "minus": build(tribe, j + 1), "plus": build(tribe + 1, 0)}
        return DecisionTree.from_nested(build(0, 0), self.n)


def tribes(n: int, width: int, count: int, seed: int) -> Tribes:
    """Tribes on ``width*count`` distinct variables drawn uniformly from ``n``,
    in random order (purpose ``"tribes"``)."""
    n = _check_n(n, "tribes")
    width = check_int("tribes", "width", width, 1, n, high_text="n")
    count = check_int("tribes", "count", count, 1, n // width, high_text="n // width")
    stream = WordStream("tribes", check_seed("tribes", seed))
    return Tribes(n, width, count, stream.sample(n, width * count))


class Majority(Oracle):
    """Majority of an odd number ``k`` of variables: ``f(x) = sign(sum x[variables])``.

    ``depth = k`` (majority is evasive). ``size = 2 * comb(k, (k-1)/2)`` is
    the leaf count of the natural tree that queries variables in increasing
    order and stops as soon as the majority is decided.
    """

    def __init__(self, n: int, variables: Sequence[int] | np.ndarray) -> None:
        self.n = _check_n(n, "Majority")
        self.variables = np.sort(_check_variables(variables, self.n, "Majority"))
        k = len(self.variables)
        if k % 2 == 0:
            raise ValueError(
                "The 'variables' parameter of Majority must have an odd number of "
                f"entries. Got {k} instead."
            )
        self.size = 2 * math.comb(k, (k - 1) // 2)
        self.depth = k
        self.name = f"majority(k={k})"

    def query(self, points: np.ndarray) -> np.ndarray:
        """Majority on each row; deterministic."""
        points = check_points(points, self.n)
        total = points[:, self.variables].sum(axis=1, dtype=np.int64)
        return np.where(total < 0, -1, 1).astype(np.int8)

    def decision_tree(self) -> DecisionTree:
        """The natural tree described in the class docstring."""
        need = (len(self.variables) + 1) // 2

        def build(i: int, plus: int, minus: int) -> Nested:
            if plus == need:
                return 1
            if minus == need:
                return -1
            return {"var": int(self.variables[i]),
                    "minus": build(i + 1, plus, minus + 1),
                    "plus": build(i + 1, plus + 1, minus)}
        return DecisionTree.from_nested(build(0, 0, 0), self.n)


def majority(n: int, k: int, seed: int) -> Majority:
    """Majority of ``k`` (odd) distinct variables drawn uniformly from ``n``.

    The variables are drawn with purpose ``"majority"``.
    """
    n = _check_n(n, "majority")
    k = check_int("majority", "k", k, 1, n, high_text="n")
    if k % 2 == 0:
        raise ValueError(f"The 'k' parameter of majority must be an odd int in [1, n]. "
                         f"Got {k} instead.")
    return Majority(n, WordStream("majority", check_seed("majority", seed)).sample(n, k))


class Junta(Oracle):
    """A function of ``k`` variables given by its truth table.

    ``f(x) = table[i]`` where bit ``j`` of ``i`` is ``(1 - x[variables[j]])/2``;
    ``table`` has ``2**k`` entries ``±1``. ``size`` and ``depth`` are those of
    the natural tree: query ``variables[0], variables[1], ...`` in order and
    stop as soon as the restricted table is constant (so ``size <= 2**k``,
    ``depth <= k``; upper bounds on the minimum).
    """

    def __init__(self, n: int, variables: Sequence[int] | np.ndarray, table: Any) -> None:
        owner = "Junta"
        self.n = _check_n(n, owner)
        self.variables = _check_variables(variables, self.n, owner)
        k = len(self.variables)
        self.table = _check_signs(table, 2 ** k, "table", owner)
        self.size, self.depth = self._natural_shape()
        self.name = f"junta(k={k})"

    def _by_prefix(self) -> np.ndarray:
        # Reorder so that index = b_0 * 2**(k-1) + ... + b_{k-1}: then fixing the
        # first l variables selects a contiguous block of 2**(k-l) entries.
        k = len(self.variables)
        return self.table.reshape((2,) * k).transpose().reshape(-1)

    def _natural_shape(self) -> tuple[int, int]:
        table = self._by_prefix()
        k = len(self.variables)
        size, depth = 0, 0
        parent_constant = np.zeros(1, dtype=bool)
        for level in range(k + 1):
            blocks = table.reshape(2 ** level, -1)
            constant = blocks.min(axis=1) == blocks.max(axis=1)
            new_leaves = constant & ~np.repeat(parent_constant, 2 if level else 1)
            if new_leaves.any():
                size += int(new_leaves.sum())
                depth = level
            parent_constant = constant
            if constant.all():
                break
        return size, depth

    def query(self, points: np.ndarray) -> np.ndarray:
        """Table entry of each row; deterministic."""
        points = check_points(points, self.n)
        return self.table[_index_bits(points, self.variables)]

    def decision_tree(self) -> DecisionTree:
        """The natural tree described in the class docstring."""
        table = self._by_prefix()

        def build(level: int, block: int) -> Nested:
            entries = table.reshape(2 ** level, -1)[block]
            if entries.min() == entries.max():
                return int(entries[0])
            return {"var": int(self.variables[level]),
                    "minus": build(level + 1, 2 * block + 1),
                    "plus": build(level + 1, 2 * block)}
        return DecisionTree.from_nested(build(0, 0), self.n)


def junta(n: int, k: int, seed: int) -> Junta:
    """Junta on ``k`` distinct variables drawn uniformly from ``n``, in random order,
    with a uniform truth table (purposes ``"junta/variables"``, ``"junta/table"``).

    ``k`` is at most ``min(n, 24)`` to keep the table small.
    """
    n = _check_n(n, "junta")
    k = check_int("junta", "k", k, 0, min(n, _MAX_JUNTA_BITS),
                  high_text=f"min(n, {_MAX_JUNTA_BITS})")
    seed = check_seed("junta", seed)
    variables = WordStream("junta/variables", seed).sample(n, k)
    return Junta(n, variables, WordStream("junta/table", seed).signs(2 ** k))

"""Query access to a boolean function ``f : {-1,1}^n -> {-1,1}``.

An oracle is a batch call: an ``(m, n)`` ``int8`` array of ``±1`` rows in, an
``(m,)`` ``int8`` array of ``±1`` values out. Everything in :mod:`lca` talks to
``f`` through this protocol, so a user plugs in their own function by
subclassing :class:`Oracle` or by wrapping a plain callable with
:func:`from_callable` / :func:`from_boolean`.

Bit convention used by the adapters for 0/1 functions: the bit ``b`` stands for
the value ``(-1)**b``, i.e. ``+1 <-> 0`` and ``-1 <-> 1``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np

from lca._validate import MAX_N, check_int, problem
from lca.derive import Path

__all__ = [
    "Oracle",
    "CountingOracle",
    "OracleError",
    "from_callable",
    "from_boolean",
    "check_points",
    "oracle_n",
    "all_plus_minus_one",
]


class OracleError(ValueError):
    """An oracle returned something that is not one ``±1`` value per row."""


class Oracle(abc.ABC):
    """Batched query access to ``f : {-1,1}^n -> {-1,1}``.

    Subclasses set :attr:`n` and implement :meth:`query`. They must be *fixed*
    functions: the same row always gets the same value (label noise is derived
    from the row, never drawn per call), and they should pickle so that worker
    processes can rebuild them.

    Attributes:
        n: number of input variables.
        name: short human-readable name used in error messages.
        size: number of leaves of a decision tree computing ``f``, if known.
        depth: depth of a decision tree computing ``f``, if known.
    """

    n: int
    name: str = "oracle"
    size: int | None = None
    depth: int | None = None

    @abc.abstractmethod
    def query(self, points: np.ndarray) -> np.ndarray:
        """Return ``f`` on each row of an ``(m, n)`` ``int8`` array of ``±1``."""

    def __call__(self, points: np.ndarray) -> np.ndarray:
        return self.query(points)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The readable condition "coordinate ``variable`` equals ``bit``".

        ``bit`` is ``-1`` or ``+1``; ``path`` holds the ``(variable, bit)``
        pairs of the node's ancestors, so oracles that encode one feature in
        several bits can merge them into one interval or set. The default is
        ``x{variable}=+1`` / ``x{variable}=-1``; oracles wrapping a model
        override it to name features. It is used only for display (explanations,
        exported trees), never for any decision.
        """
        return f"x{variable}={'+' if bit > 0 else '-'}1"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} n={getattr(self, 'n', '?')}>"


def oracle_n(oracle: Oracle) -> int:
    """The oracle's ``n``, or a ``TypeError`` naming its class if missing or not an int >= 1."""
    n = getattr(oracle, "n", None)
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
        raise TypeError(
            f"{type(oracle).__name__} must set the attribute 'n' (number of variables) to "
            f"an int >= 1, in __init__ or on the class. Got {n!r} instead.")
    return int(n)


# Up to this many int8 entries a bytes pass is cheaper than numpy's reductions (measured:
# 0.1 against 1.7 us at 50 entries, 1.4 against 2.0 us at 4,096, 6.3 against 2.7 at 20,000).
_SMALL = 4096


def all_plus_minus_one(values: np.ndarray) -> bool:
    """Is every entry of an integer array ``-1`` or ``+1``? (True for an empty array)"""
    if values.dtype == np.int8 and values.size <= _SMALL:
        # What oracles return: -1 and +1 are the bytes 0xff and 0x01, and deleting
        # those from the array's bytes leaves nothing. One C pass, without the fixed
        # cost of three numpy reductions (most calls carry a few dozen rows).
        return not values.tobytes().translate(None, b"\x01\xff")
    # min/max/count_nonzero are single vectorised passes, several times faster
    # than comparing against both values.
    return values.size == 0 or (
        values.min() >= -1 and values.max() <= 1
        and np.count_nonzero(values) == values.size)


def check_points(points: Any, n: int, *, what: str = "points") -> np.ndarray:
    """Validate a ``(m, n)`` array of ``±1`` and return it as ``int8``.

    Integer arrays of any width are accepted (their values are checked);
    floats, booleans and anything else raise :class:`TypeError` rather than
    being coerced.
    """
    arr = np.asarray(points)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"{what} must be an integer array of ±1 values; got dtype {arr.dtype}"
        )
    if arr.ndim != 2 or arr.shape[1] != n:
        raise TypeError(f"{what} must have shape (m, {n}); got shape {arr.shape}")
    if not all_plus_minus_one(arr):
        bad = arr[(arr != 1) & (arr != -1)][0]
        raise ValueError(f"{what} must contain only -1 and +1; found {int(bad)}")
    return arr.astype(np.int8, copy=False)


class CountingOracle(Oracle):
    """Wrap an oracle: validate every answer and count every query.

    The wrapper raises :class:`OracleError` naming the inner oracle when it
    returns the wrong shape, a non-integer dtype or a value other than ``±1``.
    :attr:`queries` is the number of rows sent to the inner oracle so far.
    """

    def __init__(self, inner: Oracle) -> None:
        if not isinstance(inner, Oracle):
            raise TypeError(
                "oracle must be an lca.oracle.Oracle; wrap plain functions with "
                f"lca.oracle.from_callable or from_boolean (got {type(inner).__name__})"
            )
        self.inner = inner
        self.n = oracle_n(inner)
        self.name = inner.name
        self.size = inner.size
        self.depth = inner.depth
        self.queries = 0

    def query(self, points: np.ndarray) -> np.ndarray:
        assert points.ndim == 2 and points.shape[1] == self.n
        m = points.shape[0]
        values = np.asarray(self.inner.query(points))
        self.queries += m
        if values.shape != (m,):
            raise OracleError(
                f"oracle {self.name!r} returned shape {values.shape} for {m} points; "
                f"expected ({m},)"
            )
        if values.dtype.kind not in "iu":  # signed or unsigned integers; not bool
            raise OracleError(
                f"oracle {self.name!r} returned dtype {values.dtype}; expected "
                "integers -1/+1"
            )
        if not all_plus_minus_one(values):
            bad = values[(values != 1) & (values != -1)][0]
            raise OracleError(
                f"oracle {self.name!r} returned {int(bad)}; expected only -1 and +1"
            )
        return values.astype(np.int8, copy=False)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The wrapped oracle's description (:meth:`Oracle.describe`)."""
        return self.inner.describe(variable, bit, path)


class _PointwiseOracle(Oracle):
    def __init__(self, fn: Callable[[np.ndarray], Any], n: int, name: str,
                 boolean: bool) -> None:
        owner = "from_boolean" if boolean else "from_callable"
        if not callable(fn):
            raise TypeError(problem(owner, "fn", "callable", fn))
        self.fn = fn
        self.n = check_int(owner, "n", n, 1, MAX_N, high_text="2**31 - 1")
        self.name = name
        self.boolean = boolean

    def query(self, points: np.ndarray) -> np.ndarray:
        out = np.empty(points.shape[0], dtype=np.int8)
        for row, x in enumerate(points):
            arg = ((1 - x) // 2).astype(np.uint8) if self.boolean else x
            value = self.fn(arg)
            expected, wanted = ((0, 1), "0 or 1") if self.boolean else ((-1, 1), "-1 or +1")
            # As the batched path (CountingOracle), accept only ints: no bool,
            # float, complex or array is coerced to a value.
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
                raise OracleError(
                    f"oracle {self.name!r} returned {value!r} of type "
                    f"{type(value).__name__}; expected an int, {wanted} (bools, floats "
                    "and arrays are not converted)"
                )
            if value not in expected:
                raise OracleError(f"oracle {self.name!r} returned {value!r}; expected {wanted}")
            out[row] = 1 - 2 * int(value) if self.boolean else int(value)
        return out


def from_callable(fn: Callable[[np.ndarray], int], n: int,
                  name: str | None = None) -> Oracle:
    """Oracle from a Python function of one ``int8`` row of ``±1`` returning ``±1``.

    Convenient but slow (one Python call per point). For worker processes the
    function must be picklable: a module-level function, not a lambda. ``fn``
    must return a Python or NumPy int; as in the batched path, a bool, float,
    complex or array raises :class:`OracleError` rather than being converted.
    """
    label: str = name if name else getattr(fn, "__name__", "callable")
    return _PointwiseOracle(fn, n, label, boolean=False)


def from_boolean(fn: Callable[[np.ndarray], int], n: int,
                 name: str | None = None) -> Oracle:
    """Oracle from a 0/1 function of one ``uint8`` row of bits.

    The row holds ``b_i = (1 - x_i) / 2`` and the result ``b`` is read as
    ``(-1)**b``: the usual correspondence ``0 <-> +1``, ``1 <-> -1``. ``fn``
    must return the int ``0`` or ``1`` (a bool, e.g. ``x[0] == 1``, raises
    :class:`OracleError`: wrap it in ``int(...)``), as :func:`from_callable`.
    """
    label: str = name if name else getattr(fn, "__name__", "boolean")
    return _PointwiseOracle(fn, n, label, boolean=True)

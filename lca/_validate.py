"""Argument checks at the public boundary: one set of checks, one message style.

Every public function of lca validates its arguments with these, so every
message reads the same way (scikit-learn's)::

    The 'depth' parameter of Params must be an int in the range [0, inf). Got -1 instead.

``TypeError`` for a wrong type, ``ValueError`` for a value out of range; nothing
is coerced (``bool`` is not an int, ``"0.1"`` is not a real). This module
imports nothing from lca, so every module can use it.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

SEED_LIMIT = 1 << 64
"""Seeds are ints in ``[0, SEED_LIMIT)``: a ``u64`` in the key derivation."""

MAX_N = 2 ** 31 - 1
"""Most variables: every query is an ``(m, n)`` ``int8`` array, and at this bound one
row is already 2 GiB."""

MAX_ARRAY_BYTES = int(np.iinfo(np.intp).max)
"""The largest numpy array this machine can index, in bytes (``2**63 - 1`` on 64 bits)."""


def show(value: Any) -> str:
    """``repr(value)``, except that an int too long to read is shown as ``~2**k``.

    (Python refuses to print ints of more than 4,300 digits at all.)
    """
    if isinstance(value, Integral) and not isinstance(value, bool) \
            and abs(int(value)) >= 1 << 128:
        return f"{'-' if value < 0 else ''}~2**{abs(int(value)).bit_length() - 1}"
    return repr(value)


def problem(owner: str, name: str, expected: str, value: Any) -> str:
    """The message: "The 'name' parameter of owner must be expected. Got value instead."."""
    return f"The {name!r} parameter of {owner} must be {expected}. Got {show(value)} instead."


def is_int(value: Any) -> bool:
    """An int or numpy integer, not a ``bool``/``numpy.bool_``."""
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def check_int(owner: str, name: str, value: Any, low: int, high: float = math.inf, *,
              open_high: bool = False, high_text: str | None = None,
              optional: bool = False) -> Any:
    """``value`` as an ``int`` in ``[low, high]`` (``[low, high)`` if ``open_high``).

    ``high_text`` writes the upper end in words (``"2**64"``, ``"n"``);
    ``optional`` also accepts ``None`` (returned as is).
    """
    if optional and value is None:
        return None
    upper = "inf)" if high == math.inf else \
        f"{high_text or int(high)}{')' if open_high else ']'}"
    expected = f"an int in the range [{low}, {upper}" + (" or None" if optional else "")
    if not is_int(value):
        raise TypeError(problem(owner, name, expected, value))
    if not low <= value <= high or (open_high and value == high):
        raise ValueError(problem(owner, name, expected, value))
    return int(value)


def check_real(owner: str, name: str, value: Any, low: float, high: float, *,
               open_low: bool = True, open_high: bool = True,
               optional: bool = False) -> Any:
    """``value`` as a ``float`` in the interval with the given open ends (or ``None``).

    Any :class:`numbers.Real` is accepted (``int``, ``float``, ``Fraction``,
    numpy scalars), except ``bool``; NaN is out of every range, and so is a
    number too large for a float (``10**400``).
    """
    if optional and value is None:
        return None
    interval = f"{'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"
    expected = f"a real number in the range {interval}" + (" or None" if optional else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise TypeError(problem(owner, name, expected, value))
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(problem(owner, name, expected, value)
                         + " It is beyond the range of a float (about 1.8e308).") from None
    too_low = number <= low if open_low else number < low
    too_high = number >= high if open_high else number > high
    if math.isnan(number) or too_low or too_high:
        raise ValueError(problem(owner, name, expected, value))
    return number


def check_flag(owner: str, name: str, value: Any) -> bool:
    """``value`` if it is a ``bool``; anything else (``1``, ``"yes"``, ``None``) is refused."""
    if not isinstance(value, bool):
        raise TypeError(problem(owner, name, "a bool", value))
    return value


def check_seed(owner: str, value: Any, name: str = "seed") -> int:
    """A seed: an int in ``[0, 2**64)``."""
    return check_int(owner, name, value, 0, SEED_LIMIT, open_high=True, high_text="2**64")


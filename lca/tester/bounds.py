"""Closed-form sizes the tester uses: Hoeffding sample counts and widths, the practical depth.

Pure formulas of the inputs (no oracle, no randomness); ``docs/theory.md``
states each. :mod:`lca.tester.tolerant` builds its plans from them and
:class:`lca.models.Surrogate` its confidence intervals.
"""

from __future__ import annotations

import math
from fractions import Fraction

from lca._validate import check_int, check_real
from lca.params import finite

__all__ = ["hoeffding_samples", "hoeffding_halfwidth", "practical_depth"]


def hoeffding_samples(eps: float, delta: float) -> int:
    """``m = ceil(ln(1/delta) / (2 eps^2))``: the proof's ``exp(-2 m eps^2) <= delta``.

    With ``m`` uniform points the empirical disagreement exceeds the true
    ``dist(T, f)`` by ``eps`` or more (or falls short of it by ``eps``) with
    probability at most ``delta`` each (one-sided Hoeffding on ``{0, 1}``).
    """
    eps = check_real("hoeffding_samples", "eps", eps, 0.0, 1.0, open_high=False)
    delta = check_real("hoeffding_samples", "delta", delta, 0.0, 1.0)
    return max(1, math.ceil(finite("hoeffding_samples", "m = ln(1/delta) / (2 eps^2)",
                                   lambda: math.log(1 / delta) / (2 * eps ** 2),
                                   eps=eps, delta=delta)))


def hoeffding_halfwidth(m: int, delta: float) -> float:
    """Half-width ``sqrt(ln(2/delta) / (2m))`` of a two-sided level ``1 - delta`` interval."""
    m = check_int("hoeffding_halfwidth", "m", m, 1)
    delta = check_real("hoeffding_halfwidth", "delta", delta, 0.0, 1.0)
    return math.sqrt(math.log(2 / delta) / (2 * m))


def practical_depth(s: int, eps: float) -> int:
    """``D = min(s - 1, ceil(log2(s / eps)))``, the practical tester's tree depth.

    A size-``s`` tree has depth at most ``s - 1``, and truncating it at depth
    ``D`` (majority label at each cut node) changes at most ``s / 2^(D+2)``
    of the cube, which is ``<= eps / 4`` once ``2^D >= s / eps``. So trees of
    depth ``D`` are within ``eps / 4`` of ``opt_s``, and for ``s <= 2`` they
    are exactly the size-``s`` trees. Computed without logarithms.
    """
    s = check_int("practical_depth", "s", s, 1)
    eps = check_real("practical_depth", "eps", eps, 0.0, 1.0, open_high=False)
    depth = 0
    # Exact: equal to the float product 2.0**depth * eps wherever that does
    # not overflow (scaling by a power of two is exact), and defined past it.
    exact_eps = Fraction(eps)
    while depth < s - 1 and exact_eps * (1 << depth) < s:
        depth += 1
    return depth

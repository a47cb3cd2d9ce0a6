"""Statistics of the suite: error intervals, crossover K, growth exponents.

Pure functions of their arguments (no randomness, no I/O).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

_Z = 1.959963984540054  # two-sided 95% normal quantile: every interval here is 95%

def wilson_interval(errors: int, total: int, z: float = _Z) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``errors / total`` (95% by default).

    Always contains the point estimate and stays inside ``[0, 1]``.
    """
    if total <= 0:
        raise ValueError(f"wilson_interval: total must be positive; got {total}")
    p = errors / total
    z2 = z * z
    denominator = 1 + z2 / total
    centre = (p + z2 / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / denominator
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


def error_rate(predicted: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    wrong = int(np.count_nonzero(predicted != truth))
    low, high = wilson_interval(wrong, truth.size)
    return {"value": wrong / truth.size, "low": low, "high": high, "points": int(truth.size)}


def crossover(cumulative: Sequence[tuple[int, int]],
              peer_queries: int | None, peer_largest: int | None) -> dict[str, Any]:
    """Answers ``K`` after which learning the whole tree costs fewer queries.

    ``cumulative`` holds ``(K, Q(K))``: our total queries to answer the first
    ``K`` points (increasing in ``K``). ``peer_queries`` is the peer's ``N`` to
    reach our error, or ``None`` if it did not within ``peer_largest``
    queries. ``Q`` is interpolated linearly in log-log between measured ``K``.

    Returns ``{"relation": r, "value": K}`` with ``r`` one of ``"<="`` (the peer
    is cheaper from the first answer on), ``"~"`` (crossover near ``K``),
    ``">"`` (the crossover lies beyond ``K``: past the measured range, or a
    lower bound when the peer never matched) and ``"?"`` (no information).
    """
    ks = [k for k, _ in cumulative]
    qs = [q for _, q in cumulative]
    budget = peer_queries if peer_queries is not None else peer_largest
    if budget is None or not ks:
        return {"relation": "?", "value": None}
    if qs[0] >= budget:
        if peer_queries is None:
            return {"relation": "?", "value": None}
        return {"relation": "<=", "value": ks[0]}
    if qs[-1] < budget:
        return {"relation": ">", "value": ks[-1], "lower_bound": peer_queries is None}
    i = next(j for j, q in enumerate(qs) if q >= budget)
    k0, k1, q0, q1 = ks[i - 1], ks[i], qs[i - 1], qs[i]
    if q1 == q0:
        value = float(k1)
    else:
        t = (math.log(budget) - math.log(q0)) / (math.log(q1) - math.log(q0))
        value = math.exp(math.log(k0) + t * (math.log(k1) - math.log(k0)))
    if peer_queries is None:
        return {"relation": ">", "value": value, "lower_bound": True}
    return {"relation": "~", "value": value}


FIT_MIN_SIZES = 4
"""A growth exponent is reported only from at least this many sizes ``n`` ..."""

FIT_MIN_SPAN = 100
"""... spanning at least this factor: a slope through 2 or 3 points within one decade
(the quick grid's, one cold answer each) follows the timing noise, not the growth."""


def fits_a_growth(sizes: Sequence[float]) -> bool:
    """Whether ``sizes`` are enough for :func:`growth_exponent` to be reported."""
    distinct = sorted(set(sizes))
    return len(distinct) >= FIT_MIN_SIZES and distinct[-1] >= FIT_MIN_SPAN * distinct[0]


def growth_exponent(sizes: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of ``log value`` against ``log size`` (the growth exponent).

    Pairs whose value is not positive (e.g. a floor of 0 when the root is a
    leaf) have no logarithm and are left out; fewer than two left gives NaN.
    """
    size_array = np.asarray(sizes, dtype=np.float64)
    value_array = np.asarray(values, dtype=np.float64)
    kept = value_array > 0
    x = np.log(size_array[kept])
    y = np.log(value_array[kept])
    if x.size < 2:
        return float("nan")
    slope, _intercept = np.polyfit(x, y, 1)
    return float(slope)


def median_or_nan(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")

"""Score and leaf estimators (Section "Query-efficient simultaneous score estimation").

All samples come from :mod:`lca.derive` keyed by ``(seed, purpose, path)``:
purpose ``"score"`` for the UnbiasedEstimator pairs ``(x, y)`` of a node and
``"leaf"`` for the uniform points of a leaf. Results are deterministic
functions of ``(oracle, seed, path, sample counts, noise threshold)``, and
independent of how samples are chunked, because every statistic is an
integer sum over samples.

The decision at a node needs no floats (DESIGN.md §2): every score shares the
``NS_p`` term, so ``argmax_i Score_i = argmin_i C_i`` where
``C_i = #{k : f(x_k) != f(y_k) and x_{k,i} = y_{k,i}}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lca import derive
from lca.derive import Path
from lca.oracle import Oracle

__all__ = [
    "ScoreCounts",
    "score_counts",
    "choose_variable",
    "score_estimates",
    "unbiased_estimates",
    "samples_for_accuracy",
    "leaf_sum",
    "leaf_label",
    "chunk_rows",
]

# Upper bound on the int8 entries of one oracle batch: bounds memory at
# large n (two batches of 4 MiB each, plus packed words).
_BATCH_ENTRIES = 1 << 22


def chunk_rows(n: int) -> int:
    """Rows per oracle batch for ``n`` variables."""
    return max(1, _BATCH_ENTRIES // n)


def _query(oracle: Oracle, points: np.ndarray, seed: int, purpose: str,
           path: Path) -> np.ndarray:
    try:
        return oracle(points)
    except Exception as error:
        # Keep the oracle's own exception type and message; add where it happened.
        error.add_note(f"lca: raised while querying {oracle.name!r} for {purpose} "
                       f"samples at node path {path} (seed {seed})")
        raise


@dataclass(frozen=True)
class ScoreCounts:
    """Integer sufficient statistics of ``samples`` UnbiasedEstimator runs.

    Attributes:
        samples: number of ``(x, y)`` pairs (``2 * samples`` queries).
        disagreements: ``D = #{k : f(x_k) != f(y_k)}``.
        agreements: ``C_i = #{k : f(x_k) != f(y_k) and x_{k,i} = y_{k,i}}``
            for every variable, ``int64``.
    """

    samples: int
    disagreements: int
    agreements: np.ndarray


def score_counts(oracle: Oracle, seed: int, path: Path, samples: int,
                 threshold: int, *, start: int = 0) -> ScoreCounts:
    """Run the UnbiasedEstimator on samples ``start .. start+samples-1`` of ``f_path``.

    Vectorised over samples and variables; memory is bounded by chunking
    rows, which changes no count.
    """
    n = oracle.n
    key = derive.node_key(seed, "score", path)
    disagreements = 0
    flipped_sum = np.zeros(n, dtype=np.int64)
    step = chunk_rows(n)
    for lo in range(start, start + samples, step):
        hi = min(lo + step, start + samples)
        x = derive.uniform_points(key, n, lo, hi, path)
        flips = derive.flip_masks(key, n, lo, hi, threshold, path)
        fx = _query(oracle, derive.unpack_points(x, n), seed, "score", path)
        fy = _query(oracle, derive.unpack_points(x ^ flips, n), seed, "score", path)
        differ = fx != fy
        if differ.any():
            disagreements += int(differ.sum())
            as_bytes = flips[differ].astype("<u8", copy=False).view(np.uint8)
            bits = np.unpackbits(as_bytes, axis=1, count=n, bitorder="little")
            flipped_sum += bits.sum(axis=0, dtype=np.int64)
    # Among disagreeing pairs, x_i = y_i exactly when coordinate i did not flip.
    return ScoreCounts(samples, disagreements, disagreements - flipped_sum)


def choose_variable(counts: ScoreCounts, path: Path) -> int:
    """Figure BuildStrand step (a): the variable of highest estimated score.

    Integer argmin of ``C_i`` over variables not on ``path``; ties go to the
    lowest index.
    """
    agreements = counts.agreements.copy()
    on_path = [var for var, _ in path]
    # Past any real count: variables on the path are never chosen.
    agreements[on_path] = counts.samples + 1
    choice = int(np.argmin(agreements))
    assert choice not in on_path
    return choice


def score_estimates(counts: ScoreCounts, noise_rate: float) -> np.ndarray:
    """Mean of the UnbiasedEstimator: ``D/q - C_i / (q (1 - p/2))``."""
    q = counts.samples
    return counts.disagreements / q - counts.agreements / (q * (1 - noise_rate / 2))


def unbiased_estimates(oracle: Oracle, seed: int, path: Path, samples: int,
                       threshold: int) -> np.ndarray:
    """Per-run outputs of Figure UnbiasedEstimator, shape ``(samples, n)``.

    ``eta_i = 1[f(x) != f(y)] * (1 - 1[x_i = y_i] / (1 - p/2))`` on the same
    derived samples as :func:`score_counts`; a reference for tests, memory
    ``O(samples * n)``. Columns of variables on ``path`` are not score
    estimates (those coordinates never re-randomise and are never chosen).
    """
    n = oracle.n
    key = derive.node_key(seed, "score", path)
    x = derive.uniform_points(key, n, 0, samples, path)
    flips = derive.flip_masks(key, n, 0, samples, threshold, path)
    x_points = derive.unpack_points(x, n)
    y_points = derive.unpack_points(x ^ flips, n)
    differ = _query(oracle, x_points, seed, "score", path) != _query(
        oracle, y_points, seed, "score", path)
    same = x_points == y_points
    p = derive.noise_rate_of(threshold)
    return differ[:, None] * (1.0 - same / (1.0 - p / 2))


def samples_for_accuracy(tau: float, delta: float, n: int) -> int:
    """Theorem "Score estimator": runs so all ``n`` estimates are ``±tau`` w.p. ``1-delta``.

    Each run lies in ``[-1, 1]``; Hoeffding gives failure ``2 exp(-q tau^2 / 2)``
    per variable and a union bound over ``n`` variables gives
    ``q = ceil(2 / tau^2 * ln(2 n / delta))``.
    """
    return math.ceil(2 / tau ** 2 * math.log(2 * n / delta))


def leaf_sum(oracle: Oracle, seed: int, path: Path, samples: int) -> int:
    """``sum_k f(x_k)`` over ``samples`` uniform points consistent with ``path``."""
    n = oracle.n
    key = derive.node_key(seed, "leaf", path)
    total = 0
    step = chunk_rows(n)
    for lo in range(0, samples, step):
        hi = min(lo + step, samples)
        x = derive.uniform_points(key, n, lo, hi, path)
        values = _query(oracle, derive.unpack_points(x, n), seed, "leaf", path)
        total += int(values.sum(dtype=np.int64))
    return total


def leaf_label(total: int) -> int:
    """Figure BuildStrand step (c): the sign of the leaf sum; a sum of 0 gives ``+1``."""
    return 1 if total >= 0 else -1

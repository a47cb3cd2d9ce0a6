"""How close can any depth-capped tree get to a noisy majority? The floor behind
the η = 0.2 maj15 case.

The efficient-vs-paper comparison asks the efficient mode, at the suite's
depth cap, to come within 0.03 of the peer's best error at label noise
η = 0.2. The peer (scikit-learn's best-first tree) has no depth cap. For
``f = maj_k`` (``k`` odd) with independent label noise ``η``, every
depth-``d`` tree ``T`` has

    Pr[T(x) != f~(x)] = η + (1 - 2η) · Pr[T(x) != maj_k(x)],

and ``Pr[T != maj_k]`` is smallest for a tree that reads ``min(d, k)`` of the
relevant variables on every path and answers the sign of their sum: the ``k``
variables are exchangeable, so which ones a path reads, and in which order,
does not matter, and a read of an irrelevant variable is wasted. Given the
sum ``S`` of ``d`` read variables, the answer is wrong exactly when the ``k - d``
unread ones outvote it, so the floor is an exact finite sum (``fractions``).

The suite scores errors on 10,000 fixed evaluation points, whose realised
noise rate is not exactly ``η``; so the script also evaluates one optimal tree
(read the first ``d`` relevant variables, answer the sign of their sum, +1 on
a tie) on the suite's own evaluation points and noise. Prints both, the
peer's best error and the efficient mode's error, read from the suite's JSON
(``--json``, default docs/benchmarks_suite_efficient.json).

    python scripts/floor_depth_cap.py      # instant
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np

from lca import derive, targets
from lca.suite import SPECS

JSON = Path(__file__).resolve().parent.parent / "docs" / "benchmarks_suite_efficient.json"


def _sum_law(m: int) -> dict[int, Fraction]:
    """Law of the sum of ``m`` independent uniform ±1 values."""
    return {2 * j - m: Fraction(comb(m, j), 2 ** m) for j in range(m + 1)}


def majority_floor(k: int, depth: int) -> Fraction:
    """Smallest ``Pr[T != maj_k]`` over trees of depth ``depth`` (``k`` odd)."""
    read = min(depth, k)
    unread = _sum_law(k - read)
    wrong = Fraction(0)
    for s, p in _sum_law(read).items():
        if s == 0:
            # the unread (odd count) decide alone: either guess is right half the time
            wrong += p / 2
        else:
            wrong += p * sum(q for t, q in unread.items() if (s + t > 0) != (s > 0))
    return wrong


def optimal_tree_error(k: int, depth: int, noise: float, n: int = 100,
                       points: int = 10_000) -> float:
    """An optimal depth-capped tree's error against the suite's noisy maj_k, on its points."""
    clean = SPECS[f"maj{k}"].build(n, 1)  # the suite's target seed, noise seed and points
    f = targets.with_label_noise(clean, rate=noise, seed=2)
    z = derive.sample_points(0, "bench/eval", n, points)
    read = z[:, clean.variables[:min(depth, k)]].sum(axis=1, dtype=np.int64)
    answers = np.where(read >= 0, 1, -1)
    return float(np.mean(answers != f(z)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=JSON)
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--noise", type=float, default=0.2)
    args = parser.parse_args(argv)
    cases = {c["case"]: c for c in json.loads(args.json.read_text())["cases"]}
    print("| target | depth cap | floor vs f, expected | optimal tree on the evaluation points "
          "| peer's best | optimal tree − peer's best | efficient mode | efficient − optimal "
          "tree |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for k in (5, 15):
        clean = majority_floor(k, args.depth)
        floor = args.noise + (1 - 2 * args.noise) * float(clean)
        case = cases.get(f"maj{k} n=100 eta={args.noise:g}")
        if case is None:
            continue
        peer = min(row["err_f"]["value"] for row in case["peer"]["rows"])
        ours = case["ours"]["efficient"]["err_f"]["value"]
        optimal = optimal_tree_error(k, args.depth, args.noise)
        print(f"| maj{k}, η = {args.noise:g} | {args.depth} | {floor:.4f} | {optimal:.4f} | "
              f"{peer:.4f} | {optimal - peer:+.4f} | {ours:.4f} | {ours - optimal:+.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

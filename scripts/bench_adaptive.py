"""Adaptive vs fixed-q mode, side by side in one run, at equal guarantees.

    python scripts/bench_adaptive.py            # full grid, several minutes
    python scripts/bench_adaptive.py --quick    # two cases, seconds

Both modes certify the same thing: ``Params.guaranteed(n, depth, p, tau, eps,
delta)`` sizes fixed mode's sample counts so every decision of the tree is
right with probability ``1 - delta``; ``adaptive=True`` certifies the same
``(tau, eps, delta)`` and never draws more than those counts (sized at
``delta/2``). Reported per case: queries for the first answer (median over
first queries of 3 seeds), error against ``f`` on fresh uniform points with a
Wilson 99% interval, and the ratio. The information-theoretic floor is
``log2 n`` queries per internal node on the path.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import numpy as np

import lca
from lca import derive, targets

N, DEPTH, NOISE_RATE, TAU, EPS, DELTA = 100, 8, 0.1, 0.05, 0.1, 0.01


def cases(quick: bool) -> list[tuple[str, lca.Oracle]]:
    structures = [
        ("tree s=16 iid", targets.random_tree(N, 16, seed=1)),
        ("tree s=16 sibling", targets.random_tree(N, 16, seed=2, labels="sibling_differing")),
        ("parity k=3", targets.parity(N, 3, seed=3)),
        ("majority k=5", targets.majority(N, 5, seed=4)),
        ("multiplexer k=2", targets.multiplexer(N, 2, seed=5)),
        ("tribes 2x3", targets.tribes(N, 2, 3, seed=6)),
        ("junta k=6", targets.junta(N, 6, seed=7)),
    ]
    noises = [0.0, 0.05]
    if quick:
        structures, noises = structures[:1], [0.0, 0.05]
    return [(f"{name}, noise {eta}", targets.with_label_noise(t, eta, seed=11) if eta else t)
            for name, t in structures for eta in noises]


def wilson(errors: int, m: int, z: float = 2.576) -> tuple[float, float]:
    """Wilson score interval at 99% for a binomial proportion."""
    phat = errors / m
    centre = (phat + z * z / (2 * m)) / (1 + z * z / m)
    half = z * math.sqrt(phat * (1 - phat) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return max(0.0, centre - half), min(1.0, centre + half)


def run_mode(f: lca.Oracle, params: lca.Params, points: np.ndarray) -> dict:
    first = []
    for seed in range(3):
        first.append(lca.Reconstructor(f, params).explain(points[0], seed).stats.queries)
    rec = lca.Reconstructor(f, params)
    start = time.perf_counter()
    answers = rec.answer_many(points, 0)
    elapsed = time.perf_counter() - start
    errors = int(np.sum(answers != f(points)))
    return {"first": statistics.median(first), "errors": errors,
            "ci": wilson(errors, len(points)), "seconds": elapsed,
            "uncertified": rec.stats.uncertified, "early": rec.stats.early_leaves}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--points", type=int, default=1000)
    args = parser.parse_args()
    points_n = 200 if args.quick else args.points
    points = derive.sample_points(0, "bench-adaptive-points", N, points_n)
    fixed = lca.Params.guaranteed(N, DEPTH, NOISE_RATE, TAU, EPS, DELTA)
    adaptive = lca.Params.guaranteed(N, DEPTH, NOISE_RATE, TAU, EPS, DELTA, adaptive=True)
    floor = DEPTH * math.log2(N)
    rows = []
    for name, f in cases(args.quick):
        print(f"{name} ...", file=sys.stderr)
        rows.append((name, run_mode(f, fixed, points), run_mode(f, adaptive, points)))

    print(f"n = {N}, depth {DEPTH}, p = {NOISE_RATE}, tau = {TAU}, eps = {EPS}, "
          f"delta = {DELTA}; fixed caps {fixed.score_samples} score / {fixed.leaf_samples} "
          f"leaf samples (adaptive caps {adaptive.score_samples} / {adaptive.leaf_samples}); "
          f"error on {points_n} points, Wilson 99%; floor = depth x log2 n = {floor:.0f} "
          "queries\n")
    print("| case | fixed: first-answer queries | adaptive: first-answer queries | ratio | "
          "adaptive / floor | fixed error | adaptive error | adaptive uncertified | "
          "early leaves |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios, floors = [], []
    for name, a, b in rows:
        ratio = a["first"] / b["first"]
        ratios.append(ratio)
        floors.append(b["first"] / floor)
        print(f"| {name} | {a['first']:,.0f} | {b['first']:,.0f} | {ratio:.1f}x | "
              f"{b['first'] / floor:.0f}x | {a['errors'] / points_n:.3f} "
              f"[{a['ci'][0]:.3f}, {a['ci'][1]:.3f}] | {b['errors'] / points_n:.3f} "
              f"[{b['ci'][0]:.3f}, {b['ci'][1]:.3f}] | {b['uncertified']} | {b['early']} |")
    print(f"\nmedian first-answer ratio fixed/adaptive: {statistics.median(ratios):.1f}x; "
          f"median adaptive first answer / floor: {statistics.median(floors):.0f}x")


if __name__ == "__main__":
    main()

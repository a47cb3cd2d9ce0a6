"""How close to the information-theoretic floor can a first answer get?

    python scripts/bench_floor.py            # 14 suite targets x 2 noise rates, minutes
    python scripts/bench_floor.py --quick    # two cases, seconds

The adaptive mode's goal was a median first answer within 20x of the floor, ``log2 n``
queries per internal node on the path, at equal error to fixed mode. This
script measures, on the suite's n = 100 targets with the suite's fixed-mode
settings (depth 12, p = 0.1, 1,000 score / 500 leaf samples, seed 7), two
things that bound what any stopping rule on the derived sample stream can do:

1. **Uniform budget.** Fixed mode with ``q`` score samples per node and
   ``min(q, 500)`` leaf samples, for ``q`` in ``BUDGETS``; ``q = 64`` gives a
   first answer of ``12 * 128 + 64 = 1,600`` queries, 20x the floor of a
   12-node path at n = 100 (80 queries). Error against ``f`` on fresh uniform
   points. A rule that stops early on average spends about this much.
2. **Clairvoyant stopping**, over the first answers of 5 fresh points (the
   paths fixed mode takes). Both bounds know the answer, so no real rule on
   the same samples does better than the rule they describe:

   * *exact*: at every node the fewest samples from which the prefix decision
     (the leader ``argmin C_i``, or the leaf's sign) equals fixed mode's and
     stays equal for every longer prefix; the cost of reproducing fixed
     mode's tree.
   * *relevant*: a far weaker demand. At a node whose clean (noise-free)
     subfunction is not constant on its 1,000 score points, the prefix leader
     need only settle on *some* variable relevant to it (flipping it changes
     the clean value at one of those points). Where the clean subfunction is
     constant, the rule either makes a leaf at once, paying only for its
     label to settle, or keeps splitting at one sample per node; it takes
     whichever is cheaper relative to the floor of its own path.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys

import numpy as np

import lca
from lca import derive, estimate, targets
from lca.suite import SPECS

N, DEPTH, NOISE_RATE, SEED = 100, 12, 0.1, 7
SCORE_CAP, LEAF_CAP = 1000, 500
BUDGETS = (64, 128, 256, SCORE_CAP)
NOISES = (0.0, 0.05)


def settle_point(decisions: np.ndarray) -> int:
    """Fewest samples ``k`` from which every prefix decision equals the last one.

    ``decisions[k - 1]`` is the decision made from the first ``k`` samples.
    """
    changed = np.nonzero(decisions != decisions[-1])[0]
    return 1 if changed.size == 0 else int(changed[-1]) + 2


def prefix_leaders(f: lca.Oracle, params: lca.Params, path: derive.Path) -> np.ndarray:
    """The fixed-mode leader after each prefix of the node's score samples."""
    per_sample = estimate.unbiased_estimates(f, SEED, path, params.score_samples,
                                             params.noise_threshold)
    # eta_i < 0 exactly when f(x) != f(y) and x_i = y_i: one term of C_i.
    agreements = np.cumsum(per_sample < 0, axis=0)
    agreements[:, [var for var, _ in path]] = params.score_samples + 1
    return np.argmin(agreements, axis=1)  # ties to the lowest index, as choose_variable


def node_points(params: lca.Params, purpose: str, path: derive.Path, count: int) -> np.ndarray:
    """The first ``count`` uniform points a node derives for ``purpose``, as ``int8``."""
    key = derive.node_key(SEED, purpose, path)
    return derive.unpack_points(derive.uniform_points(key, params.n, 0, count, path), params.n)


def prefix_labels(f: lca.Oracle, params: lca.Params, path: derive.Path) -> np.ndarray:
    """The fixed-mode leaf label after each prefix of the leaf's samples."""
    sums = np.cumsum(f(node_points(params, "leaf", path, params.leaf_samples)).astype(np.int64))
    return np.where(sums >= 0, 1, -1)  # estimate.leaf_label, prefix by prefix


def relevant_variables(clean: lca.Oracle, params: lca.Params,
                       path: derive.Path) -> np.ndarray:
    """Free variables whose flip changes ``clean`` at one of the node's score points.

    Variables on ``path`` are never relevant: flipping one leaves the subcube.
    """
    x = node_points(params, "score", path, params.score_samples)
    values = clean(x)
    relevant = np.zeros(params.n, dtype=bool)
    on_path = {var for var, _ in path}
    for var in sorted(set(range(params.n)) - on_path):
        flipped = x.copy()
        flipped[:, var] *= -1
        relevant[var] = bool(np.any(clean(flipped) != values))
    return relevant


def clairvoyant(f: lca.Oracle, clean: lca.Oracle, params: lca.Params,
                z: np.ndarray) -> tuple[float, float]:
    """The *exact* and *relevant* clairvoyant first answers for ``T(z)``, in floors.

    Both walk fixed mode's path of ``z``. Where the clean subfunction becomes
    constant, the *relevant* rule takes the cheaper (relative to the floor) of
    a leaf there, or splitting at one sample (two queries) per node down the
    path, which lengthens its path and with it its floor.
    """
    explanation = lca.Reconstructor(f, params).explain(z, SEED)
    path = explanation.path
    node_floor = math.log2(params.n)
    labels = prefix_labels(f, params, path)
    assert labels[-1] == explanation.label, "prefix labels disagree with the reconstructor"
    exact = relevant = 0
    relevant_ratio = None
    for depth, node in enumerate(explanation.nodes):
        prefix = path[:depth]
        leaders = prefix_leaders(f, params, prefix)
        assert leaders[-1] == node.variable, "prefix leaders disagree with the reconstructor"
        exact += 2 * settle_point(leaders)
        if relevant_ratio is not None:
            continue
        useful = relevant_variables(clean, params, prefix)
        if useful.any():
            relevant += 2 * settle_point(useful[leaders])
            continue
        leaf_here = relevant + settle_point(prefix_labels(f, params, prefix))
        split_on = relevant + 2 * (len(path) - depth) + settle_point(labels)
        relevant_ratio = min(leaf_here / (max(depth, 1) * node_floor),
                             split_on / (len(path) * node_floor))
    path_floor = len(path) * node_floor
    if relevant_ratio is None:
        relevant_ratio = (relevant + settle_point(labels)) / path_floor
    return (exact + settle_point(labels)) / path_floor, relevant_ratio


def uniform_params(q: int) -> lca.Params:
    """Fixed mode with ``q`` score samples per node and ``min(q, 500)`` per leaf."""
    return lca.Params.practical(N, DEPTH, NOISE_RATE, q, min(q, LEAF_CAP))


def uniform_budget_error(f: lca.Oracle, q: int, points: np.ndarray,
                         truth: np.ndarray) -> float:
    """Error against ``f`` of fixed mode with ``q`` score samples per node."""
    answers = lca.Reconstructor(f, uniform_params(q)).answer_many(points, SEED)
    return float(np.mean(answers != truth))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--points", type=int, default=2000)
    args = parser.parse_args()
    keys = ["tree16-iid"] if args.quick else list(SPECS)
    eval_points = derive.sample_points(0, "bench-floor-points", N, 200 if args.quick
                                       else args.points)
    first_points = derive.sample_points(0, "bench-floor-first", N, 5)
    full = lca.Params.practical(N, DEPTH, NOISE_RATE, SCORE_CAP, LEAF_CAP)
    # Fixed-mode paths never stop early at depth 12 < n: every one has DEPTH nodes.
    floor = DEPTH * math.log2(N)

    header = " | ".join(f"error, q = {q:,}" for q in BUDGETS)
    print(f"n = {N}, depth {DEPTH}, p = {NOISE_RATE}, seed {SEED}; error on "
          f"{len(eval_points):,} uniform points; clairvoyant over the first answers of "
          f"{len(first_points)} points; floor = {DEPTH} internal nodes x log2 n = "
          f"{floor:.0f} queries; fixed mode (q = {SCORE_CAP:,}) spends "
          f"{full.predicted_queries / floor:.0f}x the floor, q = {BUDGETS[0]} spends "
          f"{uniform_params(BUDGETS[0]).predicted_queries / floor:.0f}x\n")
    print(f"| case | {header} | clairvoyant / floor "
          "exact (median of 5) | clairvoyant / floor, relevant (median of 5) |")
    print("|---|" + "---|" * (len(BUDGETS) + 2))
    medians = {(rule, noise): [] for rule in ("exact", "relevant") for noise in NOISES}
    for key in keys:
        for noise in NOISES:
            print(f"{key}, noise {noise} ...", file=sys.stderr)
            clean = SPECS[key].build(N, 1)
            f = targets.with_label_noise(clean, noise, seed=2) if noise else clean
            truth = f(eval_points)
            errors = [uniform_budget_error(f, q, eval_points, truth) for q in BUDGETS]
            ratios = [clairvoyant(f, clean, full, z) for z in first_points]
            exact = statistics.median(ratio for ratio, _ in ratios)
            relevant = statistics.median(ratio for _, ratio in ratios)
            medians["exact", noise].append(exact)
            medians["relevant", noise].append(relevant)
            print(f"| {key}, noise {noise} | " + " | ".join(f"{e:.3f}" for e in errors)
                  + f" | {exact:.0f}x | {relevant:.0f}x |")
    print()
    for rule in ("exact", "relevant"):
        groups = [(f"noise {noise}", medians[rule, noise]) for noise in NOISES]
        groups.append(("all cases", [v for noise in NOISES for v in medians[rule, noise]]))
        print(f"* clairvoyant ({rule}), median over cases: " + "; ".join(
            f"{label} {statistics.median(values):.0f}x" for label, values in groups)
            + " the floor")


if __name__ == "__main__":
    main()

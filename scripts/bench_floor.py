"""How close to the information-theoretic floor can a first answer get? (issue 6)

    python scripts/bench_floor.py            # 14 suite targets x 2 noise rates, minutes
    python scripts/bench_floor.py --quick    # two cases, seconds

Issue 6 asks for a median first answer within 20x of the floor, ``log2 n``
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


def prefix_labels(f: lca.Oracle, params: lca.Params, path: derive.Path) -> np.ndarray:
    """The fixed-mode leaf label after each prefix of the leaf's samples."""
    key = derive.node_key(SEED, "leaf", path)
    points = derive.unpack_points(
        derive.uniform_points(key, params.n, 0, params.leaf_samples, path), params.n)
    sums = np.cumsum(f(points).astype(np.int64))
    return np.where(sums >= 0, 1, -1)  # estimate.leaf_label, prefix by prefix


def clairvoyant_first_answer(f: lca.Oracle, params: lca.Params, z: np.ndarray) -> int:
    """Queries of clairvoyant stopping for ``T(z)``."""
    explanation = lca.Reconstructor(f, params).explain(z, SEED)
    queries = 0
    for depth, node in enumerate(explanation.nodes):
        leaders = prefix_leaders(f, params, explanation.path[:depth])
        assert leaders[-1] == node.variable, "prefix leaders disagree with the reconstructor"
        queries += 2 * settle_point(leaders)
    labels = prefix_labels(f, params, explanation.path)
    assert labels[-1] == explanation.label, "prefix labels disagree with the reconstructor"
    return queries + settle_point(labels)


def relevant_variables(clean: lca.Oracle, params: lca.Params,
                       path: derive.Path) -> np.ndarray:
    """Free variables whose flip changes ``clean`` at one of the node's score points.

    Variables on ``path`` are never relevant: flipping one leaves the subcube.
    """
    key = derive.node_key(SEED, "score", path)
    x = derive.unpack_points(
        derive.uniform_points(key, params.n, 0, params.score_samples, path), params.n)
    values = clean(x)
    relevant = np.zeros(params.n, dtype=bool)
    on_path = {var for var, _ in path}
    for var in sorted(set(range(params.n)) - on_path):
        flipped = x.copy()
        flipped[:, var] *= -1
        relevant[var] = bool(np.any(clean(flipped) != values))
    return relevant


def clairvoyant_relevant(f: lca.Oracle, clean: lca.Oracle, params: lca.Params,
                         z: np.ndarray) -> float:
    """The *relevant* clairvoyant rule's first answer for ``T(z)``, in multiples of the floor.

    Where the clean subfunction becomes constant the rule takes the cheaper
    (relative to the floor) of two options: a leaf there, or splitting on at
    one sample (two queries) per node down fixed mode's path, which lengthens
    the path and with it the floor.
    """
    path = lca.Reconstructor(f, params).explain(z, SEED).path
    log_n = math.log2(params.n)
    queries = 0
    for depth in range(len(path)):
        prefix = path[:depth]
        relevant = relevant_variables(clean, params, prefix)
        if not relevant.any():
            leaf_here = queries + settle_point(prefix_labels(f, params, prefix))
            split_on = (queries + 2 * (len(path) - depth)
                        + settle_point(prefix_labels(f, params, path)))
            return min(leaf_here / max(depth * log_n, log_n),
                       split_on / (len(path) * log_n))
        queries += 2 * settle_point(relevant[prefix_leaders(f, params, prefix)])
    return (queries + settle_point(prefix_labels(f, params, path))) / (len(path) * log_n)


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
            exact = statistics.median(clairvoyant_first_answer(f, full, z) / floor
                                      for z in first_points)
            relevant = statistics.median(clairvoyant_relevant(f, clean, full, z)
                                         for z in first_points)
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

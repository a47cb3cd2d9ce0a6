"""Which split rule should the efficient mode use? Criteria with ample samples, then costs.

Part 1 takes the sampling error out: a top-down tree on the suite's targets
that decides every node from ``SAMPLES`` fresh uniform points of its subcube
(numpy's generator, not derived bits: this is a measurement, not a mode),
splitting on the free variable with the largest

* ``influence``: ``Pr[f(x) != f(x with x_i negated)]``;
* ``votes``: count of pairs whose binary search (as in ``lca.search``) found ``i``;
* ``correlation``: ``|E[f(x) x_i]|``;
* ``topK``: influence, among the ``K`` vote leaders only (what the efficient
  mode does, with its correlation leader left out here);

and a leaf at the depth cap (or where every sample agrees) labelled by the
majority. Part 2 runs ``Params.efficient`` at its defaults with
``lca.search.rules.SEARCH_CANDIDATES`` = 1, 2, 3 (set for the run) and
reports error and queries: the cost side of the choice. Both answer the
suite's evaluation points (``derive.sample_points(0, 'bench/eval', ...)``);
errors are against ``f``. Prints markdown tables (docs/benchmarks_history.md §6).

    python scripts/diagnose_split_rules.py     # about 6 minutes on 1 core
"""

from __future__ import annotations

import warnings

import numpy as np

import lca
from lca import derive, targets
from lca.search import rules
from lca.suite import SPECS

CASES = [("tree64-sib", 11, 0.0), ("tree64-iid", 11, 0.1), ("tree64-sib", 100, 0.0),
         ("tree1024-iid", 100, 0.0), ("tree1024-sib", 100, 0.0)]
EFFICIENT_CASES = CASES + [("tree64-sib", 100, 0.2), ("maj15", 100, 0.2)]
SAMPLES = 2000
POINTS = 1500
CRITERIA = ("influence", "votes", "correlation", "top2", "top3")


def _subcube(rng: np.random.Generator, n: int, path: tuple, count: int) -> np.ndarray:
    x = rng.choice(np.array([-1, 1], dtype=np.int8), size=(count, n))
    for variable, bit in path:
        x[:, variable] = bit
    return x


def _found(f: lca.Oracle, x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The binary search of lca.search on pairs with f(x) != f(y), random switching orders."""
    n = x.shape[1]
    fx = f(x)
    differing = x != y
    order = np.lexsort((rng.random(x.shape), ~differing), axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(n), x.shape), axis=-1)
    lo, hi = np.zeros(len(x), dtype=np.int64), differing.sum(axis=1)
    while (active := np.flatnonzero(hi - lo > 1)).size:
        mid = (lo[active] + hi[active]) // 2
        same = f(np.where(rank[active] < mid[:, None], y[active], x[active])) == fx[active]
        lo[active[same]] = mid[same]
        hi[active[~same]] = mid[~same]
    return order[np.arange(len(x)), hi - 1]


def _scores(f: lca.Oracle, n: int, path: tuple, rng: np.random.Generator):
    free = np.ones(n, dtype=bool)
    free[[variable for variable, _ in path]] = False
    x = _subcube(rng, n, path, SAMPLES)
    fx = f(x)
    influence = np.zeros(n)
    for i in np.flatnonzero(free):
        flipped = x.copy()
        flipped[:, i] = -flipped[:, i]
        influence[i] = np.mean(f(flipped) != fx)
    correlation = np.zeros(n)
    correlation[free] = np.abs(fx.astype(float) @ x[:, free]) / SAMPLES
    votes = np.zeros(n)
    first, second = x[0::2], x[1::2]
    disagree = fx[0::2] != fx[1::2]
    if disagree.any():
        np.add.at(votes, _found(f, first[disagree], second[disagree], rng), 1)
    return free, fx, {"influence": influence, "votes": votes, "correlation": correlation}


def top_down_error(f: lca.Oracle, n: int, depth: int, criterion: str,
                   points: np.ndarray, truth: np.ndarray) -> float:
    rng = np.random.default_rng(1)
    decided: dict[tuple, tuple[str, int]] = {}

    def decide(path: tuple) -> tuple[str, int]:
        if path not in decided:
            free, fx, scores = _scores(f, n, path, rng)
            majority = 1 if fx.sum() >= 0 else -1
            if len(path) == depth or np.all(fx == fx[0]):
                decided[path] = ("leaf", majority)
            elif criterion.startswith("top"):
                voted = np.flatnonzero(free)[np.argsort(-scores["votes"][free], kind="stable")]
                leaders = voted[:int(criterion[3:])]
                decided[path] = ("split", int(leaders[np.argmax(scores["influence"][leaders])]))
            else:
                decided[path] = ("split", int(np.argmax(np.where(free, scores[criterion], -1))))
        return decided[path]

    answers = []
    for z in points:
        path: tuple = ()
        while (node := decide(path))[0] == "split":
            path = path + ((node[1], int(z[node[1]])),)
        answers.append(node[1])
    return float(np.mean(np.array(answers) != truth))


def _case(key: str, n: int, noise: float):
    clean = SPECS[key].build(n, 1)
    f = targets.with_label_noise(clean, rate=noise, seed=2) if noise else clean
    points = derive.sample_points(0, "bench/eval", n, POINTS)
    return f, points, f(points), min(12, n - 3)


def main() -> None:
    warnings.simplefilter("ignore", lca.LowMarginWarning)
    print(f"Part 1: top-down trees from {SAMPLES:,} fresh samples per node; error vs f on "
          f"{POINTS:,} points.\n")
    print("| case | " + " | ".join(CRITERIA) + " |")
    print("|---|" + "---:|" * len(CRITERIA))
    for key, n, noise in CASES:
        f, points, truth, depth = _case(key, n, noise)
        cells = [f"{top_down_error(f, n, depth, c, points, truth):.4f}" for c in CRITERIA]
        print(f"| {key} n={n} η={noise} | " + " | ".join(cells) + " |", flush=True)
    print("\nPart 2: `Params.efficient(n, depth=min(12, n - 3))`, seed 7, by "
          "SEARCH_CANDIDATES; error vs f / first-answer queries / queries for all "
          f"{POINTS:,} answers.\n")
    choices = (1, 2, 3)
    print("| case | " + " | ".join(f"K = {k}" for k in choices) + " |")
    print("|---|" + "---:|" * len(choices))
    default = rules.SEARCH_CANDIDATES
    try:
        for key, n, noise in EFFICIENT_CASES:
            f, points, truth, depth = _case(key, n, noise)
            cells = []
            for k in choices:
                rules.SEARCH_CANDIDATES = k
                rec = lca.Reconstructor(f, lca.Params.efficient(n, depth=depth))
                first = rec.explain(points[0], 7).stats.queries
                error = np.mean(rec.answer_many(points, 7) != truth)
                cells.append(f"{error:.4f} / {first:,} / {rec.stats.queries:,}")
            print(f"| {key} n={n} η={noise} | " + " | ".join(cells) + " |", flush=True)
    finally:
        rules.SEARCH_CANDIDATES = default


if __name__ == "__main__":
    main()

"""Where does the efficient mode's error come from? Errors by the kind of leaf that made them.

For the suite cases where ``Params.efficient`` was less accurate than the
paper's estimator (docs/benchmarks_suite_efficient.md), answer the suite's
evaluation points and attribute every wrong answer to the leaf that gave it:

* ``cap``: a leaf at the depth cap (the path used every level it had);
* ``constant``: an early leaf whose own points certified f within ``eps`` of
  constant;
* ``no structure``: an early leaf at the pair cap where nothing stood out and
  at most ``eps`` of its points disagreed.

Run with the default ``eps`` and with ``eps=0.05``. Prints a markdown table
(docs/benchmarks_history.md §6).

    python scripts/diagnose_efficient.py     # about 2 minutes
"""

from __future__ import annotations

import warnings

import numpy as np

import lca
from lca import derive, targets
from lca.suite import SPECS

CASES = [("tree64-sib", 11, 0.0), ("tree64-iid", 11, 0.0), ("tree16-iid", 100, 0.0),
         ("tree1024-iid", 100, 0.0), ("tree64-sib", 100, 0.05)]
POINTS = 10_000
KINDS = ("cap", "constant", "no structure")


def leaf_kind(decisions: dict, z: np.ndarray, path_length: int) -> str:
    path: lca.reconstruct.Path = ()
    while True:
        decision = decisions[path]
        if isinstance(decision, lca.LeafDecision):
            break
        path = path + ((decision.variable, int(z[decision.variable])),)
    if len(path) == path_length:
        return "cap"
    return "constant" if decision.certified else "no structure"


def main() -> None:
    warnings.simplefilter("ignore", lca.LowMarginWarning)
    print("| case | eps | error vs f | queries, all answers | "
          + " | ".join(f"{kind}: points / wrong" for kind in KINDS) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(KINDS))
    for key, n, noise in CASES:
        clean = SPECS[key].build(n, 1)
        f = targets.with_label_noise(clean, rate=noise, seed=2) if noise else clean
        points = derive.sample_points(0, "bench/eval", n, POINTS)
        truth = f(points)
        for eps in (0.1, 0.05):
            params = lca.Params.efficient(n, depth=min(12, n - 3), eps=eps)
            rec = lca.Reconstructor(f, params, record=True)
            answers = rec.answer_many(points, 7)
            decisions = {path: d for (_, path), d in rec.decisions.items()}
            kinds = np.array([leaf_kind(decisions, z, params.path_length) for z in points])
            wrong = answers != truth
            cells = [f"{int((kinds == k).sum()):,} / {int(wrong[kinds == k].sum()):,}"
                     for k in KINDS]
            print(f"| {key} n={n} η={noise} | {eps} | {wrong.mean():.4f} | "
                  f"{rec.stats.queries:,} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

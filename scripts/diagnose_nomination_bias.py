"""How far above its influence is a candidate's flip-edge rate, when its own pairs nominated it?

    flock /tmp/lca-bench.lock python scripts/diagnose_nomination_bias.py [--seeds 2000]

The efficient mode nominates candidates from a node's pairs (votes and
correlations) and measures their influence on the first points of the same
pairs (docs/theory.md §7, "Flip edges"). At the root of maj5 (a majority of
5 of n = 20 variables, ``lca.targets.majority``; every variable of the
majority has influence 6/16, the others 0), for each reconstruction seed the
script builds the root's decision (``Params.efficient(20, depth=1)``, with
the preset's one round of 64 pairs and with rounds of 16, 32 and 64),
re-derives the root's pair points (purpose ``"search"``, samples ``2j`` are
the first points) and measures, over the ``q`` pairs the node drew, the
flip-edge rate ``E_v / q`` of the chosen variable (the influence leader), of
its runner-up and, as a control fixed before any pair is drawn, of the
majority's lowest-index variable, minus each one's exact influence. Means
over seeds with their standard errors; nothing of ``lca`` depends on it.
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import numpy as np

import lca
from lca import derive, targets

N, K, TARGET_SEED = 20, 5, 1
INFLUENCE = 6 / 16  # Pr[the other 4 of a 5-majority split 2-2]


def edge_rate(f: lca.Oracle, firsts: np.ndarray, variable: int) -> float:
    """``E_v / q``: how often negating ``variable`` at the first points changes ``f``."""
    flipped = firsts.copy()
    flipped[:, variable] *= -1
    return float(np.mean(f(firsts) != f(flipped)))


def measure(first_round: int, seeds: int) -> dict[str, list[float]]:
    f = targets.majority(N, K, TARGET_SEED)
    relevant = set(f.variables.tolist())
    control = min(relevant)
    params = lca.Params.efficient(N, depth=1, first_round=first_round)
    out: dict[str, list[float]] = {"leader": [], "runner-up": [], "control": []}
    for seed in range(seeds):
        rec = lca.Reconstructor(f, params, record=True)
        rec.answer(np.ones(N, dtype=np.int8), seed)
        root = rec.decisions[(seed, ())]
        if not isinstance(root, lca.reconstruct.NodeDecision) or root.rule != "influence":
            continue
        firsts = derive.sample_points(seed, "search", N, 2 * root.samples)[0::2]
        for name, variable in (("leader", root.variable), ("runner-up", root.runner_up),
                               ("control", control)):
            if variable is not None:
                truth = INFLUENCE if variable in relevant else 0.0
                out[name].append(edge_rate(f, firsts, variable) - truth)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2000)
    args = parser.parse_args()
    warnings.simplefilter("ignore", lca.LowMarginWarning)  # depth 1: the leaves are guesses
    print(f"maj5 at n = {N} (variables of targets.majority({N}, {K}, {TARGET_SEED})), "
          f"root node, {args.seeds} seeds: mean of E_v / q - Inf_v (standard error)\n")
    print("| rounds | influence splits | leader | runner-up | control (fixed in advance) |")
    print("|---|---:|---:|---:|---:|")
    for first_round, label in ((64, "one of 64 (the preset)"), (16, "16, 32, 64")):
        rows = measure(first_round, args.seeds)
        cells = [f"{statistics.fmean(v):+.4f} ({statistics.stdev(v) / len(v) ** 0.5:.4f})"
                 for v in rows.values()]
        print(f"| {label} | {len(rows['leader'])} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

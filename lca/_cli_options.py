"""Options shared by ``lca`` subcommands that reconstruct a noisy random tree."""

from __future__ import annotations

import argparse

from lca import targets
from lca.params import Params
from lca.targets import DecisionTree, LabelNoise


def add_noisy_tree_options(parser: argparse.ArgumentParser, *, n: int, leaves: int,
                           depth: int, score_samples: int, leaf_samples: int) -> None:
    """Target (random tree + label noise), seed and practical parameters."""
    parser.add_argument("--n", type=int, default=n, help=f"variables (default {n})")
    parser.add_argument("--leaves", type=int, default=leaves,
                        help=f"leaves of the target tree (default {leaves})")
    parser.add_argument("--noise", type=float, default=0.05,
                        help="label noise rate of f (default 0.05)")
    parser.add_argument("--seed", type=int, default=7, help="reconstruction seed (default 7)")
    parser.add_argument("--tree-seed", type=int, default=1, help="seed of the target")
    parser.add_argument("--depth", type=int, default=depth)
    parser.add_argument("--noise-rate", type=float, default=0.1,
                        help="the score estimator's re-randomisation rate p in (0, 1]: each "
                        "coordinate re-randomised w.p. p, flipped w.p. p/2 (not label "
                        "noise of f; default 0.1)")
    parser.add_argument("--score-samples", type=int, default=score_samples)
    parser.add_argument("--leaf-samples", type=int, default=leaf_samples)


def noisy_tree_setup(args: argparse.Namespace) -> tuple[DecisionTree, LabelNoise, Params]:
    """The clean target, the noisy ``f`` and the parameters the options describe."""
    target = targets.random_tree(n=args.n, leaves=args.leaves, seed=args.tree_seed)
    f = targets.with_label_noise(target, rate=args.noise, seed=args.tree_seed + 1)
    params = Params.practical(n=args.n, depth=args.depth, noise_rate=args.noise_rate,
                              score_samples=args.score_samples,
                              leaf_samples=args.leaf_samples)
    return target, f, params

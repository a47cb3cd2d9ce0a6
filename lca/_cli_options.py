"""Options shared by ``lca`` subcommands that reconstruct a noisy random tree."""

from __future__ import annotations

import argparse

from lca import targets
from lca.params import Params
from lca.targets import DecisionTree, LabelNoise


def add_noisy_tree_options(parser: argparse.ArgumentParser, *, n: int, leaves: int,
                           depth: int, score_samples: int, leaf_samples: int) -> None:
    """Target (random tree + label noise), seed and the reconstruction's parameters.

    ``--mode efficient`` (the default) is :meth:`Params.efficient`; ``--mode
    paper`` is the paper's estimator, :meth:`Params.practical`, with
    ``score_samples`` and ``leaf_samples`` as its defaults.
    """
    parser.add_argument("--n", type=int, default=n, help=f"variables (default {n})")
    parser.add_argument("--leaves", type=int, default=leaves,
                        help=f"leaves of the target tree (default {leaves})")
    parser.add_argument("--noise", type=float, default=0.05,
                        help="label noise rate of f (default 0.05)")
    parser.add_argument("--seed", type=int, default=7, help="reconstruction seed (default 7)")
    parser.add_argument("--tree-seed", type=int, default=1, help="seed of the target")
    parser.add_argument("--depth", type=int, default=depth,
                        help=f"tree depth; a cap in efficient mode (default {depth})")
    parser.add_argument("--mode", choices=("efficient", "paper"), default="efficient",
                        help="efficient: sensitive-coordinate search (Params.efficient, "
                        "the default); paper: the paper's score estimator "
                        "(Params.practical)")
    parser.add_argument("--pairs", type=int, default=64,
                        help="efficient mode: most pairs per node (default 64)")
    parser.add_argument("--noise-rate", type=float, default=None,
                        help="the score estimator's re-randomisation rate p in (0, 1]: each "
                        "coordinate re-randomised w.p. p, flipped w.p. p/2 (not label "
                        "noise of f; paper mode; default 0.1)")
    parser.set_defaults(score_samples_paper=score_samples)
    parser.add_argument("--score-samples", type=int, default=None,
                        help=f"paper mode: samples per node (default {score_samples})")
    parser.set_defaults(leaf_samples_paper=leaf_samples)
    parser.add_argument("--leaf-samples", type=int, default=None,
                        help=f"samples per leaf (default: {leaf_samples} in paper mode, "
                        "the preset's in efficient mode)")


def noisy_tree_setup(args: argparse.Namespace) -> tuple[DecisionTree, LabelNoise, Params]:
    """The clean target, the noisy ``f`` and the parameters the options describe."""
    target = targets.random_tree(n=args.n, leaves=args.leaves, seed=args.tree_seed)
    f = targets.with_label_noise(target, rate=args.noise, seed=args.tree_seed + 1)
    if args.mode == "efficient":
        if args.noise_rate is not None or args.score_samples is not None:
            raise ValueError("--noise-rate and --score-samples set the paper's estimator: "
                             "use them with --mode paper (efficient mode takes --pairs)")
        leaf = {} if args.leaf_samples is None else {"leaf_samples": args.leaf_samples}
        params = Params.efficient(args.n, depth=args.depth, pairs=args.pairs, **leaf)
    else:
        params = Params.practical(
            n=args.n, depth=args.depth,
            noise_rate=0.1 if args.noise_rate is None else args.noise_rate,
            score_samples=(args.score_samples_paper if args.score_samples is None
                           else args.score_samples),
            leaf_samples=(args.leaf_samples_paper if args.leaf_samples is None
                          else args.leaf_samples))
    return target, f, params

"""Options shared by ``lca`` subcommands that reconstruct a noisy random tree."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from lca import targets
from lca._validate import MAX_N, SEED_LIMIT
from lca.params import Params
from lca.targets import DecisionTree, LabelNoise

SEED_HIGH = SEED_LIMIT - 1
"""Largest seed (``u64``); a seed that is also used plus one stops one below."""

N_HIGH = MAX_N
"""Largest ``--n``: the bound of :mod:`lca.targets` and :class:`lca.Params`."""

NOISE_RATE_LOW = 2.0 ** -16
"""``--noise-rate`` must exceed this, or it rounds to 0 on the ``2**-15`` grid."""


def int_in(low: int, high: float = math.inf) -> Callable[[str], int]:
    """An argparse ``type``: an int in ``[low, high]``, else a one-line option error."""
    upper = "inf)" if high == math.inf else f"{int(high)}]"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be an int in the range [{low}, {upper}; got {text!r}")
        return value
    return parse


def real_in(low: float, high: float, *, open_low: bool = False, open_high: bool = False,
            low_text: str | None = None) -> Callable[[str], float]:
    """An argparse ``type``: a real number in the interval, else a one-line option error."""
    interval = (f"{'(' if open_low else '['}{low_text or f'{low:g}'}, "
                f"{high:g}{')' if open_high else ']'}")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        inside = (low < value if open_low else low <= value) and \
            (value < high if open_high else value <= high)
        if not inside:  # NaN is never inside
            raise argparse.ArgumentTypeError(
                f"must be a real number in the range {interval}; got {text!r}")
        return value
    return parse


MODES = ("efficient", "paper")
"""``--mode`` of ``lca demo``, ``lca bench`` and ``lca serve``."""

# The paper mode's estimator settings on the command line (``--mode paper``).
PAPER_NOISE_RATE = 0.1
PAPER_SCORE_SAMPLES = 1000
PAPER_LEAF_SAMPLES = 500


def add_noisy_tree_options(parser: argparse.ArgumentParser, *, n: int, leaves: int,
                           depth: int, score_samples: int, leaf_samples: int) -> None:
    """Target (random tree + label noise), seed and the reconstruction's parameters.

    ``--mode efficient`` (the default) is :meth:`Params.efficient`; ``--mode
    paper`` is the paper's estimator, :meth:`Params.practical`, with
    ``score_samples`` and ``leaf_samples`` as its defaults.
    """
    parser.add_argument("--n", type=int_in(1, N_HIGH), default=n,
                        help=f"variables (default {n})")
    parser.add_argument("--leaves", type=int_in(1), default=leaves,
                        help=f"leaves of the target tree (default {leaves})")
    parser.add_argument("--noise", type=real_in(0.0, 0.5), default=0.05,
                        help="label noise rate of f (default 0.05)")
    parser.add_argument("--seed", type=int_in(0, SEED_HIGH), default=7,
                        help="reconstruction seed (default 7)")
    # The label noise is seeded with tree-seed + 1.
    parser.add_argument("--tree-seed", type=int_in(0, SEED_HIGH - 1), default=1,
                        help="seed of the target")
    parser.add_argument("--depth", type=int_in(0), default=depth,
                        help=f"tree depth; a cap in efficient mode (default {depth})")
    parser.add_argument("--mode", choices=MODES, default="efficient",
                        help="efficient: sensitive-coordinate search (Params.efficient, "
                        "the default); paper: the paper's score estimator "
                        "(Params.practical)")
    parser.add_argument("--pairs", type=int_in(1), default=None,
                        help="efficient mode: most pairs per node (default: the preset's, "
                        "64)")
    parser.add_argument("--lookahead", type=int_in(1), default=None,
                        help="efficient mode: binary-search steps asked per oracle call, "
                        "1 to 8 (default 1); the same tree in fewer calls and more "
                        "queries (Params.lookahead)")
    parser.add_argument("--noise-rate", type=real_in(NOISE_RATE_LOW, 1.0, open_low=True,
                                                     low_text="2**-16"),
                        default=None,
                        help="the score estimator's re-randomisation rate p in (0, 1]: each "
                        "coordinate re-randomised w.p. p, flipped w.p. p/2 (not label "
                        f"noise of f; paper mode; default {PAPER_NOISE_RATE})")
    parser.set_defaults(score_samples_paper=score_samples)
    parser.add_argument("--score-samples", type=int_in(1), default=None,
                        help=f"paper mode: samples per node (default {score_samples})")
    parser.set_defaults(leaf_samples_paper=leaf_samples)
    parser.add_argument("--leaf-samples", type=int_in(1), default=None,
                        help=f"samples per leaf (default: {leaf_samples} in paper mode, "
                        "the preset's in efficient mode)")


def noisy_tree_setup(args: argparse.Namespace) -> tuple[DecisionTree, LabelNoise, Params]:
    """The clean target, the noisy ``f`` and the parameters the options describe."""
    target = targets.random_tree(n=args.n, leaves=args.leaves, seed=args.tree_seed)
    f = targets.with_label_noise(target, rate=args.noise, seed=args.tree_seed + 1)
    if args.mode == "efficient":
        paper_only = [option for option, value in (("--noise-rate", args.noise_rate),
                                                   ("--score-samples", args.score_samples))
                      if value is not None]
        if paper_only:
            raise ValueError(f"argument {'/'.join(paper_only)}: sets the paper's estimator: "
                             "use it with --mode paper (efficient mode takes --pairs)")
        given = {name: value for name, value in (("pairs", args.pairs),
                                                 ("leaf_samples", args.leaf_samples),
                                                 ("lookahead", args.lookahead))
                 if value is not None}
        params = Params.efficient(args.n, depth=args.depth, **given)
    else:
        if args.pairs is not None:
            raise ValueError("argument --pairs: sets the efficient mode's pairs per node: "
                             "use it with --mode efficient (paper mode takes "
                             "--score-samples)")
        if args.lookahead is not None:
            raise ValueError("argument --lookahead: sets the efficient mode's binary "
                             "search: use it with --mode efficient")
        params = Params.practical(
            n=args.n, depth=args.depth,
            noise_rate=PAPER_NOISE_RATE if args.noise_rate is None else args.noise_rate,
            score_samples=(args.score_samples_paper if args.score_samples is None
                           else args.score_samples),
            leaf_samples=(args.leaf_samples_paper if args.leaf_samples is None
                          else args.leaf_samples))
    return target, f, params

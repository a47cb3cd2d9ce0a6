"""``lca test``: the tolerant tester on a chosen target, from the command line."""

from __future__ import annotations

import argparse
import math
from typing import Any

from lca._cli_options import N_HIGH, SEED_HIGH, int_in, real_in
from lca.oracle import Oracle
from lca.tester.tolerant import (
    DEFAULT_MAX_QUERIES,
    THRESHOLD_FACTOR,
    plan_tolerant_test,
    tolerant_test,
)

__all__ = ["add_test_command"]


_TARGETS = ("tree", "parity", "majority", "random")


def _make_target(args: argparse.Namespace) -> Oracle:
    from lca import targets

    # Cross-option checks; lca.cli.main prints them as one "error:" line.
    if args.k is not None and args.target not in ("parity", "majority"):
        raise ValueError("argument --k: applies only to --target parity or majority")
    if args.leaves is not None and args.target != "tree":
        raise ValueError("argument --leaves: applies only to --target tree")
    if args.target == "tree":
        leaves = args.leaves if args.leaves is not None else args.s
        if leaves > 2 ** args.n:
            option = "--leaves" if args.leaves is not None else "--s (the default --leaves)"
            raise ValueError(f"argument {option}: a tree on --n {args.n} variables has at "
                             f"most 2**n leaves; got {leaves}")
        f: Oracle = targets.random_tree(args.n, leaves, args.target_seed)
        description = f"random tree, {f.size} leaves, depth {f.depth}"
    elif args.target == "parity":
        k = args.k if args.k is not None else args.n
        if k > args.n:
            raise ValueError(f"argument --k: must be at most --n {args.n}; got {k}")
        f = targets.parity(args.n, k, args.target_seed)
        description = f"parity of {k} variables"
    elif args.target == "majority":
        k = args.k if args.k is not None else args.n - (1 - args.n % 2)
        f = targets.majority(args.n, k, args.target_seed)
        description = f"majority of {k} variables"
    else:
        # A constant with label noise 1/2: a fixed, uniformly random function.
        f = targets.with_label_noise(targets.random_tree(args.n, 1, args.target_seed),
                                     0.5, args.target_seed)
        description = "random function (label noise 1/2)"
    if args.noise:
        f = targets.with_label_noise(f, args.noise, args.target_seed + 1)
        description += f", label noise {args.noise:g}"
    print(f"target: {description}, n={args.n}")
    return f


def _run_test(args: argparse.Namespace) -> int:
    f = _make_target(args)
    plan = plan_tolerant_test(f.n, args.s, args.eps, args.delta, preset=args.preset,
                              threshold_factor=args.threshold_factor)
    print(plan.describe())
    max_queries = None if args.max_queries == 0 else args.max_queries
    result = tolerant_test(f, args.s, args.eps, args.delta, args.seed, preset=args.preset,
                           threshold_factor=args.threshold_factor, max_queries=max_queries)
    print(result)
    return 0


def add_test_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``lca test`` on an ``argparse`` subparsers object; returns the parser.

    ``lca test --target tree --n 20 --s 4 --eps 0.1 --seed 1`` prints the plan
    and a one-line verdict. Exit status 0 whether it accepts or rejects.
    """
    test = subparsers.add_parser(
        "test", help="tolerant test: is f close to a size-s decision tree?",
        description="Tolerant tester of Corollary 'Tolerant testing': compare f with "
                    "the reconstructed tree on m uniform points.")
    test.add_argument("--target", choices=_TARGETS, default="tree",
                      help="the function f (default: tree)")
    test.add_argument("--n", type=int_in(1, N_HIGH), default=20,
                      help="variables (default 20)")
    test.add_argument("--s", type=int_in(1), default=8,
                      help="size s to test for (default 8)")
    test.add_argument("--eps", type=real_in(0.0, 1.0, open_low=True), default=0.1,
                      help="distance eps (default 0.1)")
    test.add_argument("--delta", type=real_in(0.0, 1.0, open_low=True, open_high=True),
                      default=0.05, help="failure probability (default 0.05)")
    test.add_argument("--seed", type=int_in(0, SEED_HIGH), default=1,
                      help="tester seed (default 1)")
    # The label noise is seeded with target-seed + 1.
    test.add_argument("--target-seed", type=int_in(0, SEED_HIGH - 1), default=1,
                      help="seed of the target")
    test.add_argument("--leaves", type=int_in(1), default=None,
                      help="leaves of the tree target (default: s)")
    test.add_argument("--k", type=int_in(0), default=None,
                      help="variables of parity/majority (default: all n, odd for majority)")
    test.add_argument("--noise", type=real_in(0.0, 0.5), default=0.0,
                      help="label noise rate of f")
    test.add_argument("--preset", choices=("practical", "theory"), default="practical")
    test.add_argument("--threshold-factor", type=real_in(0.0, math.inf, open_low=True,
                                                         open_high=True),
                      default=THRESHOLD_FACTOR,
                      help=f"kappa: reject above kappa*eps (default {THRESHOLD_FACTOR:g})")
    test.add_argument("--max-queries", type=int_in(0), default=DEFAULT_MAX_QUERIES,
                      help="refuse plans needing more queries (0: no limit)")
    test.set_defaults(run=_run_test)
    return test

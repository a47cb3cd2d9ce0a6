"""The ``lca`` command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Sequence

import numpy as np

from lca import derive
from lca._cli_options import (
    PAPER_LEAF_SAMPLES,
    PAPER_SCORE_SAMPLES,
    add_noisy_tree_options,
    int_in,
    noisy_tree_setup,
)
from lca._cli_parallel import add_consistency_command
from lca.models.cli import add_distill_command
from lca.reconstruct import LowMarginWarning, Reconstructor, progress_bar
from lca.serve.cli import add_serve_command
from lca.suite.cli import add_bench_command
from lca.tester import add_test_command

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    target, f, params = noisy_tree_setup(args)
    print(f"lca demo: f is a random tree of {target.size} leaves (depth {target.depth}) over "
          f"n={args.n} variables, its labels flipped at rate {args.noise}; lca answers "
          f"{args.queries} uniform queries z with T_{args.seed}(z), one fixed tree built only "
          "along the paths asked")
    rec = Reconstructor(f, params)
    # Queries are derived chunk by chunk (rows lo..hi of
    # derive.sample_points(seed, "demo-queries", n, queries)), so memory stays
    # bounded however many are asked for; only the error counts are kept.
    key = derive.node_key(args.seed, "demo-queries", ())

    def queries(lo: int, hi: int) -> np.ndarray:
        return derive.unpack_points(derive.uniform_points(key, args.n, lo, hi), args.n)

    wrong_f = wrong_clean = 0
    # The demo prints the guessed-label count itself, below, so the warning
    # would only repeat it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowMarginWarning)
        start = time.perf_counter()
        first_point = queries(0, 1)
        first = rec.explain(first_point[0], args.seed)
        first_time = time.perf_counter() - start
        wrong_f += int(first.label != f(first_point)[0])
        wrong_clean += int(first.label != target(first_point)[0])
        chunk = 50
        bar = progress_bar(not args.quiet, args.queries, "answering", "answers")
        bar.update(1)
        for lo in range(1, args.queries, chunk):
            hi = min(lo + chunk, args.queries)
            points = queries(lo, hi)
            answers = rec.answer_many(points, args.seed)
            wrong_f += int(np.count_nonzero(answers != f(points)))
            wrong_clean += int(np.count_nonzero(answers != target(points)))
            bar.update(hi - lo)
        bar.close()
    total_time = time.perf_counter() - start
    stats = rec.stats
    built = stats.nodes_built
    print(f"""
results
  error vs f            {wrong_f / args.queries:.4f}  (f's own label noise is about {args.noise})
  error vs clean tree   {wrong_clean / args.queries:.4f}  (the tree before its labels were flipped)
  queries per answer    {stats.queries / args.queries:.1f} amortised; {first.stats.queries} for \
the first answer (nothing cached yet)
  time per answer       {total_time / args.queries * 1e3:.2f} ms amortised; \
{first_time * 1e3:.1f} ms for the first
  first query           {first}

how the tree was built (diagnostics; the errors above measure their effect)
  built                 {built} nodes and {stats.leaves_built} leaves, reused \
{stats.cache_hits} times from cache; {stats.early_leaves} leaves early ({stats.certified_leaves} \
certified constant)
  not told apart        {stats.low_margin} of {built} nodes: the lead over the runner-up \
failed its sign test (harmless where both split alike)
  no better than random {stats.guesswork} of {built} nodes: their variable splits f no better \
than a random one (typical where f is constant but for noise)
  guessed labels        {stats.guesswork_answers} of {args.queries} answers end at a leaf \
whose label is close to a coin flip

parameters ({"lca demo --help" if args.mode == "efficient" else "lca demo --mode paper --help"} \
lists the options)""")
    print("  " + params.describe().replace("\n", "\n  "))
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lca", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="reconstruct a noisy random tree and answer queries")
    add_noisy_tree_options(demo, n=1000, leaves=64, depth=12, score_samples=PAPER_SCORE_SAMPLES,
                           leaf_samples=PAPER_LEAF_SAMPLES)
    demo.add_argument("--queries", type=int_in(1, (1 << 63) - 1), default=1000,
                      help="uniform queries to answer")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(run=_demo)
    add_consistency_command(sub)
    add_test_command(sub)
    add_bench_command(sub)
    add_distill_command(sub)
    add_serve_command(sub)
    for command in sub.choices.values():
        command.set_defaults(options=[option for action in command._actions
                                      for option in action.option_strings
                                      if option.startswith("--") and option != "--help"])
    return parser


def _blame(message: str, options: list[str]) -> str:
    """Prefix a library error with the options it names, argparse style, if any.

    Library messages name parameters (``'noise_rate'``); the option spells
    the same name with dashes (``--noise-rate``).
    """
    if message.startswith("argument "):
        return message
    named = [option for option in options
             if f"'{option[2:].replace('-', '_')}'" in message]
    return f"argument {'/'.join(named)}: {message}" if named else message


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lca`` command."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    from_json = getattr(args, "from_json", None)
    if args.command == "bench" and from_json is not None:
        # Checked before the run: lca.suite opens it only after choosing a config.
        try:
            with open(from_json, encoding="utf-8"):
                pass
        except OSError as error:
            parser.error(f"argument --from-json: cannot read {from_json!r}: "
                         f"{error.strerror or error}")
    json_out = getattr(args, "json", None)
    if args.command == "bench" and json_out is not None:
        # Written after the run: a bad path must not cost a whole benchmark.
        folder = os.path.dirname(os.path.abspath(json_out))
        if os.path.isdir(json_out) or not os.path.isdir(folder):
            parser.error(f"argument --json: cannot write {json_out!r}: "
                         + ("it is a directory" if os.path.isdir(json_out)
                            else f"no directory {folder!r}"))
    try:
        return args.run(args)
    except (TypeError, ValueError) as error:
        print(f"lca {args.command}: error: {_blame(str(error), args.options)}",
              file=sys.stderr)
        return 2
    except MemoryError as error:  # a size the machine represents but cannot hold
        print(f"lca {args.command}: error: not enough memory for what the options ask "
              f"({error or 'MemoryError'}); ask for less", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

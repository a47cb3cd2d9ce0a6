"""The ``lca bench`` command: argparse wiring, writing the report, plots and JSON."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lca.suite.cases import SuiteConfig, full_config, quick_config
from lca.suite.compare import DEFAULT_COMPARE
from lca.suite.modes import ALIASES, DEFAULT_MODE, MODES, mode_text, parse_modes, resolve_modes
from lca.suite.plots import make_plots
from lca.suite.report import headline_bullets, render_markdown
from lca.suite.run import SuiteResult, run_suite
from lca.suite.trained import BENCH_EXTRA


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``lca bench`` options to ``parser`` and set ``run``."""
    parser.add_argument("--quick", action="store_true",
                        help="seconds-long smoke run (CI); without --out it prints the "
                             "report and writes no files")
    parser.add_argument("--mode", default=DEFAULT_MODE, metavar="MODES",
                        help="comma-separated reconstruction modes to measure side by side, "
                             f"of {', '.join(MODES)} ('both' = fixed,adaptive; default "
                             f"{DEFAULT_MODE}, the recommended preset; 'fixed' is the "
                             "paper's estimator)")
    parser.add_argument("--compare", default=",".join(DEFAULT_COMPARE),
                        metavar="CANDIDATE,BASELINE",
                        help="modes of the report's mode comparison, when both ran "
                             "(default %(default)s)")
    parser.add_argument("--out", default=None,
                        help="markdown report (default docs/benchmarks_suite.md; "
                             "--quick: stdout)")
    parser.add_argument("--img", default=None,
                        help="directory for the PNG plots (default docs/img; --quick: none)")
    parser.add_argument("--json", default=None, help="also write the raw results as JSON")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default min(2, CPUs))")
    parser.add_argument("--cases", default=None, metavar="TEXT",
                        help="only the cases whose name contains TEXT, e.g. 'n=1000' "
                             "('scaling' for the scaling points)")
    parser.add_argument("--tiers", default=None, metavar="NAMES",
                        help="only the cases of these comma-separated tiers, e.g. "
                             "'n=100,eta=0.2,models' (the tiers of the efficient-vs-paper "
                             "comparison; add 'scaling' for the scaling points)")
    parser.add_argument("--from-json", default=None, metavar="PATH",
                        help="do not run: rewrite the report and plots from a --json file")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run_bench_command)
    return parser


def add_bench_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``lca bench`` on the ``add_subparsers()`` object of the ``lca`` parser."""
    parser = subparsers.add_parser(
        "bench", help="benchmark suite against scikit-learn (needs lca[bench])",
        description="Benchmark lca against scikit-learn's DecisionTreeClassifier and "
                    "write docs/benchmarks_suite.md with plots (needs "
                    f"{BENCH_EXTRA}).")
    return configure_parser(parser)


def _each_mode_once(mode: str) -> None:
    """Refuse a ``--mode`` naming a mode twice, itself or through an alias
    (``efficient,efficient``, ``fixed,both``): a typo, not a request to measure it once."""
    parse_modes(mode)  # an unknown name is named first
    named = [member for part in mode.split(",")
             for member in ALIASES.get(part.strip(), (part.strip(),))]
    twice = [name for name in MODES if named.count(name) > 1]
    if twice:
        raise ValueError(f"The 'mode' parameter of lca bench must name each mode once. Got "
                         f"{mode!r} instead (naming {', '.join(map(repr, twice))} more than once).")


def run_bench_command(args: argparse.Namespace, *, root: str | None = None) -> int:
    """Handler of ``lca bench``: run, write the report, plots and JSON; 0 on success."""
    compare = _checked_compare(args)
    config = quick_config() if args.quick else full_config()
    out, img = _outputs(args, root)
    if args.from_json:
        result = _saved_result(args.from_json, config, compare)
    else:
        try:
            result = _measured_result(args, config, compare)
        except ImportError as error:
            print(f"lca bench: error: {error}", file=sys.stderr)
            return 2
    # Raw results and the report first: a plotting failure must not lose a long run.
    if args.json and not args.from_json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(result.to_json())
    text = render_markdown(result, img_rel=_img_rel(img, out),
                           command=_reproducing_command(args, result))
    _write_report(result, text, out)
    if img is not None:
        try:
            paths = make_plots(result, img)
        except ImportError as error:
            print(f"lca bench: error: {error}", file=sys.stderr)
            return 2
        print(f"lca bench: wrote {', '.join(paths)}", file=sys.stderr)
    for failure in result.failures:
        print(f"lca bench: {failure['task']} failed:\n{failure['error']}", file=sys.stderr)
    return 1 if result.failures else 0


def _checked_compare(args: argparse.Namespace) -> tuple[str, str]:
    """Check ``--jobs``, ``--mode`` and ``--compare``; the (candidate, baseline) compared."""
    if args.jobs < 1:
        raise ValueError(f"The '--jobs' parameter of lca bench must be an int >= 1. "
                         f"Got {args.jobs} instead.")
    _each_mode_once(args.mode)
    compare = parse_modes(args.compare, "compare")
    if len(compare) != 2:
        raise ValueError(f"The '--compare' parameter of lca bench must name two different "
                         f"modes, CANDIDATE,BASELINE. Got {args.compare!r} instead.")
    return compare[0], compare[1]


def _outputs(args: argparse.Namespace, root: str | None) -> tuple[str | None, str | None]:
    """The report's path (``None``: stdout) and the plots' directory (``None``: no plots)."""
    base = root or os.curdir
    out = args.out if args.out is not None or args.quick else \
        os.path.join(base, "docs", "benchmarks_suite.md")
    img = args.img if args.img is not None or args.quick else os.path.join(base, "docs", "img")
    return out, img


def _saved_result(path: str, config: SuiteConfig, compare: tuple[str, str]) -> SuiteResult:
    """The results saved at ``path`` (``--from-json``), which must be of ``config``'s grid."""
    with open(path, encoding="utf-8") as handle:
        result = SuiteResult.from_json(handle.read())
    result.compare = compare
    if result.config.name != config.name:
        raise ValueError(f"lca bench --from-json: {path} holds a "
                         f"{result.config.name!r} run; pass --quick to match"
                         if result.config.name == "quick" else
                         f"lca bench --from-json: {path} holds a "
                         f"{result.config.name!r} run; drop --quick")
    return result


def _measured_result(args: argparse.Namespace, config: SuiteConfig,
                     compare: tuple[str, str]) -> SuiteResult:
    """Run the suite of ``config`` with the modes and filters of ``args``."""
    factories, note = resolve_modes(args.mode, config)
    if note:
        print(f"lca bench: {note}", file=sys.stderr)
    return run_suite(config, factories, note=note, jobs=args.jobs,
                     progress=not args.quiet, only=args.cases, compare=compare,
                     tiers=None if args.tiers is None else
                     [tier.strip() for tier in args.tiers.split(",")])


def _img_rel(img: str | None, out: str | None) -> str | None:
    """The plots' directory relative to the report's, as the report links them."""
    if img is None:
        return None
    start = os.path.dirname(os.path.abspath(out)) if out else os.curdir
    return os.path.relpath(img, start).replace(os.sep, "/")


def _reproducing_command(args: argparse.Namespace, result: SuiteResult) -> str:
    """The command that reproduces ``result``, as the report names it."""
    mode = mode_text(result.modes)
    command = "python scripts/bench_suite.py" + (" --quick" if args.quick else "") + \
        ("" if mode == DEFAULT_MODE else f" --mode {mode}")
    # The filters a run got are part of how to reproduce it (saved with the results).
    if "tiers" in result.selection:
        command += f" --tiers {','.join(result.selection['tiers'])}"
    if "only" in result.selection:
        command += f" --cases '{result.selection['only']}'"
    if result.compare != DEFAULT_COMPARE and result.comparison is not None:
        command += f" --compare {','.join(result.compare)}"
    # Where this page and its plots went: without them a rerun overwrites the default page.
    if args.out is not None:
        command += f" --out {args.out}"
    if args.img is not None:
        command += f" --img {args.img}"
    return command


def _write_report(result: SuiteResult, text: str, out: str | None) -> None:
    """Print the report, or write it to ``out`` and print the headline."""
    if out is None:
        print(text)
        return
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"lca bench: wrote {out}", file=sys.stderr)
    print("\n".join(headline_bullets(result)))

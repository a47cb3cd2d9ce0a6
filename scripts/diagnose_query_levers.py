"""What the simple levers on the efficient mode's queries buy, and what they cost in error.

Reruns the efficient mode (``Params.efficient`` defaults, the suite's depth
caps, seeds and evaluation points, measured as the suite measures a mode) on
every case of the suite under the current rules and under each *lever*: a
rule changed in this process only, by replacing a name in
:mod:`lca.search.rules` or :mod:`lca.search.group` (the library is not
changed; nothing here is a mode):

* ``one vote candidate``: ``SEARCH_CANDIDATES = 1``, so a node flips at
  most two candidates (the vote leader and the correlation leader) instead
  of three; the lead test's union bound shrinks with it.
* ``weaker lead test``: the influence lead is accepted as soon as it
  passes a 5% sign test (``ln 20`` in place of ``ln(R (K + 1) K / delta)``),
  so nodes stop rounds (and skip their probes) earlier.
* ``close second candidate only``: the second vote candidate is flipped
  only when it has at least half the vote leader's votes.
* ``one quiet round``, ``rounds of 16``, ``rounds of 32``: parameters
  rather than rules, ``Params.efficient(..., first_round=64)`` (the
  preset's default), ``16`` (its default before) or ``32``: the cap's 64
  pairs in one round or in doubling rounds (each round is a call for its
  pairs, the binary-search steps and a call for its flips, and a candidate
  new to a round is flipped from pair 0).

It also counts the labelled points each node inherits from its ancestors
(inside its subcube), which today serve only the correlation sums. Prints
markdown: per group of cases the median ratio of queries for all the
suite's answers to the current rules', the cases whose error rises above
the current rules' 95% interval, and the η = 0.2 cases more than 0.03 above
the peer's best (read from ``docs/benchmarks_suite_efficient.json``)::

    flock /tmp/lca-bench.lock python scripts/diagnose_query_levers.py   # about 25 min
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import lca
import lca.search.group as group
import lca.search.rules as rules
from lca import derive
from lca.suite.cases import MODEL_SPECS, full_config
from lca.suite.measure import EXACT_MAX_N, all_points, case_oracles, measure_ours
from lca.suite.trained import model_oracle

JSON = Path(__file__).resolve().parent.parent / "docs" / "benchmarks_suite_efficient.json"
GROUPS = ("trained models", "noise-free", "label noise 0.01-0.1", "label noise 0.2")


@contextlib.contextmanager
def patched(module: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def close_second_only(votes: np.ndarray, correlations: np.ndarray,
                      free: np.ndarray) -> list[list[int]]:
    """:func:`lca.search.rules.candidates` for a group of nodes (2-D arrays, as the group
    asks), without a second vote leader under half the first's votes."""
    masked = np.where(free, votes, -1)
    leaders = np.argsort(-masked, axis=1, kind="stable")[:, :rules.SEARCH_CANDIDATES]
    counts = np.take_along_axis(masked, leaders, axis=1)
    correlation_leaders = np.where(free, np.abs(correlations), -1).argmax(axis=1)
    chosen = []
    for row, leader, count in zip(correlation_leaders.tolist(), leaders.tolist(),
                                  counts.tolist(), strict=True):
        members = [v for i, (v, c) in enumerate(zip(leader, count, strict=True))
                   if c > 0 and (i == 0 or 2 * c >= count[0])]
        chosen.append(members if row in members else members + [row])
    return chosen


def _weaker(lead_test: Callable[[int, int, float], bool]) -> Callable[[int, int, float], bool]:
    level = math.log(20)
    return lambda margin, trials, log_term: lead_test(margin, trials, min(log_term, level))


LEVERS: dict[str, Callable[[], contextlib.AbstractContextManager[None]]] = {
    "current rules": contextlib.nullcontext,
    "one vote candidate": lambda: patched(rules, "SEARCH_CANDIDATES", 1),
    "weaker lead test": lambda: patched(group, "lead_is_certified",
                                        _weaker(group.lead_is_certified)),
    "close second candidate only": lambda: patched(group, "candidates", close_second_only),
    "one quiet round": contextlib.nullcontext,
    "rounds of 16": contextlib.nullcontext,
    "rounds of 32": contextlib.nullcontext,
    "48 pairs": contextlib.nullcontext,
}
"""Each lever's change of the rules, in this process only."""

PARAMETERS: dict[str, dict[str, int]] = {"one quiet round": {"first_round": 64},
                                         "rounds of 16": {"first_round": 16},
                                         "rounds of 32": {"first_round": 32},
                                         "48 pairs": {"pairs": 48}}
"""Levers that are ``Params.efficient`` arguments (the rules unchanged): the cap's 64
pairs in one quiet round (``first_round = 64``, the preset's default), in rounds of
16, 32 and 64, or in rounds of 32 and 64."""


def group_of(case: Any, trained: bool) -> str:
    if trained:
        return GROUPS[0]
    if case.noise == 0:
        return GROUPS[1]
    return GROUPS[3] if case.noise == 0.2 else GROUPS[2]


def run_suite(peers: dict[str, float | None],
              arguments: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Per case: its group, error with its 95% interval, queries of all answers."""
    config = full_config()
    out = {}
    for case in config.cases:
        clean, f, info = case_oracles(case, config)
        points = derive.sample_points(config.eval_seed, "bench/eval", case.n,
                                      config.eval_points)
        params = lca.Params.efficient(case.n, depth=config.depth_for(case.n), **arguments)
        ours = measure_ours(f, clean, params, points, f(points), clean(points), config,
                            all_points(case.n) if case.n <= EXACT_MAX_N else None)
        out[case.name] = {"group": group_of(case, info is not None),
                          "error": ours["err_f"]["value"], "high": ours["err_f"]["high"],
                          "queries": ours["cumulative"][-1]["queries"],
                          "peer": peers.get(case.name)}
        print(f"  {case.name}: error {out[case.name]['error']:.4f}, "
              f"queries {out[case.name]['queries']:,}", flush=True)
    return out


def inherited_points(points: int) -> list[str]:
    """Median inherited points per node, by depth, on two trained models."""
    seen: list[tuple[int, int]] = []
    inner = group.NodeGroup.__init__

    def counting(self: Any, n: int, seed: int, paths: list[Any], params: Any,
                 counts: np.ndarray, sums: np.ndarray) -> None:
        seen.extend(zip([len(p) for p in paths], counts.tolist(), strict=True))
        inner(self, n, seed, paths, params, counts, sums)

    lines = ["| trained model | nodes built | median inherited points | at depth 2 | 4 | 6 | "
             "8 | 10 |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    with patched(group.NodeGroup, "__init__", counting):
        for key in ("logreg-digits", "rf-breast_cancer"):
            seen.clear()
            f, _ = model_oracle(MODEL_SPECS[key], full_config().target_seed)
            rec = lca.Reconstructor(f, lca.Params.efficient(f.n, depth=12))
            for z in derive.sample_points(5, "bench/eval", f.n, points):
                rec.answer(z, 7)
            depth, count = np.array(seen).T
            cells = [f"{np.median(count[depth == d]):.0f}" for d in (2, 4, 6, 8, 10)]
            lines.append(f"| {key} | {len(seen)} | {np.median(count):.0f} | "
                         + " | ".join(cells) + " |")
    return lines


def table(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    base = runs["current rules"]
    lines = ["| lever | " + " | ".join(f"queries, {g} (median ×)" for g in GROUPS)
             + " | error above the current rules' 95% interval | η = 0.2 over the peer's "
             "best + 0.03 |", "|---|" + "---:|" * len(GROUPS) + "---|---|"]
    for name, run in runs.items():
        ratios = {g: [run[c]["queries"] / base[c]["queries"] for c in run
                      if run[c]["group"] == g] for g in GROUPS}
        worse = [f"{c} ({run[c]['error']:.4f} > {base[c]['high']:.4f})" for c in run
                 if run[c]["error"] > base[c]["high"]]
        over = [f"{c} (+{run[c]['error'] - run[c]['peer']:.3f})" for c in run
                if run[c]["group"] == GROUPS[3] and run[c]["peer"] is not None
                and run[c]["error"] - run[c]["peer"] > 0.03]
        cells = [f"{statistics.median(r):.2f}" if r else "–" for r in ratios.values()]
        lines.append(f"| {name} | " + " | ".join(cells)
                     + f" | {len(worse)}{': ' + ', '.join(worse) if worse else ''} | "
                     + (", ".join(over) or "none") + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levers", default=",".join(LEVERS),
                        help="comma-separated levers to run (the current rules always run)")
    args = parser.parse_args(argv)
    chosen = ["current rules"] + [name for name in args.levers.split(",")
                                  if name and name != "current rules"]
    unknown = [name for name in chosen if name not in LEVERS]
    if unknown:
        parser.error(f"unknown levers {unknown}; choose from {list(LEVERS)}")
    stored = json.loads(JSON.read_text())["cases"]
    peers = {c["case"]: min((r["err_f"]["value"] for r in c["peer"]["rows"]), default=None)
             for c in stored}
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        for name in chosen:
            print(f"{name}:", flush=True)
            with LEVERS[name]():
                runs[name] = run_suite(peers, PARAMETERS.get(name, {}))
        inherited = inherited_points(100)
    print("\n" + "\n".join(table(runs)))
    print("\n" + "\n".join(inherited))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

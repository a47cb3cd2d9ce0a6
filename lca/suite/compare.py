"""Comparing two reconstruction modes on the cases both ran, against fixed targets.

:func:`compare_modes` is a pure function of the suite's per-case results (the
dicts of :func:`lca.suite.measure.run_case`), so the same numbers come back
from a saved ``--json`` file. Ratios are arranged so that > 1 favours the
candidate for queries and crossover, and < 1 favours it for wall time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lca.suite.stats import median_or_nan
from lca.suite.text import crossover_text, error_text, number_text, table_lines

DEFAULT_COMPARE = ("efficient", "fixed")
"""The default comparison: the efficient preset against the paper's fixed-q estimator."""

NOISY = 0.2
"""Label-noise rate of the cases held to the peer's best error (the high-noise tier)."""

PEER_GAP = 0.03
"""At ``NOISY``, the candidate's error may exceed the peer's best by at most this."""

TARGETS = {"first": 5.0, "all": 5.0, "no_worse": 0.9, "crossover": 10.0, "time": 1.0}
"""The candidate's targets: median ×-fewer queries (first answer, all answers), share
of cases no worse, ratio of median crossover K, ratio of wall time per answer."""


def _no_worse(candidate: Mapping[str, Any], baseline: Mapping[str, Any]) -> bool:
    # The rule stated in the report: the candidate's point estimate of the error
    # against f is at most the upper end of the baseline's 95% Wilson interval.
    return candidate["err_f"]["value"] <= baseline["err_f"]["high"]


def _crossover_value(ours: Mapping[str, Any]) -> float | None:
    # "<=" is K <= 1, "~" an interpolation, ">" a lower bound; "?" carries no value.
    cross = ours["crossover"]
    return None if cross["relation"] == "?" else float(cross["value"])


def _ms_per_answer(ours: Mapping[str, Any]) -> float:
    last = ours["cumulative"][-1]
    return 1e3 * last["seconds"] / last["answers"]


def compare_case(case: Mapping[str, Any], candidate: str, baseline: str) -> dict[str, Any]:
    """One case's comparison of mode ``candidate`` with mode ``baseline``."""
    new, old = case["ours"][candidate], case["ours"][baseline]
    new_all, old_all = new["cumulative"][-1], old["cumulative"][-1]
    assert new_all["answers"] == old_all["answers"], "modes answered different K"
    peer_best = min((row["err_f"]["value"] for row in case["peer"]["rows"]), default=None)
    gap = None
    if case["noise"] == NOISY and peer_best is not None:
        gap = new["err_f"]["value"] - peer_best
    return {
        "case": case["case"], "key": case["key"], "n": case["n"], "noise": case["noise"],
        "first_queries": [new["first_queries"], old["first_queries"]],
        "first_ratio": old["first_queries"] / new["first_queries"],
        "answers": new_all["answers"],
        "all_queries": [new_all["queries"], old_all["queries"]],
        "all_ratio": old_all["queries"] / new_all["queries"],
        "err_f": [new["err_f"], old["err_f"]],
        "no_worse": _no_worse(new, old),
        "peer_best": peer_best,
        "peer_gap": gap,
        "gap_flag": gap is not None and gap > PEER_GAP,
        "crossover": [new["crossover"], old["crossover"]],
        "ms_per_answer": [_ms_per_answer(new), _ms_per_answer(old)],
        "time_ratio": _ms_per_answer(new) / _ms_per_answer(old),
        # Results saved by earlier versions of the suite carry no margin count.
        "low_margin": [ours.get("low_margin", 0) for ours in (new, old)],
        "nodes_built": [new["nodes_built"], old["nodes_built"]],
    }


def compare_modes(cases: Sequence[Mapping[str, Any]], candidate: str,
                  baseline: str) -> dict[str, Any] | None:
    """The comparison of ``candidate`` with ``baseline`` over the cases both ran.

    Returns ``None`` if no case ran both modes. Otherwise a dict with ``rows``
    (one :func:`compare_case` per case) and the summary: ``first_ratio`` and
    ``all_ratio`` (medians over cases of baseline queries / candidate queries,
    first answer and all answers), ``no_worse`` (cases whose candidate error vs
    f is at most the upper end of the baseline's 95% Wilson interval) of
    ``cases``, ``noisy`` / ``flagged`` (cases at η = :data:`NOISY` / those whose
    candidate error exceeds the peer's best by more than :data:`PEER_GAP`),
    ``crossover`` (median crossover K of each mode over the cases where it has a
    value, and ``crossover_ratio`` = candidate / baseline) and ``time_ratio``
    (median of candidate / baseline milliseconds per answer at the largest K).
    """
    both = [case for case in cases if {candidate, baseline} <= set(case["ours"])]
    if not both:
        return None
    rows = [compare_case(case, candidate, baseline) for case in both]
    medians = [_median_crossover(both, mode) for mode in (candidate, baseline)]
    first, second = medians
    ratio = first / second if first is not None and second is not None else None
    noisy = [row for row in rows if row["peer_gap"] is not None]
    return {
        "candidate": candidate, "baseline": baseline, "cases": len(rows),
        "first_ratio": median_or_nan([row["first_ratio"] for row in rows]),
        "all_ratio": median_or_nan([row["all_ratio"] for row in rows]),
        "no_worse": sum(row["no_worse"] for row in rows),
        "noisy": len(noisy),
        "flagged": [row["case"] for row in noisy if row["gap_flag"]],
        "max_peer_gap": max((row["peer_gap"] for row in noisy), default=None),
        "crossover": medians,
        "crossover_ratio": ratio,
        "time_ratio": median_or_nan([row["time_ratio"] for row in rows]),
        "rows": rows,
    }


def _median_crossover(cases: Sequence[Mapping[str, Any]], mode: str) -> float | None:
    """The median crossover K of ``mode`` over the cases where it has one (``None``: none)."""
    values = [_crossover_value(case["ours"][mode]) for case in cases]
    known = [value for value in values if value is not None]
    return median_or_nan(known) if known else None


COMPARISON_COLUMNS = ("case", "n", "η", "queries, first answer (cand / base)", "× fewer",
                      "queries, all K answers (cand / base)", "× fewer",
                      "error vs f, candidate [95% CI]", "error vs f, baseline [95% CI]",
                      "no worse", "η = 0.2: cand − peer best", "crossover K (cand / base)",
                      "ms/answer (cand / base)", "low-margin / nodes built (cand / base)")


def _short_crossover(cross: Mapping[str, Any]) -> str:
    return crossover_text(cross).split(" (")[0]


def _times(value: float | None) -> str:
    return "—" if value is None else f"{value:,.2f}×"


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _signed(value: float) -> str:
    return f"{value:+.4f}"


def _comparison_rows(comparison: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for row in comparison["rows"]:
        gap = "—" if row["peer_gap"] is None else (
            _signed(row["peer_gap"]) + (" (> 0.03)" if row["gap_flag"] else ""))
        new_ms, old_ms = row["ms_per_answer"]
        rows.append([
            row["key"], str(row["n"]), f"{row['noise']:g}",
            " / ".join(number_text(q) for q in row["first_queries"]), _times(row["first_ratio"]),
            " / ".join(number_text(q) for q in row["all_queries"]), _times(row["all_ratio"]),
            error_text(row["err_f"][0]), error_text(row["err_f"][1]),
            "yes" if row["no_worse"] else "no",
            gap, " / ".join(_short_crossover(cross) for cross in row["crossover"]),
            f"{new_ms:.3g} / {old_ms:.3g}",
            " / ".join(f"{number_text(low)}/{number_text(built)}"
                       for low, built in zip(row["low_margin"], row["nodes_built"], strict=True))])
    return rows


def comparison_headline(comparison: Mapping[str, Any]) -> str:
    """One headline bullet summarising :func:`compare_modes`."""
    c = comparison
    share = c["no_worse"] / c["cases"]
    cases = f"{c['cases']} case" + ("" if c["cases"] == 1 else "s")
    text = (f"* **{c['candidate']} vs {c['baseline']}** ({cases}): "
            f"median {c['first_ratio']:,.2f}× fewer queries for the first answer and "
            f"{c['all_ratio']:,.2f}× fewer to answer all {number_text(c['rows'][0]['answers'])} "
            f"points; error no worse in {c['no_worse']} of {c['cases']} ({share:.0%})")
    if c["noisy"]:
        text += (f"; at η = {NOISY:g} {len(c['flagged'])} of {c['noisy']} cases more "
                 f"than {PEER_GAP:g} above the peer's best error")
    if c["crossover_ratio"] is not None:
        text += f"; median crossover K {c['crossover_ratio']:,.2f}× the baseline's"
    return text + f"; wall time per answer {c['time_ratio']:,.2f}× the baseline's."


def render_comparison(comparison: Mapping[str, Any]) -> list[str]:
    """The report's section for :func:`compare_modes`: targets, then one row per case."""
    c = comparison
    new, old = c["candidate"], c["baseline"]
    answers = number_text(c["rows"][0]["answers"])
    cross_new, cross_old = (("—" if value is None else f"{value:,.1f}")
                            for value in c["crossover"])
    share = c["no_worse"] / c["cases"]
    gap = "—" if c["max_peer_gap"] is None else _signed(c["max_peer_gap"])
    flagged = ", ".join(c["flagged"]) or "none"
    targets = [
        ["median first-answer queries, baseline / candidate", _times(c["first_ratio"]),
         f"≥ {TARGETS['first']:g}×", _met(c["first_ratio"] >= TARGETS["first"])],
        [f"median queries to answer {answers} points, baseline / candidate",
         _times(c["all_ratio"]), f"≥ {TARGETS['all']:g}×",
         _met(c["all_ratio"] >= TARGETS["all"])],
        ["cases with error no worse (rule below)",
         f"{c['no_worse']} of {c['cases']} ({share:.0%})", f"≥ {TARGETS['no_worse']:.0%}",
         _met(share >= TARGETS["no_worse"])],
        [f"η = {NOISY:g}: candidate error − peer's best error (max; cases above "
         f"{PEER_GAP:g})", f"{gap} ({flagged})" if c["noisy"] else "no such case",
         f"≤ {PEER_GAP:g} on every case", _met(not c["flagged"]) if c["noisy"] else "—"],
        ["median crossover K, candidate / baseline (ratio)",
         f"{cross_new} / {cross_old} ({_times(c['crossover_ratio'])})",
         f"ratio ≥ {TARGETS['crossover']:g}×",
         "—" if c["crossover_ratio"] is None
         else _met(c["crossover_ratio"] >= TARGETS["crossover"])],
        ["median wall time per answer, candidate / baseline", _times(c["time_ratio"]),
         f"≤ {TARGETS['time']:g}×", _met(c["time_ratio"] <= TARGETS["time"])],
    ]
    return [
        f"## Mode comparison: {new} against {old}", "",
        f"The comparison's targets for candidate mode `{new}` against baseline mode `{old}`, over "
        f"the {c['cases']} cases where both ran (every case of this run that has both).", "",
        *table_lines(("measure", "value", "target", "met"), targets), "",
        "Rules, exactly:",
        "",
        "* × fewer: per case, the baseline's queries divided by the candidate's (first answer "
        f"cold; all {answers} evaluation points with the node cache); the median over cases.",
        "* No worse: the candidate's error against f (point estimate on the evaluation "
        "points) is at most the upper end of the baseline's 95% Wilson interval.",
        f"* η = {NOISY:g}: the candidate's error against f minus the smallest error the peer "
        f"reached on its N grid (run whole for these cases, not stopped once it matches our "
        f"error); flagged above {PEER_GAP:g}.",
        "* Crossover K: the median over cases of each mode's crossover K as recorded "
        "(≤ 1 counts as 1, a lower bound '> K' as K, unknown cases are left out), then "
        "candidate / baseline.",
        f"* Wall time: per case, milliseconds per answer over all {answers} answers (node "
        "cache on, one process) of the candidate divided by the baseline's; the median over "
        "cases. Wall times are the only non-deterministic numbers here.",
        "",
        *table_lines(COMPARISON_COLUMNS, _comparison_rows(c)),
    ]

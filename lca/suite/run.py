"""Running the suite: cases and scaling points across worker processes, raw results.

Each worker measures one case or scaling point at a time (:func:`_task`);
failures are collected in the result, not raised, so a long run still reports
everything that worked.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lca._validate import check_flag
from lca.reconstruct import progress_bar
from lca.suite.cases import Case, ModelSpec, SuiteConfig, full_config, quick_config
from lca.suite.compare import DEFAULT_COMPARE, compare_modes
from lca.suite.measure import peer_classifier, run_case, run_scaling_point
from lca.suite.modes import ParamsFactory


@dataclass
class SuiteResult:
    """Raw results of :func:`run_suite`, plain Python values (JSON-ready).

    ``compare`` names the (candidate, baseline) modes of :attr:`comparison`;
    ``selection`` holds the ``only`` and ``tiers`` filters :func:`run_suite` got.
    """

    config: SuiteConfig
    modes: tuple[str, ...]
    note: str
    cases: list[dict[str, Any]]
    scaling: list[dict[str, Any]]
    failures: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1
    environment: dict[str, str] = field(default_factory=dict)
    compare: tuple[str, str] = DEFAULT_COMPARE
    selection: dict[str, Any] = field(default_factory=dict)

    @property
    def comparison(self) -> dict[str, Any] | None:
        """:func:`~lca.suite.compare.compare_modes` of ``compare``; None unless both ran."""
        return compare_modes(self.cases, *self.compare)

    def to_json(self) -> str:
        """The results as JSON; the config is stored by name (``"full"`` or ``"quick"``)."""
        data = {"config": self.config.name, "modes": self.modes, "note": self.note,
                "cases": self.cases, "scaling": self.scaling, "failures": self.failures,
                "seconds": self.seconds, "jobs": self.jobs,
                "environment": self.environment, "compare": self.compare,
                "selection": self.selection, "comparison": self.comparison}
        return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> SuiteResult:
        """Inverse of :meth:`to_json` (the config is rebuilt from its name)."""
        data = json.loads(text)
        configs = {"full": full_config, "quick": quick_config}
        if data.get("config") not in configs:
            raise ValueError(f"SuiteResult.from_json: unknown config {data.get('config')!r}; "
                             "expected 'full' or 'quick'")
        return cls(config=configs[data["config"]](), modes=tuple(data["modes"]),
                   note=data["note"], cases=data["cases"], scaling=data["scaling"],
                   failures=data["failures"], seconds=data["seconds"], jobs=data["jobs"],
                   environment=data["environment"],
                   compare=tuple(data.get("compare", DEFAULT_COMPARE)),
                   selection=data.get("selection", {}))


def _task(kind: str, item: Any, config: SuiteConfig,
          factories: Mapping[str, ParamsFactory]) -> tuple[str, Any, dict[str, Any]]:
    try:
        if kind == "case":
            return kind, item, run_case(item, config, factories)
        return kind, item, run_scaling_point(item, config, factories)
    except Exception:  # reported in the document; the rest of the suite still runs
        return kind, item, {"error": traceback.format_exc()}


def _estimated_cost(kind: str, item: Any, config: SuiteConfig) -> float:
    # Rough seconds, only to start the longest tasks first.
    if kind == "scaling":
        return 13 * 1e-5 * item * config.scaling_repeats
    nodes = 2 ** (config.depth_for(item.n) + 1)
    ours = nodes * 2 * config.score_samples * item.n * 5e-9
    if isinstance(item.spec, ModelSpec):
        # Measured: the suite's models answer 2,000-point batches in 3-14 ms.
        ours += nodes * 2 * config.score_samples * 5e-6
    peer = min(config.peer_entry_cap, max(config.peer_sizes) * item.n) * 4e-7
    return ours + peer


def _environment() -> dict[str, str]:
    env = {"python": platform.python_version(), "numpy": np.__version__,
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
           "date": datetime.date.today().isoformat()}
    try:
        import sklearn
        env["scikit-learn"] = sklearn.__version__
    except ImportError:
        pass
    from lca import __version__
    env["lca"] = __version__
    return env


def run_suite(config: SuiteConfig, factories: Mapping[str, ParamsFactory], *,
              note: str = "", jobs: int = 1, progress: bool = True,
              only: str | None = None, tiers: Sequence[str] | None = None,
              compare: tuple[str, str] = DEFAULT_COMPARE) -> SuiteResult:
    """Run every case and scaling point of ``config`` with ``jobs`` worker processes.

    ``only`` keeps the cases whose name contains it (and skips scaling unless
    it contains ``"scaling"``); ``tiers`` keeps the cases of those tiers of
    ``config`` (and skips scaling unless it lists ``"scaling"``). Failures
    are collected, not raised. ``compare`` is the (candidate, baseline) pair
    of the result's mode comparison.
    """
    check_flag("run_suite", "progress", progress)
    peer_classifier()  # fail before any work if the bench extra is missing
    _check_tiers(config, tiers)
    cases, sizes = _selection(config, only, tiers)
    tasks = [("case", case) for case in cases] + [("scaling", n) for n in sizes]
    tasks.sort(key=lambda task: -_estimated_cost(task[0], task[1], config))
    start = time.perf_counter()
    results = _run_tasks(tasks, config, factories, jobs, progress)
    failures = []
    case_rows, scaling_rows = [], []
    for case in cases:
        value = results[("case", case)]
        if "error" in value:
            failures.append({"task": case.name, "error": value["error"]})
        else:
            case_rows.append(value)
    for n in sizes:
        value = results[("scaling", n)]
        if "error" in value:
            failures.append({"task": f"scaling n={n}", "error": value["error"]})
        else:
            scaling_rows.append(value)
    return SuiteResult(config=config, modes=tuple(factories), note=note, cases=case_rows,
                       scaling=scaling_rows, failures=failures,
                       seconds=time.perf_counter() - start, jobs=jobs,
                       environment=_environment(), compare=compare,
                       selection={key: value for key, value in
                                  (("only", only), ("tiers", tiers)) if value is not None})


def _check_tiers(config: SuiteConfig, tiers: Sequence[str] | None) -> None:
    """Refuse ``tiers`` naming a tier that ``config`` does not have (``"scaling"`` is one)."""
    if tiers is None:
        return
    known = [name for name, _ in config.tiers] + ["scaling"]
    unknown = [tier for tier in tiers if tier not in known]
    if unknown:
        raise ValueError(f"The 'tiers' parameter of lca bench must list tiers of the "
                         f"{config.name} grid ({', '.join(known)}). Got "
                         f"{', '.join(unknown)} instead.")


def _selection(config: SuiteConfig, only: str | None,
               tiers: Sequence[str] | None) -> tuple[list[Case], list[int]]:
    """The cases and scaling sizes that ``only`` and ``tiers`` keep; at least one, or an error."""
    cases = [case for case in config.cases if (only is None or only in case.name)
             and (tiers is None or case.tier in tiers)]
    sizes = (list(config.scaling_sizes) if (only is None or "scaling" in only)
             and (tiers is None or "scaling" in tiers) else [])
    if not cases and not sizes:
        # An empty report would pass for a run that found nothing worth showing.
        given = [(name, value) for name, value in (("cases", only), ("tiers", tiers))
                 if value is not None]
        raise ValueError(
            f"The {' and '.join(repr(name) for name, _ in given)} parameter"
            f"{'s' if len(given) > 1 else ''} of lca bench (run_suite's only=, tiers=) "
            f"must select a case or scaling point of the {config.name} grid. Got "
            f"{', '.join(f'{name}={value!r}' for name, value in given)} instead. Case names "
            f"look like {config.cases[0].name!r} (cases keeps those containing the text, "
            "and the scaling points if it contains 'scaling'); tiers are "
            f"{', '.join(name for name, _ in config.tiers)} and scaling.")
    return cases, sizes


def _run_tasks(tasks: list[tuple[str, Any]], config: SuiteConfig,
               factories: Mapping[str, ParamsFactory], jobs: int,
               progress: bool) -> dict[tuple[str, Any], dict[str, Any]]:
    """Each task's result (or its error), in this process or across ``jobs`` workers."""
    results: dict[tuple[str, Any], dict[str, Any]] = {}
    with closing(progress_bar(progress, len(tasks), f"lca bench ({config.name})",
                              "tasks")) as bar:
        if jobs <= 1:
            for kind, item in tasks:
                results[(kind, item)] = _task(kind, item, config, factories)[2]
                bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(_task, kind, item, config, factories)
                           for kind, item in tasks]
                for future in as_completed(futures):
                    kind, item, value = future.result()
                    results[(kind, item)] = value
                    bar.update(1)
    return results

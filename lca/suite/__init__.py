"""Benchmark suite: answering locally with lca against learning the whole tree.

The question users ask first is "when is this better than just learning a
tree?". This module answers it with numbers anyone can rerun: for
every case (a target from :mod:`lca.targets`, a number of variables ``n`` and
a label-noise rate ``eta``) it measures

* **ours**, for each reconstruction mode (a :data:`ParamsFactory`): error of
  ``T_seed`` against ``f`` and against the clean target on fresh uniform
  points with 95% Wilson intervals, ``opt`` (exact DP for small ``n``, else the
  label-noise bound ``eta``) and ``dist(T, f) / opt``, queries for the first
  answer against the information-theoretic floor (``log2 n`` queries per
  internal node on its path), cumulative queries and time to answer the first
  ``K`` points with the node cache, depth and nodes built;
* **the peer** a user would pick instead: scikit-learn's
  ``DecisionTreeClassifier`` trained on ``N`` uniform labelled queries of the
  same ``f`` (validation queries counted against ``N``), its error at each
  ``N``, the ``N`` it needs to reach our error, and the crossover ``K`` at which
  learning the whole tree costs fewer queries than answering ``K`` points;
* **scaling**: cold time and queries per answer as ``n`` grows, with the
  fitted log-log growth exponent.

:func:`run_suite` does the work, :func:`render_markdown` and
:func:`make_plots` turn a :class:`SuiteResult` into ``docs/benchmarks_suite.md``
and PNGs; ``lca bench`` (:func:`add_bench_command`) and
``scripts/bench_suite.py`` regenerate everything with one command.

Every random point (evaluation points, the peer's training queries) is derived
with :mod:`lca.derive` under a dedicated purpose (``"bench/eval"``,
``"bench/peer"``) and fixed seeds, never from global RNG, so the tables are a
deterministic function of the code except for the wall-time columns.
scikit-learn and matplotlib are imported lazily: ``pip install 'lca[bench]'``.

Modules, imports flowing one way: :mod:`~lca.suite.cases` (targets, cases,
configs) <- :mod:`~lca.suite.modes` (the registry of reconstruction modes) <-
:mod:`~lca.suite.stats` and :mod:`~lca.suite.text` (formatting) <-
:mod:`~lca.suite.measure` (ours, the peer, the optimum) and
:mod:`~lca.suite.compare` (one mode against another, against fixed targets) <-
:mod:`~lca.suite.run` (workers, :class:`SuiteResult`) <- :mod:`~lca.suite.report`
<- :mod:`~lca.suite.plots` <- :mod:`~lca.suite.cli`.
This module re-exports their public names.
"""

from __future__ import annotations

from lca.suite.cases import (
    MODEL_SPECS,
    SPECS,
    Case,
    ModelSpec,
    SuiteConfig,
    TargetSpec,
    full_config,
    quick_config,
)
from lca.suite.cli import add_bench_command, configure_parser, run_bench_command
from lca.suite.compare import COMPARISON_COLUMNS, compare_modes, render_comparison
from lca.suite.measure import (
    measure_ours,
    measure_peer,
    prefix_errors,
    prefix_predict,
    run_case,
    run_scaling_point,
)
from lca.suite.modes import (
    MODES,
    Mode,
    ParamsFactory,
    adaptive_available,
    adaptive_params,
    efficient_available,
    efficient_params,
    fixed_params,
    parse_modes,
    resolve_modes,
)
from lca.suite.plots import make_plots
from lca.suite.report import (
    ACCURACY_COLUMNS,
    COST_COLUMNS,
    CROSSOVER_COLUMNS,
    render_markdown,
)
from lca.suite.run import SuiteResult, run_suite
from lca.suite.stats import crossover, growth_exponent, wilson_interval
from lca.suite.trained import model_oracle

__all__ = [
    "ParamsFactory",
    "TargetSpec",
    "Case",
    "SuiteConfig",
    "SuiteResult",
    "SPECS",
    "ModelSpec",
    "MODEL_SPECS",
    "model_oracle",
    "full_config",
    "quick_config",
    "Mode",
    "MODES",
    "fixed_params",
    "adaptive_params",
    "adaptive_available",
    "efficient_params",
    "efficient_available",
    "parse_modes",
    "resolve_modes",
    "wilson_interval",
    "crossover",
    "prefix_errors",
    "prefix_predict",
    "measure_ours",
    "measure_peer",
    "growth_exponent",
    "run_case",
    "run_scaling_point",
    "run_suite",
    "render_markdown",
    "make_plots",
    "ACCURACY_COLUMNS",
    "COST_COLUMNS",
    "CROSSOVER_COLUMNS",
    "COMPARISON_COLUMNS",
    "compare_modes",
    "render_comparison",
    "add_bench_command",
    "configure_parser",
    "run_bench_command",
]

"""Measurements of one case: ours (per mode), the peer, the optimum, scaling points.

Every random point (evaluation points, the peer's training queries) is derived
with :mod:`lca.derive` under a dedicated purpose (``"bench/eval"``,
``"bench/peer"``) and fixed seeds, so each measurement is a deterministic
function of its inputs except for the wall-time fields.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import statistics
import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from lca import derive, exact, targets
from lca.decisions import LeafDecision, split_rows
from lca.oracle import Oracle
from lca.params import Params
from lca.reconstruct import Reconstructor
from lca.suite.cases import SPECS, Case, ModelSpec, SuiteConfig
from lca.suite.modes import ParamsFactory
from lca.suite.stats import crossover, error_rate
from lca.suite.trained import BENCH_EXTRA, model_oracle

EXACT_MAX_N = exact.MAX_OPTIMUM_VARIABLES


def peer_classifier() -> Any:
    """scikit-learn's DecisionTreeClassifier, or an ImportError naming the extra."""
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError as error:
        raise ImportError(
            f"lca's benchmark suite needs scikit-learn for the peer: {BENCH_EXTRA}"
        ) from error
    return DecisionTreeClassifier


def _points(seed: int, purpose: str, n: int, count: int) -> np.ndarray:
    return derive.sample_points(seed, purpose, n, count)


def all_points(n: int) -> np.ndarray:
    """Every point of ``{-1, 1}^n``: ``(2^n, n)`` ``int8`` rows, coordinate ``i`` set by bit
    ``i`` of the row index."""
    index = np.arange(2 ** n, dtype=np.int64)[:, None]
    return (1 - 2 * ((index >> np.arange(n, dtype=np.int64)) & 1)).astype(np.int8)


def _mean_leaf_depth(decisions: Mapping[Any, Any], seed: int, points: np.ndarray) -> float:
    """Mean depth of the leaf each point reaches, routing through recorded decisions."""
    groups: dict[tuple, np.ndarray] = {(): np.arange(points.shape[0])}
    total = 0
    while groups:
        following: dict[tuple, np.ndarray] = {}
        for path, rows in groups.items():
            decision = decisions[(seed, path)]
            if isinstance(decision, LeafDecision):
                total += len(path) * rows.size
                continue
            following |= split_rows(points, rows, path, decision.variable)
        groups = following
    return total / points.shape[0]


def measure_ours(f: Oracle, clean: Oracle, params: Params, points: np.ndarray,
                 f_values: np.ndarray, clean_values: np.ndarray, config: SuiteConfig,
                 cube: np.ndarray | None = None) -> dict[str, Any]:
    """Error, queries and time of ``T_seed`` on ``points`` (answered in order).

    The first point is answered alone (cold); then the points up to each
    ``K`` of ``config.answer_counts`` with ``answer_many`` on one reconstructor
    whose cache holds every decision, so the cumulative queries after ``K``
    points equal those of answering the first ``K`` points from scratch.

    Warnings the reconstructor raises (e.g. low-margin warnings of the
    efficient mode) are counted by category in ``"warnings"``, not printed:
    a long run would repeat them thousands of times.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _measure_ours(f, clean, params, points, f_values, clean_values, config, cube)
    out["warnings"] = dict(collections.Counter(type(w.message).__name__ for w in caught))
    return out


def _measure_ours(f: Oracle, clean: Oracle, params: Params, points: np.ndarray,
                  f_values: np.ndarray, clean_values: np.ndarray, config: SuiteConfig,
                  cube: np.ndarray | None) -> dict[str, Any]:
    seed = config.seed
    rec = Reconstructor(f, params, cache_size=1 << 24, record=True)
    start = time.perf_counter()
    first = rec.explain(points[0], seed)
    seconds = time.perf_counter() - start
    first_seconds = seconds
    answers = np.empty(points.shape[0], dtype=np.int8)
    answers[0] = first.label
    cumulative = [{"answers": 1, "queries": rec.stats.queries, "seconds": seconds}]
    done = 1
    for count in sorted(set(config.answer_counts)):
        if count <= done or count > points.shape[0]:
            continue
        start = time.perf_counter()
        answers[done:count] = rec.answer_many(points[done:count], seed)
        seconds += time.perf_counter() - start
        done = count
        cumulative.append({"answers": count, "queries": rec.stats.queries,
                           "seconds": seconds})
    if done < points.shape[0]:
        answers[done:] = rec.answer_many(points[done:], seed)
    stats = dataclasses.asdict(rec.stats)
    leaf_depths = [len(path) for (_, path), decision in rec.decisions.items()
                   if isinstance(decision, LeafDecision)]
    internal = len(first.path)
    out = {
        "params": params.describe(),
        "adaptive": bool(getattr(params, "adaptive", False)),
        "err_f": error_rate(answers, f_values),
        "err_clean": error_rate(answers, clean_values),
        "first_queries": first.stats.queries,
        "first_internal_nodes": internal,
        "floor": internal * math.log2(params.n),
        "first_seconds": first_seconds,
        "cumulative": cumulative,
        "nodes_built": stats["nodes_built"],
        "leaves_built": stats["leaves_built"],
        "uncertified": stats.get("uncertified", 0),
        "early_leaves": stats.get("early_leaves", 0),
        "low_margin": stats.get("low_margin", 0),
        "certified_leaves": stats.get("certified_leaves", 0),
        "guesswork": stats.get("guesswork", 0),
        "guesswork_answers": stats.get("guesswork_answers", 0),
        "max_depth": max(leaf_depths),
        "mean_depth": _mean_leaf_depth(rec.decisions, seed, points),
        "exact_err_f": None,
        "exact_err_clean": None,
    }
    if cube is not None:
        cube_answers = rec.answer_many(cube, seed)
        out["exact_err_f"] = float(np.mean(cube_answers != f(cube)))
        out["exact_err_clean"] = float(np.mean(cube_answers != clean(cube)))
    return out


def _node_predictions(model: Any) -> np.ndarray:
    return model.classes_[np.argmax(model.tree_.value[:, 0, :], axis=1)]


def _sorted_paths(model: Any, points: np.ndarray) -> Any:
    paths = model.decision_path(points).tocsr()
    paths.sort_indices()
    return paths


def prefix_errors(model: Any, points: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Errors on ``points`` of the fitted best-first tree cut to ``L = 1, 2, ...`` leaves.

    With ``max_leaf_nodes`` set, scikit-learn grows the tree best first and
    numbers the children of the ``j``-th expansion ``2j+1, 2j+2``; the same fit
    with ``max_leaf_nodes = L`` is exactly this tree restricted to node ids
    ``< 2L - 1`` (tests check it). So one fit tunes ``max_leaf_nodes`` over
    every value at once. Entry ``L - 1`` is the error count with ``L`` leaves.
    """
    predictions = _node_predictions(model)
    paths = _sorted_paths(model, points)
    rows = np.repeat(np.arange(points.shape[0]), np.diff(paths.indptr))
    nodes = paths.indices
    wrong = (predictions[nodes] != labels[rows]).astype(np.int64)
    previous = np.empty_like(wrong)
    previous[1:] = wrong[:-1]
    previous[paths.indptr[:-1]] = 0
    # Node p is in the cut tree from L = (p + 1) // 2 + 1 leaves on.
    first_size = (nodes + 1) // 2 + 1
    leaves = int(model.tree_.n_leaves)
    changes = np.bincount(first_size, weights=wrong - previous, minlength=leaves + 1)
    return np.rint(np.cumsum(changes)[1:leaves + 1]).astype(np.int64)


def prefix_predict(model: Any, points: np.ndarray, leaves: int) -> np.ndarray:
    """Predictions of the fitted best-first tree cut to ``leaves`` leaves."""
    paths = _sorted_paths(model, points)
    ids = np.where(paths.indices < 2 * leaves - 1, paths.indices, -1)
    return _node_predictions(model)[np.maximum.reduceat(ids, paths.indptr[:-1])]


def measure_peer(f: Oracle, points: np.ndarray, f_values: np.ndarray,
                 clean_values: np.ndarray, goal: float, config: SuiteConfig) -> dict[str, Any]:
    """DecisionTreeClassifier on ``N`` uniform labelled queries, for ``N`` on the grid.

    ``N`` covers training and validation: the last ``peer_validation`` share
    of the queries picks ``max_leaf_nodes`` (every value up to
    ``peer_max_leaves``, see :func:`prefix_errors`), the rest trains. ``N`` is
    capped so that ``N * n <= peer_entry_cap``. The grid stops one step after
    the peer's error against ``f`` reaches ``goal`` (our best error; pass
    ``-inf`` for the whole grid).
    """
    classifier = peer_classifier()
    n = f.n
    key = derive.node_key(config.peer_seed, "bench/peer", ())
    limit = config.peer_entry_cap // n
    sizes = [size for size in config.peer_sizes if size <= limit]
    capped = len(sizes) < len(config.peer_sizes)
    rows = []
    reached = None
    for size in sizes:
        x = derive.unpack_points(derive.uniform_points(key, n, 0, size), n)
        y = f(x)
        validation = max(1, round(size * config.peer_validation))
        train = size - validation
        model = classifier(max_leaf_nodes=max(2, min(config.peer_max_leaves, train)),
                           random_state=config.peer_seed)
        start = time.perf_counter()
        model.fit(x[:train], y[:train])
        errors = prefix_errors(model, x[train:], y[train:])
        leaves = int(np.argmin(errors)) + 1
        fit_seconds = time.perf_counter() - start
        del x
        predicted = prefix_predict(model, points, leaves)
        row: dict[str, Any] = {
            "queries": size, "train": train, "leaves": leaves,
            "grown_leaves": int(model.tree_.n_leaves), "fit_seconds": fit_seconds,
            "err_f": error_rate(predicted, f_values),
            "err_clean": error_rate(predicted, clean_values)}
        rows.append(row)
        if reached is not None:
            break
        if row["err_f"]["value"] <= goal:
            reached = size
    return {"rows": rows, "limit": limit, "capped": capped,
            "stopped_early": reached is not None and rows[-1]["queries"] < sizes[-1]}


def peer_needed(peer: Mapping[str, Any], target: float) -> int | None:
    for row in peer["rows"]:
        if row["err_f"]["value"] <= target:
            return row["queries"]
    return None


def _optimum(case: Case, f: Oracle, clean: Oracle, config: SuiteConfig) -> dict[str, Any]:
    size = clean.size
    if isinstance(case.spec, ModelSpec):
        # No tree is known to compute a trained model, and n is too large for the DP.
        return {"value": None, "kind": "unknown", "size": None, "seconds": 0.0}
    if case.noise == 0:
        # f is the clean target, itself a tree with `size` leaves: opt_size = 0.
        return {"value": 0.0, "kind": "exact", "size": size, "seconds": 0.0}
    if case.n <= EXACT_MAX_N and size is not None and size <= config.exact_max_size:
        start = time.perf_counter()
        value = exact.opt_size(f, size).distance
        return {"value": value, "kind": "exact", "size": size,
                "seconds": time.perf_counter() - start}
    return {"value": case.noise, "kind": "bound", "size": size, "seconds": 0.0}


def case_oracles(case: Case, config: SuiteConfig) -> tuple[Oracle, Oracle, Any]:
    """``(clean, f, model_info)``: a case's target, the target with its label noise.

    A model case trains its model (``model_info`` holds the training facts);
    other cases build their target and have ``model_info = None``.
    """
    info = None
    if isinstance(case.spec, ModelSpec):
        clean, info = model_oracle(case.spec, config.target_seed)
    else:
        clean = case.spec.build(case.n, config.target_seed)
    f = (targets.with_label_noise(clean, case.noise, config.noise_seed)
         if case.noise > 0 else clean)
    return clean, f, info


def run_case(case: Case, config: SuiteConfig,
             factories: Mapping[str, ParamsFactory]) -> dict[str, Any]:
    """Measure one case: every mode of ``factories``, ``opt``, the peer.

    ``opt`` is exact (small ``n``), the label-noise bound, or unknown (trained
    models, whose result also carries ``"model"``: training accuracy and time,
    and the share of +1 answers on the evaluation points). Deterministic apart
    from the wall-time fields: the target (or the model's training, fixed
    ``random_state``), the label noise, the evaluation points (purpose
    ``"bench/eval"``), the reconstruction seed and the peer's queries (purpose
    ``"bench/peer"``) are all fixed.
    """
    start = time.perf_counter()
    clean, f, info = case_oracles(case, config)
    model_info = None if info is None else dict(info)
    points = _points(config.eval_seed, "bench/eval", case.n, config.eval_points)
    f_values = f(points)
    clean_values = clean(points)
    if model_info is not None:
        # Under uniform points a model may be nearly constant; the report shows it.
        model_info["positive_rate"] = float(np.mean(f_values == 1))
    cube = all_points(case.n) if case.n <= EXACT_MAX_N else None
    optimum = _optimum(case, f, clean, config)
    ours = {}
    for mode, factory in factories.items():
        mode_start = time.perf_counter()
        ours[mode] = measure_ours(f, clean, factory(case.n), points, f_values,
                                  clean_values, config, cube)
        ours[mode]["seconds"] = time.perf_counter() - mode_start
    goal = min(result["err_f"]["value"] for result in ours.values())
    if case.tier in config.peer_full_grid_tiers:
        goal = -math.inf
    peer_start = time.perf_counter()
    peer = measure_peer(f, points, f_values, clean_values, goal, config)
    peer["seconds"] = time.perf_counter() - peer_start
    largest = peer["rows"][-1]["queries"] if peer["rows"] else None
    for result in ours.values():
        needed = peer_needed(peer, result["err_f"]["value"])
        result["peer_needed"] = needed
        result["crossover"] = crossover(
            [(c["answers"], c["queries"]) for c in result["cumulative"]], needed, largest)
        dist = result["exact_err_f"] if result["exact_err_f"] is not None \
            else result["err_f"]["value"]
        result["ratio"] = dist / optimum["value"] if optimum["value"] else None
    out = {"case": case.name, "key": case.spec.key, "n": case.n, "noise": case.noise,
           "tier": case.tier, "target": clean.name, "size": clean.size,
           "target_depth": clean.depth, "opt": optimum, "ours": ours, "peer": peer,
           "seconds": time.perf_counter() - start}
    if model_info is not None:
        out["model"] = model_info
    return out


def run_scaling_point(n: int, config: SuiteConfig,
                      factories: Mapping[str, ParamsFactory]) -> dict[str, Any]:
    """Cold answers at ``n`` variables: median time, queries and path length per mode."""
    spec = SPECS[config.scaling_spec]
    clean = spec.build(n, config.target_seed)
    f = targets.with_label_noise(clean, config.scaling_noise, config.noise_seed)
    points = _points(config.eval_seed, "bench/eval", n, config.scaling_repeats)
    out: dict[str, Any] = {"n": n, "modes": {}}
    for mode, factory in factories.items():
        params = factory(n)
        times, queries, internal = [], [], []
        for z in points:
            rec = Reconstructor(f, params, cache_size=0)
            with warnings.catch_warnings():
                # Counted by measure_ours on the cases; here they would only repeat.
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                explained = rec.explain(z, config.seed)
                times.append(time.perf_counter() - start)
            queries.append(explained.stats.queries)
            internal.append(len(explained.path))
        out["modes"][mode] = {"seconds": statistics.median(times),
                              "queries": statistics.median(queries),
                              "internal_nodes": statistics.median(internal),
                              "floor": statistics.median(internal) * math.log2(n)}
    return out

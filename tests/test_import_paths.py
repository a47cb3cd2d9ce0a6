"""Every public name of lca.tester, lca.parallel and lca.export keeps its import path.

The three were split (into the packages lca.tester and lca.parallel, and
lca.render for the tree's readable views); the table lists every public name
each exposed before the split (its ``__all__`` and the other public names it
defined) with the module that now defines it.
"""

import importlib
import inspect
import subprocess
import sys

import pytest

from lca.export import ReconstructedTree

HOMES = {
    "lca.tester": {
        "THRESHOLD_FACTOR": "lca.tester.tolerant",
        "THEORY_THRESHOLD_FACTOR": "lca.tester.tolerant",
        "PRACTICAL_SCORE_SAMPLES": "lca.tester.tolerant",
        "DEFAULT_MAX_QUERIES": "lca.tester.tolerant",
        "MAX_GRID": "lca.tester.distance",
        "hoeffding_samples": "lca.tester.bounds",
        "hoeffding_halfwidth": "lca.tester.bounds",
        "practical_depth": "lca.tester.bounds",
        "tolerant_test_params": "lca.tester.tolerant",
        "TolerantTestPlan": "lca.tester.tolerant",
        "plan_tolerant_test": "lca.tester.tolerant",
        "TestResult": "lca.tester.tolerant",
        "tolerant_test": "lca.tester.tolerant",
        "ReconstructedFunction": "lca.tester.tolerant",
        "Tester": "lca.tester.distance",
        "DistanceEstimate": "lca.tester.distance",
        "epsilon_grid": "lca.tester.distance",
        "estimate_distance": "lca.tester.distance",
        "ExactTestResult": "lca.tester.distance",
        "ExactTester": "lca.tester.distance",
        "Restriction": "lca.tester.distance",
        "DistanceEstimator": "lca.tester.distance",
        "ExactDistance": "lca.tester.distance",
        "DistanceFromTester": "lca.tester.distance",
        "BuildReport": "lca.tester.builddt",
        "build_dt": "lca.tester.builddt",
        "build_dt_report": "lca.tester.builddt",
        "builddt_error_bound": "lca.tester.builddt",
        "add_test_command": "lca.tester.cli",
    },
    "lca.parallel": {
        "ParallelResult": "lca.parallel.pool",
        "ReplicaPool": "lca.parallel.pool",
        "TaskTimeoutError": "lca.parallel.errors",
        "WorkerError": "lca.parallel.errors",
        "answer_parallel": "lca.parallel.pool",
        "DecisionKey": "lca.parallel.routing",
        "ROUTINGS": "lca.parallel.routing",
    },
    "lca.export": {
        "FORMAT": "lca._tree_json",
        "FORMAT_VERSION": "lca._tree_json",
        "ReconstructedTree": "lca.export",
        "Shown": "lca.render",
        "UnexploredNodeError": "lca.export",
        "tree_from_decisions": "lca.export",
    },
}

# Each module's __all__ before the split; a name dropped from one fails here.
ALL_BEFORE = {
    "lca.tester": [name for name in HOMES["lca.tester"] if name != "add_test_command"],
    "lca.parallel": ["ParallelResult", "ReplicaPool", "TaskTimeoutError", "WorkerError",
                     "answer_parallel"],
    "lca.export": ["FORMAT", "FORMAT_VERSION", "ReconstructedTree", "Shown",
                   "UnexploredNodeError"],
}

ROWS = [(old, name, new) for old, names in HOMES.items() for name, new in names.items()]


@pytest.mark.parametrize("old, name, new", ROWS, ids=[f"{o}.{n}" for o, n, _ in ROWS])
def test_old_path_gives_the_object_of_its_new_home(old, name, new):
    exec(f"from {old} import {name}", {})  # the import statement itself still works
    value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), name)
    if inspect.isclass(value) or inspect.isfunction(value):
        assert value.__module__ == new  # the home in the table is where it is defined


@pytest.mark.parametrize("module", sorted(ALL_BEFORE))
def test_all_is_unchanged(module):
    assert importlib.import_module(module).__all__ == ALL_BEFORE[module]


@pytest.mark.parametrize("method, parameters", [
    ("shown", "(self, merge: 'bool' = True) -> 'dict[Path, Shown]'"),
    ("to_text", "(self, merge: 'bool' = True) -> 'str'"),
    ("to_dot", "(self, merge: 'bool' = True) -> 'str'"),
    ("draw", "(self, max_levels: 'int' = 4, ax: 'Any' = None, merge: 'bool' = True) -> 'Any'"),
])
def test_tree_keeps_its_rendering_methods(method, parameters):
    # The renderers live in lca.render; the methods stay, with their signatures.
    assert str(inspect.signature(getattr(ReconstructedTree, method))) == parameters


SPLIT_MODULES = ["lca.tester", "lca.tester.bounds", "lca.tester.tolerant",
                 "lca.tester.distance", "lca.tester.builddt", "lca.tester.cli",
                 "lca.parallel", "lca.parallel.errors", "lca.parallel.worker",
                 "lca.parallel.routing", "lca.parallel.pool", "lca.render", "lca.export"]


def test_each_module_imports_first_in_a_fresh_interpreter():
    # Imported first, a module in an import cycle fails on a half-initialised one.
    script = "\n".join([
        "import importlib, sys",
        f"for name in {SPLIT_MODULES!r}:",
        "    for loaded in [m for m in sys.modules if m == 'lca' or m.startswith('lca.')]:",
        "        del sys.modules[loaded]",
        "    importlib.import_module(name)",
        "print('ok')",
    ])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr

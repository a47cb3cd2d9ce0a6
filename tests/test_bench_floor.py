"""scripts/bench_floor.py: its prefix decisions are the reconstructor's, replayed one by one."""

import importlib.util
import pathlib

import numpy as np
import pytest

import lca
from lca import derive, targets

pytest.importorskip("sklearn")  # the script reads the suite's targets from lca.suite

_SCRIPT = pathlib.Path(__file__).parent.parent / "scripts" / "bench_floor.py"
_spec = importlib.util.spec_from_file_location("bench_floor", _SCRIPT)
bench_floor = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_floor)


@pytest.mark.parametrize("decisions, expected", [
    ([3, 3, 3], 1),          # settled from the first sample
    ([1, 2, 3, 3], 3),       # settles at the third
    ([3, 1, 3, 1, 3], 5),    # only the full prefix
    ([True, False, True, True], 3),
])
def test_settle_point(decisions, expected):
    assert bench_floor.settle_point(np.array(decisions)) == expected


def test_prefix_decisions_end_at_the_reconstructors_decisions():
    f = targets.with_label_noise(targets.random_tree(n=30, leaves=8, seed=3), 0.05, seed=2)
    params = lca.Params.practical(30, 4, 0.1, 200, 100)
    z = derive.sample_points(0, "test-bench-floor", 30, 1)[0]
    explanation = lca.Reconstructor(f, params).explain(z, bench_floor.SEED)
    for depth, node in enumerate(explanation.nodes):
        leaders = bench_floor.prefix_leaders(f, params, explanation.path[:depth])
        assert leaders.shape == (200,)
        assert leaders[-1] == node.variable
        assert not set(leaders) & {var for var, _ in explanation.path[:depth]}
    labels = bench_floor.prefix_labels(f, params, explanation.path)
    assert labels[-1] == explanation.label


def test_relevant_variables_of_a_junta():
    clean = targets.junta(30, 3, seed=4)
    params = lca.Params.practical(30, 4, 0.1, 200, 100)
    relevant = bench_floor.relevant_variables(clean, params, ())
    # Flipping an irrelevant variable never changes a junta. A variable a
    # 3-junta depends on has influence >= 1/4, so 200 uniform points miss it
    # with probability <= (3/4)^200 < 1e-24 (and the seeds are fixed).
    x = derive.sample_points(1, "test-junta", 30, 4096)
    for var in range(30):
        flipped = x.copy()
        flipped[:, var] *= -1
        if relevant[var]:
            assert np.any(clean(flipped) != clean(x))
        else:
            assert np.all(clean(flipped) == clean(x))


def test_path_variables_are_never_relevant():
    clean = targets.junta(30, 3, seed=4)
    params = lca.Params.practical(30, 4, 0.1, 200, 100)
    on_path = int(np.flatnonzero(bench_floor.relevant_variables(clean, params, ()))[0])
    below = bench_floor.relevant_variables(clean, params, ((on_path, 1),))
    assert not below[on_path]


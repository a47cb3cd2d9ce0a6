"""Every public boundary holds, checked with hypothesis.

For each public entry point: valid input gives an answer; input with one
parameter made invalid raises ``TypeError``/``ValueError`` (``lca.OracleError``
is a ``ValueError``) whose message names that parameter; nothing else escapes
(any other exception type fails the test). Examples are tiny (``n <= 8``, a few
dozen samples per node) so the file runs in seconds; every test uses a fixed,
derandomized hypothesis configuration so CI sees the same examples every run.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lca
from lca import consistency, derive, exact, tester
from lca.cli import main
from lca.oracle import OracleError

from conftest import interrupt_group

# These tests pin other behaviour on small, partly noisy functions whose answers
# may rest on guesswork; the warning itself is tested in tests/test_search.py.
pytestmark = pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")

# Fixed examples: derandomized, no example database, no deadline (timings on a
# shared CI machine are noise, not a property).
BOUNDARY = settings(derandomize=True, database=None, deadline=None, max_examples=40,
                    suppress_health_check=[HealthCheck.too_slow])
FEW = settings(BOUNDARY, max_examples=10)

N = 6
F = lca.targets.parity(N, 2, seed=1)
PARAMS = lca.Params.practical(n=N, depth=3, noise_rate=0.1, score_samples=16,
                              leaf_samples=16)
ALLOWED = (TypeError, ValueError)


def rejects(call, *names: str) -> str:
    """``call()`` raises TypeError/ValueError naming one of ``names``; returns the message."""
    try:
        result = call()
    except ALLOWED as error:
        message = str(error)
        assert any(name in message for name in names), \
            f"message does not name any of {names}: {message}"
        return message
    raise AssertionError(f"accepted, returned {result!r}; expected an error naming {names}")


# -- value strategies -----------------------------------------------------------

_OTHER = st.one_of(st.none(), st.text(max_size=2), st.complex_numbers(max_magnitude=2),
                   st.lists(st.integers(-2, 2), max_size=2),
                   st.just(np.array([1, -1])), st.just(object()))
NOT_REAL = st.one_of(_OTHER, st.booleans())
NOT_INT = st.one_of(NOT_REAL, st.floats(allow_nan=True), st.just(np.float64(2.0)))


def ints(low: int, high: int) -> st.SearchStrategy:
    """Ints in ``[low, high]``, as Python ints and as numpy integers."""
    base = st.integers(low, high)
    if high < 2 ** 63:
        return st.one_of(base, base.map(np.int64))
    return st.one_of(base, st.integers(low, min(high, 2 ** 64 - 1)).map(np.uint64))


def bad_int(low: int, high: float = math.inf) -> st.SearchStrategy:
    """Not an int, or an int outside ``[low, high]``."""
    outside = [st.integers(max_value=low - 1)]
    if high != math.inf:
        outside.append(st.integers(min_value=int(high) + 1))
    return st.one_of(NOT_INT, *outside)


def bad_real(low: float, high: float, *, open_low: bool = True,
             open_high: bool = True) -> st.SearchStrategy:
    """Not a real, NaN, or a real outside the interval."""
    below = st.floats(max_value=low, exclude_max=not open_low, allow_nan=False)
    above = st.floats(min_value=high, exclude_min=not open_high, allow_nan=False)
    return st.one_of(NOT_REAL, st.just(math.nan), below, above)


def plus_minus(shape) -> st.SearchStrategy:
    return st.lists(st.sampled_from([-1, 1]), min_size=int(np.prod(shape)),
                    max_size=int(np.prod(shape))).map(
        lambda v: np.array(v, dtype=np.int8).reshape(shape))


@st.composite
def paths(draw, n: int, max_length: int) -> tuple[tuple[int, int], ...]:
    length = draw(st.integers(0, min(n, max_length)))
    variables = draw(st.permutations(range(n)))[:length]
    return tuple((int(v), draw(st.sampled_from([-1, 1]))) for v in variables)


PATH_FAULTS = ("value", "variable", "repeat", "long", "step", "type")


@st.composite
def bad_paths(draw, n: int, max_length: int, faults: tuple[str, ...] = PATH_FAULTS):
    good = list(draw(paths(n, max_length)))
    kind = draw(st.sampled_from(faults))
    if kind == "value":
        bad = draw(st.one_of(st.integers(-5, 5).filter(lambda v: v not in (-1, 1)),
                             st.just(True), st.just(1.0)))
        good.insert(0, (N - 1 if not good else good[0][0], bad))
        good = [good[0]] + [step for step in good[1:] if step[0] != good[0][0]]
    elif kind == "variable":
        good.insert(0, (draw(st.one_of(st.integers(max_value=-1), st.integers(min_value=n))),
                        1))
    elif kind == "repeat":
        good = [(0, 1), (0, -1)]
    elif kind == "long":
        good = [(v, 1) for v in range(max_length + 1)]
    elif kind == "step":
        good.insert(0, draw(st.one_of(st.just((1,)), st.just((1, 1, 1)), st.just("ab"),
                                      st.just(3))))
    else:
        return draw(st.one_of(st.none(), st.integers(), st.text(max_size=2)))
    return tuple(good)


# -- Params and its presets ------------------------------------------------------

PARAM_FIELDS = {
    # name: (valid strategy, invalid strategy, names a message may use)
    "n": (ints(1, 12), bad_int(1), ("'n'",)),
    "depth": (ints(0, 20), bad_int(0), ("'depth'",)),
    "noise_rate": (st.floats(2 ** -15, 1.0), st.one_of(
        bad_real(0.0, 1.0, open_high=False), st.floats(5e-324, 2 ** -16)),
        ("'noise_rate'", "noise rate")),
    "score_samples": (ints(1, 10 ** 6), bad_int(1), ("'score_samples'",)),
    "leaf_samples": (ints(1, 10 ** 6), bad_int(1), ("'leaf_samples'",)),
    "size": (st.one_of(st.none(), ints(1, 100)), bad_int(1).filter(lambda v: v is not None),
             ("'size'",)),
    "tau": (st.one_of(st.none(), st.floats(1e-9, 0.999)),
            bad_real(0.0, 1.0).filter(lambda v: v is not None), ("'tau'",)),
    "first_round": (ints(1, 1000), bad_int(1), ("'first_round'",)),
    "requested_noise_rate": (st.one_of(st.none(), st.floats(1e-9, 1.0)),
                             bad_real(0.0, 1.0, open_high=False).filter(
                                 lambda v: v is not None), ("'requested_noise_rate'",)),
    "constants": (st.one_of(st.none(), st.just(lca.TheoryConstants())),
                  st.one_of(st.integers(), st.text(max_size=2), st.floats()),
                  ("'constants'",)),
    "adaptive": (st.just(False), st.one_of(st.integers(), st.none(), st.text(max_size=1)),
                 ("'adaptive'",)),
    "preset": (st.sampled_from(["theory", "guaranteed", "practical"]),
               st.one_of(st.text(max_size=3), st.none()), ("'preset'",)),
}


@st.composite
def params_kwargs(draw, bad: str | None = None) -> dict:
    kwargs = {name: draw(valid) for name, (valid, _, _) in PARAM_FIELDS.items()}
    if bad is not None:
        kwargs[bad] = draw(PARAM_FIELDS[bad][1])
    return kwargs


class TestParams:
    @BOUNDARY
    @given(params_kwargs())
    def test_valid_fields_build(self, kwargs):
        params = lca.Params(**kwargs)
        assert params.path_length == min(params.depth, params.n)
        assert params.describe().startswith("lca parameters")

    @BOUNDARY
    @given(st.data())
    def test_one_invalid_field_is_named(self, data):
        name = data.draw(st.sampled_from(sorted(PARAM_FIELDS)))
        kwargs = data.draw(params_kwargs(bad=name))
        rejects(lambda: lca.Params(**kwargs), *PARAM_FIELDS[name][2])

    @BOUNDARY
    @given(st.sampled_from(["tau", "eps", "delta"]), st.floats(1e-300, 0.999))
    def test_describe_with_some_accuracy_fields(self, name, value):
        params = lca.Params(n=4, depth=2, noise_rate=0.1, score_samples=3, leaf_samples=3,
                            **{name: value})
        assert f"{name}=" in params.describe()

    @pytest.mark.parametrize("relation_constant", [1e-320, 5e-324, 1e-200])
    def test_for_measure_tiny_relation_constant(self, relation_constant):
        from lca import measures
        rejects(lambda: measures.plan_for_measure("depth", 2, 0.1, 0.1, 6,
                                                  relation_constant=relation_constant),
                "'relation_constant'")

    def test_depth_above_n_is_accepted_and_paths_stop_at_n(self):
        # Chosen behaviour: the theory presets' depths routinely
        # exceed n, and a path can fix at most n variables.
        params = lca.Params.practical(n=3, depth=10, noise_rate=0.1, score_samples=8,
                                      leaf_samples=8)
        assert params.path_length == 3 and "paths stop at n = 3" in params.describe()
        f = lca.targets.parity(3, 3, seed=1)
        explanation = lca.Reconstructor(f, params).explain([1, -1, 1], 2)
        assert len(explanation.path) == 3

    @BOUNDARY
    @given(ints(1, 50), ints(0, 30), st.floats(1e-300, 0.999), st.floats(1e-300, 0.999),
           st.floats(5e-324, 0.999), st.booleans())
    def test_guaranteed_answers_or_names_the_limit(self, n, depth, tau, eps, delta,
                                                   adaptive):
        try:
            params = lca.Params.guaranteed(n, depth, 0.1, tau, eps, delta, adaptive=adaptive)
        except ValueError as error:
            message = str(error)
            assert ("exceeds double precision" in message or "at least 1e-323" in message
                    or (adaptive and eps >= 1 / 3 and "(0, 1/3) when adaptive" in message))
            assert re.search(r"'(tau|eps|delta|n|depth)'", message), message
        else:
            assert params.score_samples >= 1 and params.leaf_samples >= 1
            assert tau > 1e-150 and eps > 1e-150  # smaller ones overflow: must raise

    @pytest.mark.parametrize("call, names", [
        (lambda: lca.Params.guaranteed(8, 3, 0.1, tau=1e-200, eps=0.1, delta=0.05),
         ("'tau'",)),
        (lambda: lca.Params.guaranteed(8, 3, 0.1, tau=1e-160, eps=0.1, delta=0.05),
         ("'tau'",)),
        (lambda: lca.Params.guaranteed(8, 3, 0.1, 0.1, 0.1, 5e-324, adaptive=True),
         ("'delta'",)),
        (lambda: lca.Params.from_theory(4, 1e-110, 0.05, 8), ("'eps'",)),
        (lambda: lca.Params.from_theory(4, 0.1, 0.05, 8, lca.TheoryConstants(depth=1e308)),
         ("'constants'",)),
        (lambda: lca.measures.params_for_measure("depth", 2, 0.1, 5e-324, 8,
                                                 preset="practical"),
         ("'delta'",)),
        (lambda: lca.measures.params_for_measure("depth", 10 ** 100, 0.1, 0.05, 8), ("'d'",)),
        (lambda: lca.measures.params_for_measure("fourier_degree", 10 ** 100, 0.1, 0.05, 8,
                                                 noise_rate=None), ("'d'",)),
    ])
    def test_preset_overflow_names_the_parameter_and_limit(self, call, names):
        message = rejects(call, *names)
        assert "double precision" in message or "rounds to 0" in message \
            or "at least 1e-323" in message

    @BOUNDARY
    @given(ints(2, 2 ** 20), st.floats(1e-120, 0.499), st.floats(5e-324, 0.999),
           ints(1, 50), st.booleans())
    def test_from_theory_answers_or_names_the_limit(self, s, eps, delta, n, adaptive):
        try:
            params = lca.Params.from_theory(s, eps, delta, n, adaptive=adaptive)
        except ValueError as error:
            assert re.search(r"'(eps|s|delta|constants|tau|n|depth)'", str(error)), error
        else:
            assert params.preset == "theory" and params.score_samples >= 1

    @BOUNDARY
    @given(st.sampled_from(["depth", "fourier_degree", "certificate", "sensitivity"]),
           st.one_of(ints(1, 10), st.integers(10, 10 ** 200)), st.floats(1e-100, 0.499),
           st.floats(5e-324, 0.999), st.sampled_from(["theory", "practical"]))
    def test_for_measure_answers_or_names_the_limit(self, name, d, eps, delta, preset):
        try:
            params = lca.measures.params_for_measure(name, d, eps, delta, 8, preset=preset)
        except ValueError as error:
            assert re.search(r"'(d|eps|delta|relation_constant|constants|tau|n|depth)'",
                             str(error)), error
        else:
            assert params.n == 8

    @BOUNDARY
    @given(st.sampled_from(["n", "depth", "noise_rate", "score_samples", "leaf_samples"]),
           st.data())
    def test_practical_names_its_invalid_parameter(self, name, data):
        kwargs = dict(n=6, depth=3, noise_rate=0.1, score_samples=5, leaf_samples=5)
        kwargs[name] = data.draw(PARAM_FIELDS[name][1])
        rejects(lambda: lca.Params.practical(**kwargs), *PARAM_FIELDS[name][2])


# -- derive: the spec's public helpers ---------------------------------------------

BAD_PURPOSE = st.one_of(st.none(), st.integers(), st.just("é"), st.just(b"leaf"))


class TestDerive:
    @BOUNDARY
    @given(st.floats(allow_nan=True, allow_infinity=True))
    def test_noise_threshold_accepts_exactly_what_params_accepts(self, rate):
        def params_ok():
            try:
                lca.Params.practical(4, 2, rate, 2, 2)
                return True
            except ValueError:
                return False

        def threshold_ok():
            try:
                derive.noise_threshold(rate)
                return True
            except ValueError:
                return False
        assert params_ok() == threshold_ok()

    @BOUNDARY
    @given(ints(0, 2 ** 64 - 1), paths(N, N))
    def test_valid_paths_give_keys_and_points_on_the_subcube(self, seed, path):
        key = derive.node_key(seed, "leaf", path)
        assert 0 <= key < 2 ** 128
        points = derive.unpack_points(derive.uniform_points(key, N, 0, 5, path), N)
        for var, value in path:
            assert (points[:, var] == value).all()
        masks = derive.flip_masks(key, N, 0, 5, 3277, path)
        assert masks.shape == (5, 1)

    @BOUNDARY
    @given(bad_paths(N, N, faults=("value", "repeat", "step", "type")))
    def test_node_key_rejects_invalid_paths(self, path):
        # node_key does not know n or the depth: any u64 variable, any length.
        rejects(lambda: derive.node_key(1, "leaf", path), "path")
        rejects(lambda: derive.node_key(1, "leaf", ((-1, 1),)), "path")

    @BOUNDARY
    @given(bad_paths(N, N))
    def test_invalid_paths_are_rejected(self, path):
        rejects(lambda: derive.uniform_points(7, N, 0, 2, path), "path")
        rejects(lambda: derive.flip_masks(7, N, 0, 2, 3277, path), "path")

    def test_path_variables_past_n_are_rejected_not_set(self):
        rejects(lambda: derive.uniform_points(7, 20, 0, 2, ((25, -1),)), "path")
        # node_key does not know n: it accepts any u64 variable.
        assert derive.node_key(1, "leaf", ((25, -1),)) != derive.node_key(1, "leaf", ())

    @BOUNDARY
    @given(st.sampled_from(["seed", "purpose", "n", "count"]), st.data())
    def test_sample_points_names_its_invalid_parameter(self, name, data):
        kwargs = dict(seed=1, purpose="test", n=4, count=3)
        kwargs[name] = data.draw({"seed": bad_int(0, 2 ** 64 - 1),
                                  "purpose": BAD_PURPOSE,
                                  "n": bad_int(1), "count": bad_int(0)}[name])
        rejects(lambda: derive.sample_points(**kwargs), f"'{name}'")

    @BOUNDARY
    @given(st.sampled_from(["key", "n", "start", "stop", "threshold"]), st.data())
    def test_flip_masks_names_its_invalid_parameter(self, name, data):
        kwargs = dict(key=5, n=4, start=2, stop=4, threshold=3277)
        kwargs[name] = data.draw({"key": st.just("k"), "n": bad_int(1),
                                  "start": bad_int(0), "stop": bad_int(2),
                                  "threshold": bad_int(1, 2 ** 16 - 1)}[name])
        rejects(lambda: derive.flip_masks(**kwargs), f"'{name}'")

    @BOUNDARY
    @given(st.one_of(NOT_REAL, st.just(np.ones((2, 1)))), st.one_of(
        NOT_REAL, st.just(np.ones((2, 3))), st.just(np.zeros((2, 3), dtype=np.int8))))
    def test_pack_and_unpack_name_their_arrays(self, words, points):
        rejects(lambda: derive.unpack_points(words, 3), "'words'")
        rejects(lambda: derive.pack_points(points), "'points'")

    @BOUNDARY
    @given(plus_minus((3, 70)))
    def test_pack_and_unpack_round_trip(self, points):
        words = derive.pack_points(points)
        assert derive.unpack_points(words, 70).tolist() == points.tolist()

    @BOUNDARY
    @given(bad_int(0, 2 ** 64 - 1), BAD_PURPOSE)
    def test_constructor_key_and_word_stream(self, seed, purpose):
        rejects(lambda: derive.constructor_key("x", seed), "'seed'")
        rejects(lambda: derive.WordStream(purpose, 1), "'purpose'")


# -- the reconstructor -------------------------------------------------------------

SEEDS = ints(0, 2 ** 64 - 1)
BAD_SEED = bad_int(0, 2 ** 64 - 1)


@st.composite
def bad_z(draw):
    kind = draw(st.sampled_from(["length", "2d", "float", "bool", "value", "junk"]))
    if kind == "length":
        return np.ones(draw(st.integers(0, 10).filter(lambda k: k != N)), dtype=np.int8)
    if kind == "2d":
        return np.ones((2, N), dtype=np.int8)
    if kind == "float":
        return np.ones(N)
    if kind == "bool":
        return np.ones(N, dtype=bool)
    if kind == "value":
        z = np.ones(N, dtype=np.int64)
        z[draw(st.integers(0, N - 1))] = draw(st.integers(-3, 3).filter(
            lambda v: v not in (-1, 1)))
        return z
    return draw(st.one_of(st.none(), st.text(max_size=2), st.just(np.ones(N, dtype=object))))


class TestReconstructor:
    rec = lca.Reconstructor(F, PARAMS)

    @BOUNDARY
    @given(plus_minus((N,)), SEEDS)
    def test_valid_queries_answer_alike_on_every_route(self, z, seed):
        label = self.rec.answer(z, seed)
        assert label in (-1, 1)
        assert lca.answer(list(z), seed, oracle=F, params=PARAMS) == label
        assert self.rec.answer_many(z[None, :], seed).tolist() == [label]
        assert self.rec.explain(z, seed).label == label

    @BOUNDARY
    @given(bad_z())
    def test_invalid_z_names_z(self, z):
        rejects(lambda: self.rec.answer(z, 1), "z ")
        rejects(lambda: lca.answer(z, 1, oracle=F, params=PARAMS), "z ")

    def test_wrong_length_z_reports_the_lengths(self):
        message = rejects(lambda: self.rec.answer(np.ones(N + 1, dtype=np.int8), 1), "z ")
        assert f"1-D array of {N} values" in message and f"length {N + 1}" in message

    @BOUNDARY
    @given(BAD_SEED)
    def test_invalid_seed_names_seed(self, seed):
        z = np.ones(N, dtype=np.int8)
        for call in (lambda: self.rec.answer(z, seed), lambda: self.rec.decide(seed, ()),
                     lambda: self.rec.answer_many(z[None, :], seed)):
            rejects(call, "seed")

    @BOUNDARY
    @given(SEEDS, paths(N, PARAMS.path_length))
    def test_decide_on_valid_paths(self, seed, path):
        decision = self.rec.decide(seed, path)
        if len(path) == PARAMS.path_length:
            assert isinstance(decision, lca.LeafDecision)
        else:
            assert isinstance(decision, lca.NodeDecision)
            assert decision.variable not in {var for var, _ in path}

    @BOUNDARY
    @given(bad_paths(N, PARAMS.path_length))
    def test_decide_rejects_invalid_paths(self, path):
        rejects(lambda: self.rec.decide(1, path), "path")

    def test_decide_rejects_malformed_paths_and_accepts_numpy_ints(self):
        rec = lca.Reconstructor(lca.targets.parity(20, 2, 1),
                                lca.Params.practical(20, 3, 0.1, 8, 8))
        for path in [((3, 0),), ((3, 5),), ((3, 1), (3, -1)), ((25, 1),), ((-1, -1),),
                     ((0, 1), (1, 1), (2, 1), (4, 1))]:
            rejects(functools.partial(rec.decide, 1, path), "path")
        assert rec.decide(np.int64(1), ((np.int64(3), np.int8(1)),)) == \
            rec.decide(1, ((3, 1),))

    @BOUNDARY
    @given(st.one_of(bad_int(0).map(lambda v: ("cache_size", v)),
                     st.one_of(st.integers(), st.text(max_size=2), st.none()).map(
                         lambda v: ("record", v))))
    def test_constructor_names_invalid_options(self, bad):
        name, value = bad
        rejects(lambda: lca.Reconstructor(F, PARAMS, **{name: value}), name)

    @BOUNDARY
    @given(ints(0, 100), st.booleans())
    def test_constructor_accepts_numpy_ints(self, cache_size, record):
        rec = lca.Reconstructor(F, PARAMS, cache_size=cache_size, record=record)
        assert rec.answer(np.ones(N, dtype=np.int8), 3) == self.rec.answer(
            np.ones(N, dtype=np.int8), 3)

    @BOUNDARY
    @given(st.integers(2 ** 31, 2 ** 70), st.sampled_from(["random_tree", "parity",
                                                          "majority"]))
    def test_targets_bound_n(self, n, name):
        rejects(lambda: getattr(lca.targets, name)(n, 1, 1), "'n'")

    def test_oracle_without_n_is_a_type_error_naming_the_class(self):
        class NoN(lca.Oracle):
            def query(self, points):
                return np.ones(len(points), dtype=np.int8)
        message = rejects(lambda: lca.Reconstructor(NoN(), PARAMS), "NoN")
        assert "'n'" in message
        assert "NoN" in repr(NoN())
        for call in (lambda: lca.answer(np.ones(N, dtype=np.int8), 1, oracle=NoN(),
                                        params=PARAMS),
                     lambda: tester.tolerant_test(NoN(), **TEST_KWARGS),
                     lambda: tester.Restriction(NoN()),
                     lambda: tester.build_dt(NoN(), 2, 1, 0.1,
                                             distance_estimator=tester.ExactDistance()),
                     lambda: exact.truth_table(NoN()),
                     lambda: lca.targets.with_label_noise(NoN(), 0.1, 1),
                     lambda: lca.parallel.ReplicaPool(NoN(), PARAMS)):
            rejects(call, "NoN must set the attribute 'n'")


# -- adapters ----------------------------------------------------------------------

def _constant(value):
    return lambda row: value


class TestAdapters:
    points = np.array([[1, -1, 1], [-1, -1, 1]], dtype=np.int8)

    @BOUNDARY
    @given(st.one_of(st.sampled_from([-1, 1]), st.sampled_from([-1, 1]).map(np.int64),
                     st.sampled_from([-1, 1]).map(np.int8)))
    def test_from_callable_accepts_ints(self, value):
        assert lca.from_callable(_constant(value), 3)(self.points).tolist() == [value] * 2

    @BOUNDARY
    @given(st.one_of(st.booleans(), st.floats(), st.complex_numbers(),
                     st.just(np.float64(-1.0)), st.just(np.array([1])), st.none(),
                     st.text(max_size=1), st.integers().filter(lambda v: v not in (-1, 1)),
                     st.just(np.True_)))
    def test_from_callable_coerces_nothing(self, value):
        f = lca.from_callable(_constant(value), 3, name="mine")
        with pytest.raises(OracleError, match="oracle 'mine' returned"):
            f(self.points)

    @BOUNDARY
    @given(st.one_of(st.booleans(), st.floats(), st.just(np.float64(1.0)),
                     st.just(np.array([0])), st.complex_numbers(),
                     st.integers().filter(lambda v: v not in (0, 1))))
    def test_from_boolean_coerces_nothing(self, value):
        f = lca.from_boolean(_constant(value), 3, name="bits")
        with pytest.raises(OracleError, match="oracle 'bits' returned"):
            f(self.points)

    @BOUNDARY
    @given(bad_int(1))
    def test_adapters_name_n(self, n):
        rejects(lambda: lca.from_callable(_constant(1), n), "'n' parameter of from_callable")
        rejects(lambda: lca.from_boolean(_constant(1), n), "'n' parameter of from_boolean")


# -- tester, exact, consistency helpers ---------------------------------------------

TEST_KWARGS = dict(s=2, eps=0.3, delta=0.2, seed=1, depth=2, score_samples=8,
                   leaf_samples=8)
TEST_BAD = {
    "s": bad_int(1), "eps": bad_real(0.0, 1.0, open_high=False), "delta": bad_real(0.0, 1.0),
    "seed": BAD_SEED, "threshold_factor": bad_real(0.0, math.inf),
    "samples": bad_int(1).filter(lambda v: v is not None),
    "max_queries": bad_int(1).filter(lambda v: v is not None),
    "depth": bad_int(0).filter(lambda v: v is not None),
}


class TestTesterAndExact:
    @FEW
    @given(ints(1, 4), st.floats(0.05, 1.0), st.floats(0.01, 0.99), SEEDS)
    def test_tolerant_test_answers(self, s, eps, delta, seed):
        result = tester.tolerant_test(F, s, eps, delta, seed, depth=2, score_samples=8,
                                      leaf_samples=8)
        assert result.accepted in (True, False) and result.samples >= 1

    @BOUNDARY
    @given(st.sampled_from(sorted(TEST_BAD)), st.data())
    def test_tolerant_test_names_its_invalid_parameter(self, name, data):
        kwargs = dict(TEST_KWARGS)
        kwargs[name] = data.draw(TEST_BAD[name])
        rejects(lambda: tester.tolerant_test(F, **kwargs), name)

    @BOUNDARY
    @given(st.sampled_from(["eps", "delta"]), st.data())
    def test_hoeffding_samples_names_its_invalid_parameter(self, name, data):
        kwargs = dict(eps=0.1, delta=0.1)
        kwargs[name] = data.draw(bad_real(0.0, 1.0))
        rejects(lambda: tester.hoeffding_samples(**kwargs), name)

    @BOUNDARY
    @given(st.floats(5e-324, 1.0), st.floats(5e-324, 0.999))
    def test_hoeffding_samples_answers_or_names_the_limit(self, eps, delta):
        try:
            assert tester.hoeffding_samples(eps, delta) >= 1
        except ValueError as error:
            assert "double precision" in str(error) and "'eps'" in str(error)

    @BOUNDARY
    @given(ints(1, 2 ** 80), st.floats(5e-324, 1.0))
    def test_practical_depth_never_overflows(self, s, eps):
        depth = tester.practical_depth(s, eps)
        assert 0 <= depth <= s - 1

    @BOUNDARY
    @given(st.floats(1e-300, 0.999), st.floats(1.0, 1e300))
    def test_epsilon_grid_answers_or_names_the_limit(self, gamma, c):
        try:
            grid = tester.epsilon_grid(gamma, c)
        except ValueError as error:
            assert f"at most {tester.MAX_GRID}" in str(error) and "'gamma'" in str(error)
        else:
            assert 1 <= len(grid) <= tester.MAX_GRID and grid[-1] <= 1.0

    @BOUNDARY
    @given(paths(N, N))
    def test_exact_entry_points_on_valid_paths(self, path):
        table = exact.truth_table(F, path)
        assert table.shape == (2 ** (N - len(path)),)
        assert -1.0 <= exact.mean(F, path) <= 1.0
        assert exact.restrict(F, path)[0].tolist() == table.tolist()

    @BOUNDARY
    @given(bad_paths(N, N).filter(lambda p: p != tuple((v, 1) for v in range(N + 1))))
    def test_exact_entry_points_reject_invalid_paths(self, path):
        for call in (lambda: exact.truth_table(F, path), lambda: exact.mean(F, path),
                     lambda: exact.restrict(F, path)):
            rejects(call, "path")

    @BOUNDARY
    @given(st.one_of(bad_int(1).map(lambda v: ("s", v)),
                     bad_real(0.0, 1.0, open_low=False).map(lambda v: ("p", v))))
    def test_exact_measures_name_their_parameter(self, bad):
        name, value = bad
        if name == "s":
            rejects(lambda: exact.opt_size(F, value), "s")
        else:
            rejects(lambda: exact.noise_sensitivity(F, value), "p")

    @BOUNDARY
    @given(st.sampled_from(["s", "d", "gamma", "mean_samples", "seed", "path"]), st.data())
    def test_build_dt_names_its_invalid_parameter(self, name, data):
        kwargs = dict(oracle=lca.targets.parity(3, 1, 1), s=2, d=1, gamma=0.1, seed=0,
                      path=(), mean_samples=None)
        kwargs[name] = data.draw({
            "s": bad_int(1), "d": bad_int(0), "gamma": bad_real(0.0, 1.0, open_low=False),
            "mean_samples": bad_int(1).filter(lambda v: v is not None), "seed": BAD_SEED,
            "path": bad_paths(3, 3)}[name])
        rejects(lambda: tester.build_dt(distance_estimator=tester.ExactDistance(),
                                        **kwargs), name)

    @BOUNDARY
    @given(st.sampled_from(["queries", "replicas", "workers", "pure_queries", "seed",
                            "dask"]), st.data())
    def test_check_consistency_names_its_invalid_parameter(self, name, data):
        # Every argument is validated before any replica starts: nothing spawns here.
        kwargs = dict(seed=1, queries=10, replicas=2, workers=1, pure_queries=5, dask=False)
        kwargs[name] = data.draw({
            "queries": st.one_of(st.integers(max_value=0), st.floats(), st.text(max_size=2),
                                 st.just(np.ones((2, N)))),
            "replicas": st.one_of(st.integers(max_value=1), st.floats(), st.text(max_size=2),
                                  st.just([]), st.just([1, 2]), st.none()),
            "workers": bad_int(1), "pure_queries": bad_int(1), "seed": BAD_SEED,
            "dask": st.one_of(st.integers(), st.text(max_size=1))}[name])
        rejects(lambda: consistency.check_consistency(F, PARAMS, **kwargs), name)

    def test_check_consistency_replicas_float_names_the_parameter(self):
        message = rejects(lambda: consistency.check_consistency(F, PARAMS, seed=1,
                                                                replicas=2.5), "'replicas'")
        assert "ReplicaSpec" in message

    @BOUNDARY
    @given(SEEDS, ints(0, 50), ints(0, 2 ** 63 - 1), ints(1, 8))
    def test_query_helpers_answer(self, seed, count, salt, n):
        assert sorted(consistency.query_order(seed, count, salt).tolist()) == \
            list(range(count))
        assert consistency.uniform_queries(seed, n, count).shape == (count, n)

    @BOUNDARY
    @given(st.sampled_from(["seed", "count", "salt", "n"]), st.data())
    def test_query_helpers_name_their_invalid_parameter(self, name, data):
        bad = data.draw({"seed": BAD_SEED, "count": bad_int(0), "salt": bad_int(0, 2 ** 64 - 1),
                         "n": bad_int(1)}[name])
        kwargs = {"seed": 1, "count": 3, "salt": 0, "n": 4, name: bad}
        if name != "n":
            rejects(lambda: consistency.query_order(kwargs["seed"], kwargs["count"],
                                                    kwargs["salt"]), name)
        if name != "salt":
            rejects(lambda: consistency.uniform_queries(kwargs["seed"], kwargs["n"],
                                                        kwargs["count"]), name)

    @BOUNDARY
    @given(st.sampled_from(["count", "workers", "pure_queries"]), st.data())
    def test_default_replicas_names_its_invalid_parameter(self, name, data):
        rejects(lambda: consistency.default_replicas(**{name: data.draw(bad_int(1))}), name)


# -- parallel and estimate helpers (validation only: no worker starts) ----------------

class TestParallelAndEstimate:
    @BOUNDARY
    @given(st.sampled_from(["workers", "cache_size", "batch_size", "max_retries",
                            "task_timeout", "record", "start_method"]), st.data())
    def test_replica_pool_names_its_invalid_parameter(self, name, data):
        bad = data.draw({
            "workers": bad_int(1), "cache_size": bad_int(0), "max_retries": bad_int(0),
            "batch_size": bad_int(1).filter(lambda v: v is not None),
            "task_timeout": bad_real(0.0, math.inf).filter(lambda v: v is not None),
            "record": st.one_of(st.integers(), st.text(max_size=1), st.none()),
            "start_method": st.one_of(st.text(max_size=3), st.none(), st.integers())}[name])
        rejects(lambda: lca.parallel.ReplicaPool(F, PARAMS, **{name: bad}), name)

    @BOUNDARY
    @given(st.floats(5e-324, 2.0), st.floats(5e-324, 0.999), ints(1, 10 ** 6))
    def test_samples_for_accuracy_answers_or_names_the_limit(self, tau, delta, n):
        from lca import estimate
        try:
            assert estimate.samples_for_accuracy(tau, delta, n) >= 1
        except ValueError as error:
            assert "double precision" in str(error) and "'tau'" in str(error)


# -- distributed (validation only, plus one synchronous compute) ---------------------

class TestDistributed:
    distributed = pytest.importorskip("lca.distributed")
    pytest.importorskip("dask")

    @FEW
    @given(st.integers(1, 6), SEEDS, ints(0, 8))
    def test_answer_array_matches_answer_many(self, m, seed, cache_size):
        points = derive.sample_points(seed, "boundaries", N, m)
        lazy = self.distributed.answer_array(points, oracle=F, params=PARAMS, seed=seed,
                                             rows_per_block=np.int64(2),
                                             cache_size=cache_size)
        expected = lca.Reconstructor(F, PARAMS).answer_many(points, seed)
        assert lazy.compute(scheduler="sync").tolist() == expected.tolist()

    @BOUNDARY
    @given(st.one_of(st.just(()), st.just(np.ones((2, N), dtype=object)),
                     st.just(np.ones((2, N))), st.just(np.ones((2, N + 1), dtype=np.int8)),
                     st.just(np.zeros((2, N), dtype=np.int8)), st.text(max_size=2),
                     st.none()))
    def test_answer_array_rejects_points_before_dask(self, points):
        rejects(lambda: self.distributed.answer_array(points, oracle=F, params=PARAMS,
                                                      seed=1), "'points'")

    @BOUNDARY
    @given(st.sampled_from(["seed", "cache_size", "rows_per_block"]), st.data())
    def test_answer_array_names_its_invalid_parameter(self, name, data):
        kwargs = dict(seed=1, cache_size=4, rows_per_block=2)
        kwargs[name] = data.draw({"seed": BAD_SEED, "cache_size": bad_int(0),
                                  "rows_per_block": bad_int(1).filter(
                                      lambda v: v is not None)}[name])
        rejects(lambda: self.distributed.answer_array(np.ones((2, N), dtype=np.int8),
                                                      oracle=F, params=PARAMS, **kwargs),
                name)


# -- the command line ---------------------------------------------------------------

def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_info:
            code = exit_info.code
    return code, out.getvalue(), err.getvalue()


_U64 = 2 ** 64 - 1
_TREE_OPTIONS = {"--n": (1, 2 ** 31 - 1), "--leaves": (1, None), "--noise": (0.0, 0.5),
                 "--seed": (0, _U64), "--tree-seed": (0, _U64 - 1), "--depth": (0, None),
                 "--noise-rate": (0.0, 1.0), "--score-samples": (1, None),
                 "--leaf-samples": (1, None), "--pairs": (1, None)}
CLI_OPTIONS = {
    "demo": {**_TREE_OPTIONS, "--queries": (1, 2 ** 63 - 1)},
    "consistency": {**_TREE_OPTIONS, "--replicas": (2, None), "--queries": (1, None),
                    "--workers": (1, None), "--pure-queries": (1, None)},
    "test": {"--n": (1, 2 ** 31 - 1), "--s": (1, None), "--eps": (0.0, 1.0),
             "--delta": (0.0, 1.0), "--seed": (0, _U64), "--target-seed": (0, _U64 - 1),
             "--leaves": (1, None), "--k": (0, None), "--noise": (0.0, 0.5),
             "--threshold-factor": (0.0, math.inf), "--max-queries": (0, None)},
}
CHOICE_OPTIONS = [("test", "--target"), ("test", "--preset"), ("bench", "--mode")]


@st.composite
def bad_option(draw):
    command = draw(st.sampled_from(sorted(CLI_OPTIONS)))
    option = draw(st.sampled_from(sorted(CLI_OPTIONS[command])))
    low, high = CLI_OPTIONS[command][option]
    if isinstance(low, int):
        outside = [st.integers(max_value=low - 1)]
        if high is not None:
            outside.append(st.integers(min_value=high + 1, max_value=high + 10 ** 20))
        text = draw(st.one_of(st.sampled_from(["x", "1.5", "", "nan", "1e3", "0x10"]),
                              *[s.map(str) for s in outside]))
    else:
        outside = [st.floats(max_value=low, exclude_max=option in (
            "--noise",), allow_nan=False)]
        if high != math.inf:
            outside.append(st.floats(min_value=high, allow_nan=False,
                                     exclude_min=option not in ("--delta",)))
        text = draw(st.one_of(st.sampled_from(["x", "nan", ""]),
                              *[s.map(repr) for s in outside]))
    return command, option, text


class TestCommandLine:
    @BOUNDARY
    @given(bad_option())
    def test_every_bad_option_is_one_line_naming_it_with_status_2(self, case):
        command, option, text = case
        code, out, err = run_cli([command, option, text])
        assert code == 2, (case, out, err)
        errors = [line for line in err.splitlines() if "error:" in line]
        assert len(errors) == 1 and f"argument {option}:" in errors[0], (case, err)

    @pytest.mark.parametrize("command, option", CHOICE_OPTIONS)
    def test_bad_choices(self, command, option):
        code, _, err = run_cli([command, option, "nope"])
        assert code == 2 and f"argument {option}:" in err

    @pytest.mark.parametrize("argv, option", [
        (["demo", "--seed", "-1"], "--seed"),
        (["demo", "--seed", "18446744073709551616"], "--seed"),
        (["demo", "--queries", "0"], "--queries"),
        (["demo", "--queries", "-1"], "--queries"),
        (["test", "--s", "0"], "--s"),
        (["test", "--n", "2", "--s", "5"], "--s"),
        (["test", "--target", "tree", "--k", "3"], "--k"),
        (["test", "--target", "parity", "--n", "4", "--k", "5"], "--k"),
        (["test", "--target", "parity", "--leaves", "3"], "--leaves"),
        (["consistency", "--pure-queries", "-1"], "--pure-queries"),
        (["bench", "--from-json", "/nonexistent.json"], "--from-json"),
        (["bench", "--jobs", "0"], "--jobs"),
        (["bench", "--json", "/nonexistent/dir/out.json"], "--json"),
        (["demo", "--n", "3", "--leaves", "9"], "--leaves"),
        (["test", "--eps", "1e-320"], "--eps"),
    ])
    def test_bad_option_is_one_error_line_naming_it(self, argv, option):
        code, _, err = run_cli(argv)
        errors = [line for line in err.splitlines() if "error:" in line]
        assert code == 2 and len(errors) == 1 and option in errors[0], err

    @FEW
    @given(SEEDS, st.integers(1, 5), st.integers(0, 3), st.booleans())
    def test_valid_demo_runs(self, seed, queries, depth, paper):
        mode = ["--mode", "paper", "--score-samples", "10"] if paper else ["--pairs", "8"]
        code, out, _ = run_cli(["demo", "--n", "8", "--leaves", "4", "--depth", str(depth),
                                *mode, "--leaf-samples", "10",
                                "--queries", str(queries), "--seed", str(seed), "--quiet"])
        assert code == 0 and "error vs f" in out

    @FEW
    @given(st.sampled_from(["tree", "parity", "majority", "random"]), SEEDS,
           st.floats(0.2, 1.0))
    def test_valid_test_runs(self, target, seed, eps):
        code, out, _ = run_cli(["test", "--target", target, "--n", "5", "--s", "2",
                                "--eps", repr(eps), "--delta", "0.3", "--seed", str(seed)])
        assert code == 0 and ("ACCEPT" in out or "REJECT" in out)


# -- oracles that write into their input --------------------------------------------

class Scribbler(lca.Oracle):
    """Answers like ``inner``, then overwrites every entry of its input with +1."""

    def __init__(self, inner: lca.Oracle) -> None:
        self.inner, self.n, self.name = inner, inner.n, "scribbler"

    def query(self, points):
        values = self.inner.query(points)
        points[...] = 1
        return values


class TestMutatingOracle:
    """No result may depend on whether the oracle writes into the array it is given."""

    f = lca.targets.with_label_noise(lca.targets.random_tree(8, 6, 3), 0.2, 4)

    def test_tolerant_test(self):
        kwargs = dict(s=4, eps=0.1, delta=0.05, seed=3, depth=3, score_samples=40,
                      leaf_samples=40)
        clean = tester.tolerant_test(self.f, **kwargs)
        dirty = tester.tolerant_test(Scribbler(self.f), **kwargs)
        assert (dirty.disagreements, dirty.accepted) == (clean.disagreements, clean.accepted)

    @pytest.mark.parametrize("adaptive", [False, True])
    def test_reconstructor(self, adaptive):
        params = lca.Params.practical(8, 3, 0.1, 64, 64, adaptive=adaptive, tau=0.2,
                                      eps=0.2, delta=0.1) if adaptive else \
            lca.Params.practical(8, 3, 0.1, 64, 64)
        points = derive.sample_points(5, "boundaries", 8, 50)
        clean = lca.Reconstructor(self.f, params, record=True)
        dirty = lca.Reconstructor(Scribbler(self.f), params, record=True)
        assert clean.answer_many(points, 5).tolist() == dirty.answer_many(points, 5).tolist()
        assert clean.decisions == dirty.decisions

    def test_estimators(self):
        from lca import estimate
        for oracle in (self.f, Scribbler(self.f)):
            np.testing.assert_array_equal(
                estimate.unbiased_estimates(self.f, 1, ((2, -1),), 30, 3277),
                estimate.unbiased_estimates(oracle, 1, ((2, -1),), 30, 3277))

    def test_label_noise_wrapper(self):
        base = lca.targets.random_tree(8, 6, 3)
        points = derive.sample_points(9, "boundaries", 8, 64)
        clean = lca.targets.with_label_noise(base, 0.3, 4)(points.copy())
        dirty = lca.targets.with_label_noise(Scribbler(base), 0.3, 4)(points.copy())
        assert clean.tolist() == dirty.tolist()

    def test_exact_and_build_dt(self):
        dirty = Scribbler(self.f)
        assert exact.truth_table(dirty).tolist() == exact.truth_table(self.f).tolist()
        assert exact.mean(dirty, ((1, -1),)) == exact.mean(self.f, ((1, -1),))
        kwargs = dict(s=3, d=2, gamma=0.1, distance_estimator=tester.ExactDistance(),
                      mean_samples=32, seed=2)
        assert tester.build_dt(dirty, **kwargs).to_nested() == \
            tester.build_dt(self.f, **kwargs).to_nested()


# == tree JSON, sizes, huge reals, flags, the command line, Ctrl-C, the public surface ===

# -- a tree read back from JSON is checked node by node ----------------------

def _small_tree():
    f = lca.targets.random_tree(5, 6, 2)
    return lca.Reconstructor(f, lca.Params.practical(5, 3, 0.1, 16, 16)).materialize(3)


SMALL_TREE = _small_tree()
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 10), st.integers(),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3),
              st.sampled_from(["node", "leaf", "lca.ReconstructedTree"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)


def _places(value, where=()):
    """Every (container path) in a JSON document, containers included."""
    yield where
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, where + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _places(item, where + (index,))


@st.composite
def corrupted_json(draw) -> str:
    """SMALL_TREE's JSON with one place replaced, removed or repeated, or a key doubled."""
    document = json.loads(SMALL_TREE.to_json())
    places = [place for place in _places(document) if place]
    place = draw(st.sampled_from(places))
    parent = document
    for step in place[:-1]:
        parent = parent[step]
    action = draw(st.sampled_from(["replace", "remove", "repeat", "double key"]))
    if action == "replace":
        parent[place[-1]] = draw(JSON_VALUES)
    elif action == "remove":
        del parent[place[-1]]
    elif action == "repeat" and isinstance(parent, list):
        parent.append(json.loads(json.dumps(parent[place[-1]])))
    text = json.dumps(document)
    if action == "double key" and isinstance(parent, dict):
        key = json.dumps(place[-1])
        again = f"{key}: {json.dumps(draw(JSON_VALUES))}, "
        at = text.find(f"{key}: ")
        text = text[:at] + again + text[at:]
    return text


class TestTreeFromJson:
    @settings(BOUNDARY, max_examples=300)
    @given(corrupted_json())
    def test_a_corrupted_tree_is_refused_or_answers_like_a_tree(self, text):
        """Refused with a ValueError from from_json, or a tree that behaves as one."""
        try:
            tree = lca.export.ReconstructedTree.from_json(text)
        except ValueError as error:
            assert str(error).startswith(("ReconstructedTree.from_json:",
                                          "The 'text' parameter")), error
            return
        assert all(leaf.label in (-1, 1) for leaf in tree.leaves.values())
        assert all(0 <= node.variable < tree.n for node in tree.internal_nodes.values())
        points = (1 - 2 * ((np.arange(2 ** tree.n)[:, None] >> np.arange(tree.n)) & 1)
                  ).astype(np.int8)
        try:
            labels = tree.query(points)
        except lca.export.UnexploredNodeError:
            pass
        else:
            assert set(labels.tolist()) <= {-1, 1}
        assert lca.export.ReconstructedTree.from_json(tree.to_json()) == tree
        tree.to_text(), tree.to_dot()

    @BOUNDARY
    @given(st.sampled_from(["[", "{\"a\": ", "[{\"b\": "]), st.integers(2_000, 200_000))
    def test_deep_nesting_is_a_value_error(self, opener, depth):
        with pytest.raises(ValueError, match="from_json"):
            lca.export.ReconstructedTree.from_json(opener * depth)

    @BOUNDARY
    @given(st.one_of(st.none(), st.integers(), st.just(["{}"]), st.just({"format": 1})))
    def test_text_must_be_a_string(self, text):
        with pytest.raises(TypeError, match="The 'text' parameter of "
                                            "ReconstructedTree.from_json must be a JSON"):
            lca.export.ReconstructedTree.from_json(text)


# -- every size is bounded by what the machine can represent ------------------

HUGE = st.one_of(st.integers(2 ** 55, 2 ** 200), st.sampled_from([2 ** 64, 10 ** 400]))


class TestSizes:
    @BOUNDARY
    @given(st.sampled_from(["pairs", "leaf_samples"]), HUGE, ints(1, 10 ** 6))
    def test_efficient_sizes_fit_one_array(self, name, value, n):
        from lca._validate import MAX_ARRAY_BYTES
        from lca.search import max_samples as max_search_samples

        most = max_search_samples(n)
        assert most == MAX_ARRAY_BYTES // (32 * n)  # a noisy node draws twice the pair cap
        if value <= most:
            params = lca.Params.efficient(n, **{name: value})
            assert max(params.score_samples, params.leaf_samples) * 16 * n <= MAX_ARRAY_BYTES
            return
        message = rejects(lambda: lca.Params.efficient(n, **{name: value}), f"'{name}'")
        assert f"range [1, {most}]" in message and "largest array" in message
        # The same bound, under the field's own name, for Params built directly.
        field = "score_samples" if name == "pairs" else name
        rejects(lambda: lca.Params(n=n, depth=3, noise_rate=0.1, eps=0.05, delta=0.05,
                                   estimator="search", preset="efficient",
                                   **{"score_samples": 8, "leaf_samples": 8,
                                      field: value}), f"'{field}'")

    @BOUNDARY
    @given(st.one_of(HUGE, st.integers(2 ** 31, 2 ** 40)))
    def test_n_is_bounded_everywhere(self, n):
        for call in (lambda: lca.Params.efficient(n),
                     lambda: lca.Params.practical(n, 3, 0.1, 8, 8),
                     lambda: lca.Params.guaranteed(n, 3, 0.1, 0.2, 0.2, 0.1),
                     lambda: lca.from_callable(lambda row: 1, n)):
            assert "2**31 - 1" in rejects(call, "'n'")

    @FEW
    @given(HUGE)
    def test_a_huge_first_round_is_just_the_cap(self, first_round):
        # Rounds never exceed the pair cap, so first_round needs no bound of its own.
        points = derive.sample_points(1, "boundaries", N, 20)
        capped = lca.Params.efficient(N, depth=3, pairs=16, first_round=16)
        huge = lca.Params.efficient(N, depth=3, pairs=16, first_round=first_round)
        one, two = lca.Reconstructor(F, capped, record=True), lca.Reconstructor(F, huge,
                                                                                record=True)
        assert one.answer_many(points, 3).tolist() == two.answer_many(points, 3).tolist()
        assert one.decisions == two.decisions

    @FEW
    @given(HUGE, HUGE)
    def test_score_estimator_counts_stream_and_budgets_stop_them(self, score, leaf):
        # The paper's estimator streams its samples in bounded chunks: astronomical
        # counts (the theory preset's) are representable, and a budget stops them
        # before the first decision rather than after memory runs out.
        params = lca.Params.practical(N, 3, 0.1, score, leaf)
        with pytest.raises(lca.BudgetExceeded) as stop:
            lca.Reconstructor(F, params).answer_many(np.ones((1, N), dtype=np.int8), 1,
                                                     max_queries=10 ** 6)
        assert stop.value.queries == 0

    @FEW
    @given(st.integers(2 ** 63 // 128 + 1, 2 ** 70))  # above max_search_samples(8)
    def test_demo_pairs_is_one_line_naming_it(self, pairs):
        code, _, err = run_cli(["demo", "--n", "8", "--leaves", "4", "--pairs", str(pairs),
                                "--queries", "1", "--quiet"])
        errors = [line for line in err.splitlines() if "error:" in line]
        assert code == 2 and len(errors) == 1 and "argument --pairs:" in errors[0], err


# -- huge numbers in real-valued parameters are ValueErrors -------------------

def _pool(**kwargs):
    return lca.parallel.ReplicaPool(F, PARAMS, **kwargs)


REAL_PARAMETERS = {
    # label: (call with the value, name the message must use)
    "Params.efficient eps": (lambda v: lca.Params.efficient(8, eps=v), "'eps'"),
    "Params.efficient delta": (lambda v: lca.Params.efficient(8, delta=v), "'delta'"),
    "Params.practical noise_rate": (lambda v: lca.Params.practical(8, 3, v, 4, 4),
                                    "'noise_rate'"),
    "Params tau": (lambda v: lca.Params(8, 3, 0.1, 4, 4, tau=v), "'tau'"),
    "Params requested_noise_rate": (lambda v: lca.Params(8, 3, 0.1, 4, 4,
                                                         requested_noise_rate=v),
                                    "'requested_noise_rate'"),
    "Params.guaranteed tau": (lambda v: lca.Params.guaranteed(8, 3, 0.1, v, 0.1, 0.1),
                              "'tau'"),
    "Params.from_theory eps": (lambda v: lca.Params.from_theory(4, v, 0.1, 8), "'eps'"),
    "Params.from_theory constants": (lambda v: lca.Params.from_theory(
        4, 0.1, 0.1, 8, lca.TheoryConstants(depth=v)), "'constants.depth'"),
    "params_for_measure relation_constant": (lambda v: lca.measures.params_for_measure(
        "depth", 2, 0.1, 0.1, 8, relation_constant=v), "'relation_constant'"),
    "answer_many time_limit": (lambda v: lca.Reconstructor(F, PARAMS).answer_many(
        np.ones((1, N), dtype=np.int8), 1, time_limit=v), "'time_limit'"),
    "ReplicaPool task_timeout": (lambda v: _pool(task_timeout=v), "'task_timeout'"),
    "answer_parallel task_timeout": (lambda v: lca.parallel.answer_parallel(
        F, PARAMS, np.ones((1, N), dtype=np.int8), 1, task_timeout=v), "'task_timeout'"),
    "tolerant_test threshold_factor": (lambda v: tester.tolerant_test(
        F, **dict(TEST_KWARGS, threshold_factor=v)), "'threshold_factor'"),
    "tolerant_test eps": (lambda v: tester.tolerant_test(F, **dict(TEST_KWARGS, eps=v)),
                          "'eps'"),
    "hoeffding_samples delta": (lambda v: tester.hoeffding_samples(0.1, v), "'delta'"),
    "epsilon_grid c": (lambda v: tester.epsilon_grid(0.1, v), "'c'"),
    "build_dt gamma": (lambda v: tester.build_dt(lca.targets.parity(3, 1, 1), 2, 1, v,
                                                 distance_estimator=tester.ExactDistance()),
                       "'gamma'"),
    "noise_sensitivity p": (lambda v: exact.noise_sensitivity(F, v), "'p'"),
    "scores p": (lambda v: exact.scores(F, v), "'p'"),
    "with_label_noise rate": (lambda v: lca.targets.with_label_noise(F, v, 1), "'rate'"),
}
HUGE_REAL = st.one_of(st.integers(10 ** 309, 10 ** 500), st.integers(-10 ** 500, -10 ** 309),
                      st.builds(Fraction, st.integers(10 ** 309, 10 ** 400)),
                      st.just(2 ** 1024))


class TestHugeReals:
    @settings(BOUNDARY, max_examples=120)
    @given(st.sampled_from(sorted(REAL_PARAMETERS)), HUGE_REAL)
    def test_a_number_beyond_floats_is_a_value_error_naming_the_parameter(self, label,
                                                                          value):
        call, name = REAL_PARAMETERS[label]
        with pytest.raises(ValueError) as error:
            call(value)
        assert name in str(error.value), (label, str(error.value))


# -- one rule for progress flags ----------------------------------------------

NOT_BOOL = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.floats(),
                     st.sampled_from([np.True_, np.False_, "yes", 1, 0]))
ONE_ROW = np.ones((1, N), dtype=np.int8)
PROGRESS = {
    "Reconstructor.answer_many": lambda v: lca.Reconstructor(F, PARAMS).answer_many(
        ONE_ROW, 1, progress=v),
    "Reconstructor.explain": lambda v: lca.Reconstructor(F, PARAMS).explain(
        ONE_ROW[0], 1, progress=v),
    "Reconstructor.materialize": lambda v: lca.Reconstructor(F, PARAMS).materialize(
        1, progress=v),
    "ReplicaPool.answer": lambda v: _pool().answer(ONE_ROW, 1, progress=v),
    "answer_parallel": lambda v: lca.parallel.answer_parallel(F, PARAMS, ONE_ROW, 1,
                                                              progress=v),
    "check_consistency": lambda v: consistency.check_consistency(F, PARAMS, seed=1,
                                                                 progress=v),
}


class TestProgressFlags:
    @settings(BOUNDARY, max_examples=80)
    @given(st.sampled_from(sorted(PROGRESS)), NOT_BOOL)
    def test_anything_but_a_bool_is_a_type_error(self, owner, value):
        # Checked before any worker starts: nothing spawns here.
        with pytest.raises(TypeError, match=rf"^The 'progress' parameter of {owner} must "
                                            r"be a bool\. Got .* instead\.$"):
            PROGRESS[owner](value)

    @FEW
    @given(st.booleans())
    def test_bools_are_accepted_and_change_nothing(self, progress):
        rec = lca.Reconstructor(F, PARAMS)
        with contextlib.redirect_stderr(io.StringIO()):
            assert rec.answer_many(ONE_ROW, 1, progress=progress).tolist() == \
                lca.Reconstructor(F, PARAMS).answer_many(ONE_ROW, 1).tolist()


# -- the command line --------------------------------------------------------

SMALL_DEMO = ["demo", "--n", "8", "--leaves", "4", "--queries", "1", "--quiet"]


class TestModeOptions:
    @BOUNDARY
    @given(st.lists(st.sampled_from([("--noise-rate", "0.2"), ("--score-samples", "9")]),
                    min_size=1, max_size=2, unique=True), st.booleans())
    def test_paper_options_in_efficient_mode_are_refused(self, options, explicit):
        argv = SMALL_DEMO + (["--mode", "efficient"] if explicit else [])
        code, _, err = run_cli(argv + [text for pair in options for text in pair])
        given = {option for option, _ in options}
        named = "/".join(option for option in ("--noise-rate", "--score-samples")
                         if option in given)
        assert code == 2 and f"error: argument {named}: sets the paper's estimator" in err

    @BOUNDARY
    @given(ints(1, 10 ** 6))
    def test_efficient_options_in_paper_mode_are_refused(self, pairs):
        code, _, err = run_cli(SMALL_DEMO + ["--mode", "paper", "--pairs", str(pairs)])
        assert code == 2 and "error: argument --pairs: sets the efficient mode's" in err


class TestBenchOptions:
    pytest.importorskip("sklearn")

    @FEW
    @given(st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1,
                   max_size=8).filter(lambda t: "scaling" not in t))
    def test_cases_that_select_nothing_are_refused(self, text):
        from lca.suite import quick_config

        if any(text in case.name for case in quick_config().cases):
            return  # selects something: a valid run, not this test's business
        code, out, err = run_cli(["bench", "--quick", "--cases", text, "--quiet"])
        errors = [line for line in err.splitlines() if "error:" in line]
        assert code == 2 and out == "" and len(errors) == 1, err
        assert errors[0].startswith("lca bench: error: argument --cases: ")

    @BOUNDARY
    @given(st.lists(st.text(st.characters(codec="ascii", categories=["L"]), min_size=1,
                            max_size=6), min_size=1, max_size=3))
    def test_compare_blames_compare(self, names):
        from lca.suite import MODES
        from lca.suite.modes import ALIASES

        if all(name in MODES or name in ALIASES for name in names):
            return
        code, _, err = run_cli(["bench", "--quick", "--compare", ",".join(names), "--quiet"])
        assert code == 2 and "error: argument --compare: The 'compare' parameter" in err, err

    @BOUNDARY
    @given(st.lists(st.integers(1, 10 ** 6), min_size=0, max_size=8))
    def test_a_growth_exponent_needs_enough_sizes(self, sizes):
        from lca.suite import quick_config
        from lca.suite.report import headline_bullets, scaling_summary
        from lca.suite.run import SuiteResult

        row = {"seconds": 0.01, "queries": 100, "floor": 10.0, "internal_nodes": 3}
        result = SuiteResult(quick_config(), ("efficient",), "", [],
                             [{"n": n, "modes": {"efficient": row}} for n in sizes])
        distinct = sorted(set(sizes))
        enough = len(distinct) >= 4 and distinct[-1] >= 100 * distinct[0]
        headline = "\n".join(headline_bullets(result))
        assert bool(scaling_summary(result)) == enough == ("n^" in headline)
        assert ("too few to fit a growth exponent" in headline) == (bool(sizes) and not enough)


# -- exact measures take any real number -------------------------------------

class TestExactReals:
    @BOUNDARY
    @given(st.one_of(st.fractions(0, 1), st.floats(0, 1).map(np.float32),
                     st.floats(0, 1).map(np.float64), st.sampled_from([0, 1, np.int64(1)])))
    def test_any_real_in_range_gives_the_float_answer(self, p):
        np.testing.assert_array_equal(exact.scores(F, p), exact.scores(F, float(p)))
        assert exact.noise_sensitivity(F, p) == exact.noise_sensitivity(F, float(p))

    @BOUNDARY
    @given(st.one_of(st.fractions().filter(lambda v: not 0 <= v <= 1),
                     st.just(math.nan), st.just(Fraction(10 ** 400, 3))))
    def test_out_of_range_names_p(self, p):
        message = rejects(lambda: exact.scores(F, p), "'p'")
        assert message.startswith("The 'p' parameter of scores must be a real number in "
                                  "the range [0.0, 1.0]")


# -- Ctrl-C at any moment of pool.answer -------------------------------------

INTERRUPT_SCRIPT = """
import signal, sys, time
import lca
from lca import derive
from lca.parallel import ReplicaPool


class Slow(lca.Oracle):
    def __init__(self):
        self.inner, self.n, self.name = lca.targets.parity(16, 2, 1), 16, "slow"

    def query(self, points):
        time.sleep(0.05)  # answering takes several seconds: every drawn moment falls in it
        return self.inner.query(points)


if __name__ == "__mp_main__":
    time.sleep(1.0)  # a starting worker runs this first: widen the start-up window

if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    params = lca.Params.practical(n=16, depth=6, noise_rate=0.1, score_samples=20,
                                  leaf_samples=20)
    points = derive.sample_points(1, "interrupt", 16, 3000)
    pool = ReplicaPool(Slow(), params, workers=2)
    print("ready", flush=True)
    try:
        pool.answer(points, 7)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    print("workers", len(pool.pids), flush=True)
"""


class TestInterrupts:
    @settings(BOUNDARY, max_examples=5)
    @given(delay=st.floats(0.0, 2.5))
    def test_ctrl_c_at_any_moment_leaves_no_worker_traceback(self, delay, tmp_path_factory):
        """SIGINT to the whole process group (as a terminal sends it), at a drawn moment
        of start-up (about the first 1.3 s) or answering (the next 5 s): only the
        parent reacts, and no worker is left."""
        script = tmp_path_factory.mktemp("interrupt") / "interrupt.py"
        script.write_text(INTERRUPT_SCRIPT)
        _, out, err = interrupt_group(script, "ready", delay)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        assert out.splitlines() == ["interrupted", "workers 0"], out


# -- the public surface -----------------------------------------------------

INTERNAL = {"params": ["check_int", "check_real", "check_noise_rate", "finite", "grid_rate",
                       "hoeffding_counts", "adaptive_delta", "check_theory_overrides"],
            "reconstruct": ["check_seed", "progress_bar", "split_rows"],
            "estimate": ["query", "chunk_rows"],
            "export": ["tree_from_decisions"],
            "tester": ["add_test_command"]}
SUBMODULES = ["consistency", "derive", "distributed", "estimate", "exact", "export",
              "measures", "models", "oracle", "parallel", "params", "reconstruct", "search",
              "targets", "tester", "testing"]


class TestPublicSurface:
    def test_every_name_lca_promises_is_there_in_a_fresh_interpreter(self):
        import subprocess
        import sys

        check = ("import lca; missing = [n for n in lca.__all__ if not hasattr(lca, n)]; "
                 "hidden = sorted(set(lca.__all__) - set(dir(lca))); "
                 "print(missing, hidden, 'distributed' in lca.__all__, "
                 "'suite' in lca.__all__)")
        done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                              timeout=120)
        assert done.stdout.strip() == "[] [] True True", done.stdout + done.stderr

    @pytest.mark.parametrize("name", SUBMODULES)
    def test_submodules_export_only_what_they_have_and_no_internal_helpers(self, name):
        import importlib

        module = importlib.import_module(f"lca.{name}")
        assert all(hasattr(module, item) for item in module.__all__)
        assert not set(INTERNAL.get(name, ())) & set(module.__all__)
        assert not [item for item in module.__all__ if item.startswith("_")]

    def test_search_exports_every_purpose(self):
        from lca import search

        assert {"PAIRS", "ORDER", "LEAF", "FLIP"} <= set(search.__all__)

    @settings(BOUNDARY, max_examples=150)
    @given(st.data())
    def test_one_message_style(self, data):
        """Every int, real, flag and seed check reads the same way."""
        owner, name, call, bad = data.draw(st.sampled_from(STYLE_CASES))
        value = data.draw(bad)
        try:
            call(value)
        except (TypeError, ValueError) as error:
            assert re.fullmatch(
                rf"The '{re.escape(name)}' parameter of {re.escape(owner)} must be "
                r"(an int in the range \[-?\d+, [^\]\)]+[\]\)]|a real number in the range "
                r"[\(\[][^ ]+, [^ ]+[\)\]]|a bool)( or None)?\. Got .+ instead\.( .+)?",
                str(error), re.S), str(error)
        else:
            raise AssertionError(f"{owner}({name}={value!r}) was accepted")


def _style(owner, name, call, bad):
    return owner, name, call, bad


STYLE_CASES = [
    _style("Params", "depth", lambda v: lca.Params(8, v, 0.1, 4, 4), bad_int(0)),
    _style("Params.efficient", "pairs", lambda v: lca.Params.efficient(8, pairs=v),
           bad_int(1)),
    _style("Params.efficient", "eps", lambda v: lca.Params.efficient(8, eps=v),
           bad_real(0.0, 1.0)),
    _style("Reconstructor", "cache_size", lambda v: lca.Reconstructor(F, PARAMS,
                                                                      cache_size=v),
           bad_int(0)),
    _style("Reconstructor", "record", lambda v: lca.Reconstructor(F, PARAMS, record=v),
           NOT_BOOL),
    _style("Reconstructor.answer_many", "seed", lambda v: lca.Reconstructor(
        F, PARAMS).answer_many(ONE_ROW, v), BAD_SEED),
    _style("Reconstructor.answer_many", "max_queries", lambda v: lca.Reconstructor(
        F, PARAMS).answer_many(ONE_ROW, 1, max_queries=v),
        bad_int(0).filter(lambda v: v is not None)),
    _style("Reconstructor.materialize", "max_decisions", lambda v: lca.Reconstructor(
        F, PARAMS).materialize(1, max_decisions=v), bad_int(1)),
    _style("ReplicaPool", "workers", lambda v: _pool(workers=v), bad_int(1)),
    _style("ReplicaPool", "batch_size", lambda v: _pool(batch_size=v),
           bad_int(1).filter(lambda v: v is not None)),
    _style("ReplicaPool.answer", "chunk_size", lambda v: _pool().answer(
        ONE_ROW, 1, chunk_size=v), bad_int(1).filter(lambda v: v is not None)),
    _style("opt_size", "s", lambda v: exact.opt_size(F, v), bad_int(1)),
    _style("opt_depth", "return_tree", lambda v: exact.opt_depth(F, 1, return_tree=v),
           NOT_BOOL),
    _style("noise_sensitivity", "p", lambda v: exact.noise_sensitivity(F, v),
           bad_real(0.0, 1.0, open_low=False, open_high=False)),
    _style("random_tree", "leaves", lambda v: lca.targets.random_tree(5, v, 1), bad_int(1)),
    _style("parity", "seed", lambda v: lca.targets.parity(5, 2, v), BAD_SEED),
    _style("from_callable", "n", lambda v: lca.from_callable(_constant(1), v), bad_int(1)),
    _style("tolerant_test", "seed", lambda v: tester.tolerant_test(
        F, **dict(TEST_KWARGS, seed=v)), BAD_SEED),
    _style("sample_points", "count", lambda v: derive.sample_points(1, "x", 3, v),
           bad_int(0)),
    _style("check_consistency", "workers", lambda v: consistency.check_consistency(
        F, PARAMS, seed=1, workers=v), bad_int(1)),
]

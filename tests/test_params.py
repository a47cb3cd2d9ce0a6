"""Params: presets, grid rounding, validation messages."""

import math
import pickle

import pytest

from lca import Params, TheoryConstants
from lca.measures import params_for_measure
from lca.params import hoeffding_counts


class TestPractical:
    def test_noise_rate_is_the_effective_grid_value(self):
        params = Params.practical(n=1000, depth=12, noise_rate=0.1, score_samples=1000,
                                  leaf_samples=500)
        assert params.noise_rate == 3277 / 2 ** 15
        assert params.requested_noise_rate == 0.1
        assert params.noise_threshold == 3277
        assert params.predicted_queries == 12 * 2000 + 500
        text = params.describe()
        for needle in ("depth d               12", "0.100006", "24500", "practical"):
            assert needle in text

    def test_equal_params_are_equal_and_pickle(self):
        a = Params.practical(100, 5, 0.2, 10, 10)
        assert a == Params.practical(100, 5, 0.2, 10, 10)
        assert pickle.loads(pickle.dumps(a)) == a
        with pytest.raises(AttributeError):
            a.depth = 4  # frozen

    def test_params_differing_only_in_their_constants_differ(self):
        # The constants fix no sample count here, but they decide the stated guarantee.
        fields = dict(n=10, depth=3, noise_rate=0.1, score_samples=10, leaf_samples=10,
                      preset="theory")
        assert Params(**fields, constants=TheoryConstants()) != Params(
            **fields, constants=TheoryConstants(1.0, 1.0, 0.5))

    def test_guaranteed_is_fixed_mode_unless_asked(self):
        assert not Params.guaranteed(100, 5, 0.1, 0.1, 0.1, 0.1).adaptive

    def test_adaptive_caps_are_sized_for_half_of_delta(self):
        # The anytime bounds spend delta/2; the caps are fixed mode's at delta/2.
        adaptive = Params.guaranteed(100, 5, 0.1, 0.1, 0.1, 0.1, adaptive=True)
        assert (adaptive.score_samples, adaptive.leaf_samples) == hoeffding_counts(
            100, 5, 0.1, 0.1, 0.05)

    def test_the_efficient_preset_has_the_documented_defaults(self):
        # docs/randomness.md §6 states them for implementers.
        params = Params.efficient(100)
        assert (params.depth, params.score_samples, params.first_round, params.leaf_samples,
                params.eps, params.delta, params.lookahead) == (12, 64, 64, 64, 0.05, 0.05, 1)


class TestTheory:
    def test_formulas(self):
        params = Params.from_theory(16, 0.1, 0.01, 1000)
        log_s = 4.0
        # Default constants c_d = 2, c_p = 1, c_tau = 1/2 (docs/theory.md §1).
        depth = math.ceil(2 * log_s ** 3 / 0.1 ** 3)
        tau = 0.5 * 0.1 ** 3 / log_s ** 3
        log_nodes = (depth + 2) * math.log(2) - math.log(0.01)
        assert params.depth == depth == 128000
        assert params.tau == pytest.approx(tau)
        assert params.score_samples == math.ceil(8 / tau ** 2 * (math.log(1000) + log_nodes))
        assert params.leaf_samples == math.ceil(32 / 0.1 ** 2 * log_nodes)
        assert params.requested_noise_rate == pytest.approx(0.025)
        assert params.path_length == 1000
        assert "theory" in params.describe() and "paths stop at n = 1000" in params.describe()

    def test_default_constants_give_the_proof_progress(self):
        # The potential drops by (c_p - c_tau) eps^3 / L^3 per level and starts
        # in [0, 1/2] (Phi_0 = NS_p(f)): the proof needs c_tau < c_p and c_d (c_p - c_tau) >= 1/2;
        # the defaults give 1.
        constants = TheoryConstants()
        assert constants.tau < constants.noise
        assert constants.depth * (constants.noise - constants.tau) >= 1

    def test_constants_scale(self):
        small = Params.from_theory(16, 0.1, 0.01, 1000,
                                   TheoryConstants(depth=0.001, noise=2.0, tau=10.0))
        assert small.depth == 64
        assert small.requested_noise_rate == pytest.approx(0.05)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(n=0), ValueError,
     r"The 'n' parameter of Params must be an int in the range \[1, 2\*\*31 - 1\]. Got 0 instead."),
    (dict(depth=-1), ValueError, r"'depth' parameter of Params .* Got -1 instead"),
    (dict(depth=2.5), TypeError, r"'depth' parameter of Params .* Got 2.5 instead"),
    (dict(depth=True), TypeError, r"'depth' parameter .* Got True instead"),
    (dict(noise_rate=0.0), ValueError,
     r"'noise_rate' parameter of Params must be a real number in the range \(0.0, 1.0\]. Got 0.0"),
    (dict(noise_rate=1.5), ValueError, r"'noise_rate' .* Got 1.5"),
    (dict(noise_rate="0.1"), TypeError, r"'noise_rate' .* Got '0.1'"),
    (dict(noise_rate=1e-6), ValueError, r"noise rate 1e-06 rounds to 0/2\*\*15"),
    (dict(score_samples=0), ValueError, r"'score_samples' .* Got 0"),
    (dict(leaf_samples=None), TypeError, r"'leaf_samples' .* Got None"),
])
def test_practical_validation(kwargs, error, match):
    base = dict(n=10, depth=3, noise_rate=0.1, score_samples=10, leaf_samples=10)
    with pytest.raises(error, match=match):
        Params.practical(**{**base, **kwargs})


@pytest.mark.parametrize("args, error, match", [
    ((1, 0.1, 0.1, 10), ValueError,
     r"'s' parameter of Params.from_theory must be an int in the range \[2, inf\). Got 1"),
    ((16, 0.5, 0.1, 10), ValueError,
     r"'eps' parameter of Params.from_theory .* \(0.0, 0.5\). Got 0.5"),
    ((16, 0.1, 1.0, 10), ValueError, r"'delta' .* Got 1.0"),
    ((16, 0.1, 0.1, 0), ValueError, r"'n' .* Got 0"),
])
def test_theory_validation(args, error, match):
    with pytest.raises(error, match=match):
        Params.from_theory(*args)


def test_theory_constants_validation():
    with pytest.raises(ValueError, match=r"'constants.tau' .* Got -1"):
        Params.from_theory(16, 0.1, 0.1, 10, TheoryConstants(tau=-1))
    with pytest.raises(TypeError, match="must be a TheoryConstants"):
        Params.from_theory(16, 0.1, 0.1, 10, constants=(1, 1, 1))


class TestDescribeGuarantee:
    """describe() states the guarantee each preset has, and no more (docs/theory.md)."""

    def test_theory_preset_states_the_proof_bound(self):
        # p = eps / log2 s = 0.025 rounds down to 819 / 2^15: the proof's 8 p L / eps
        # + 3 is 8 * (819 / 2^15) * 4 / 0.1 + 3 = 10.998, not 11 (docs/theory.md §1).
        theory = Params.from_theory(16, 0.1, 0.01, 100)
        assert theory.noise_rate == 819 / 2**15
        assert ("dist(T, f) <= 20 opt_s + 10.998 eps w.p. >= 1-delta (11 eps at the "
                "requested p; docs/theory.md)") in theory.describe()
        adaptive = Params.from_theory(16, 0.1, 0.01, 100, adaptive=True)
        assert ("dist(T, f) <= 20 opt_s + 11.998 eps w.p. >= 1-delta (12 eps at the "
                "requested p") in adaptive.describe()
        # A rate on the grid: the requested constant exactly (p = 0.25 / 2 = 2^12 / 2^15).
        exact = Params.from_theory(4, 0.25, 0.01, 10)
        assert exact.noise_rate == 0.125 and "20 opt_s + 11 eps w.p." in exact.describe()
        measure = params_for_measure("deg", 2, 0.1, 0.01, 100)
        used = 8 * measure.noise_rate / measure.requested_noise_rate + 3
        assert f"22 opt_d + {used:.6g} eps" in measure.describe()

    def test_constants_outside_the_proof_claim_nothing(self):
        old_defaults = TheoryConstants(depth=1.0, noise=1.0, tau=1.0)
        assert not old_defaults.proof_holds and TheoryConstants().proof_holds
        # c_d (c_p - c_tau) >= 1/2 with c_tau < c_p (Phi_0 = NS_p(f) <= 1/2).
        assert TheoryConstants(depth=1.0, noise=1.0, tau=0.5).proof_holds
        assert not TheoryConstants(depth=0.99, noise=1.0, tau=0.5).proof_holds
        assert TheoryConstants(depth=0.5, noise=1.0, tau=0.0).proof_holds
        assert not TheoryConstants(depth=100.0, noise=0.5, tau=0.5).proof_holds
        text = Params.from_theory(16, 0.1, 0.01, 100, old_defaults).describe()
        assert "guarantee             none" in text and "opt" not in text

    def test_the_depth_version_checks_its_own_condition(self):
        # c_d (c_p - c_tau) >= max(c_p, 1) (docs/theory.md §2): the defaults meet it with
        # equality; c_d = 1 meets the size version's 1/2 but not this one.
        assert TheoryConstants().depth_proof_holds
        halved = TheoryConstants(depth=1.0, noise=1.0, tau=0.5)
        assert halved.proof_holds and not halved.depth_proof_holds
        assert not TheoryConstants(depth=1.99, noise=1.0, tau=0.5).depth_proof_holds
        # c_p > 1: the bound is c_p, not 1 (4 * (2 - 1.5) = 2 = c_p).
        assert TheoryConstants(depth=4.0, noise=2.0, tau=1.5).depth_proof_holds
        assert not TheoryConstants(depth=3.99, noise=2.0, tau=1.5).depth_proof_holds
        assert not TheoryConstants(depth=100.0, noise=0.5, tau=0.5).depth_proof_holds
        plan = params_for_measure("depth", 2, 0.1, 0.05, 20, constants=halved)
        assert plan.depth == 800  # the argument needs 1,600 levels
        assert ("guarantee             none: the constants miss the proof's conditions "
                "(c_tau < c_p, c_d (c_p - c_tau) >= max(c_p, 1), p unclipped)"
                ) in plan.describe()
        # The size version with the same constants keeps its guarantee.
        assert "20 opt_s + " in Params.from_theory(16, 0.1, 0.05, 20, halved).describe()
        assert "22 opt_d + " in params_for_measure("depth", 2, 0.1, 0.05, 20).describe()

    def test_the_theory_rate_must_reach_the_noise_grid(self):
        # p = c_p eps / log2 s must round to T >= 1 on the grid T / 2^15 (s = 2: p = c_p eps).
        def built(rate):
            return Params.from_theory(2, 0.1, 0.05, 10, TheoryConstants(2.0, rate / 0.1, 0.01))

        assert built(1.5 * 2 ** -16).noise_threshold == 1  # 0.75 rounds to 1
        with pytest.raises(ValueError, match=r"p = min\(1, c_p eps / log2 s\) = 1\.37e-05 "
                                             r"rounds to 0 on the grid T / 2\*\*15"):
            built(0.9 * 2 ** -16)

    def test_a_tau_that_underflows_is_refused(self):
        with pytest.raises(ValueError, match=r"tau = c_tau eps\^3 / \(log2 s\)\^3 underflows "
                                             r"to 0"):
            Params.from_theory(2, 0.1, 0.05, 10, TheoryConstants(2.0, 1.0, 5e-324))

    def test_a_clipped_rate_or_no_constants_claim_nothing(self):
        # p = min(1, c_p eps / L) at 1 is not c_p eps / L: the proof's drop is gone.
        clipped = Params.from_theory(2, 0.1, 0.05, 20, TheoryConstants(2.0, 20.0, 0.5))
        assert clipped.requested_noise_rate == 1.0
        assert "guarantee             none" in clipped.describe()
        bare = Params(n=10, depth=3, noise_rate=0.1, score_samples=10, leaf_samples=10,
                      preset="theory")
        assert "guarantee             none" in bare.describe()

    def test_guaranteed_and_practical_claim_no_error_bound(self):
        assert "no error bound by itself" in Params.guaranteed(100, 5, 0.1, 0.1, 0.1,
                                                               0.1).describe()
        assert "determinism and consistency only" in Params.practical(10, 3, 0.1, 10,
                                                                      10).describe()


@pytest.mark.parametrize("name, accepted, refused", [
    ("n", [1, 2**31 - 1], [0, 2**31]),
    ("depth", [0, 10**9], [-1]),
    ("first_round", [1], [0]),
    ("lookahead", [1, 8], [0, 9]),
    ("size", [1], [0]),
    ("s", [2], [1]),
    ("requested_noise_rate", [1e-12, 1.0], [0.0, 1.0 + 1e-12]),
    ("tau", [1e-12, 1 - 1e-12], [0.0, 1.0]),
    ("eps", [1e-12, 1 - 1e-12], [0.0, 1.0]),
    ("delta", [1e-12, 1 - 1e-12], [0.0, 1.0]),
])
def test_each_parameter_is_constrained_in_one_table_at_its_edges(name, accepted, refused):
    from lca.params import PARAMETER_CONSTRAINTS, checked
    assert name in PARAMETER_CONSTRAINTS
    for value in accepted:
        assert checked("Owner", name, value) == value
    for value in refused:
        with pytest.raises(ValueError, match=rf"The '{name}' parameter of Owner must be"):
            checked("Owner", name, value)


@pytest.mark.parametrize("make, owner", [
    (lambda: Params.efficient(2**31), "Params.efficient"),
    (lambda: Params.guaranteed(2**31, 3, 0.1, 0.1, 0.1, 0.1), "Params.guaranteed"),
    (lambda: Params.from_theory(16, 0.1, 0.1, 2**31), "Params.from_theory"),
    (lambda: Params.practical(2**31, 3, 0.1, 10, 10), "Params"),
])
def test_every_constructor_checks_the_table_under_its_own_name(make, owner):
    with pytest.raises(ValueError, match=rf"The 'n' parameter of {owner} must be an int in "
                                         r"the range \[1, 2\*\*31 - 1\]"):
        make()


# -- lookahead: how a search batches its questions, not part of the tree --------------------

@pytest.mark.parametrize("make, error, match", [
    (lambda: Params.efficient(100, lookahead=0), ValueError,
     r"^The 'lookahead' parameter of Params.efficient must be an int in the range \[1, 8\]\. "
     r"Got 0 instead\.$"),
    (lambda: Params.efficient(100, lookahead=9), ValueError,
     r"^The 'lookahead' parameter of Params.efficient must be an int in the range \[1, 8\]\. "
     r"Got 9 instead\.$"),
    (lambda: Params.efficient(100, lookahead=2.0), TypeError,
     r"^The 'lookahead' parameter of Params.efficient must be an int in the range \[1, 8\]\. "
     r"Got 2\.0 instead\.$"),
    (lambda: Params(n=10, depth=3, noise_rate=0.1, score_samples=10, leaf_samples=10,
                    lookahead=True), TypeError,
     r"^The 'lookahead' parameter of Params must be an int in the range \[1, 8\]\. "
     r"Got True instead\.$"),
    (lambda: Params(n=10, depth=3, noise_rate=0.1, score_samples=10, leaf_samples=10,
                    lookahead=0), ValueError,
     r"^The 'lookahead' parameter of Params must be an int in the range \[1, 8\]\. "
     r"Got 0 instead\.$"),
])
def test_lookahead_is_validated_under_each_constructors_name(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_lookahead_is_kept_by_every_copy_and_left_out_of_every_record():
    import copy
    import dataclasses

    import lca

    params = Params.efficient(100, depth=6, lookahead=3)
    assert params.lookahead == 3 and Params.efficient(100, depth=6).lookahead == 1
    # Copies keep it: pickling (pool workers get Params and Reconstructors pickled),
    # copy, deepcopy and dataclasses.replace.
    for copied in (pickle.loads(pickle.dumps(params)), copy.copy(params),
                   copy.deepcopy(params), dataclasses.replace(params, depth=7),
                   pickle.loads(pickle.dumps(lca.Reconstructor(
                       lca.targets.parity(100, 3, seed=1), params))).params):
        assert copied.lookahead == 3
    assert dataclasses.replace(params, lookahead=2).lookahead == 2
    # It fixes nothing of the tree: equal Params build the same tree, and the field
    # records (known answers, saved trees, /describe) read back as lookahead 1.
    assert params == Params.efficient(100, depth=6)
    assert hash(params) == hash(Params.efficient(100, depth=6))
    fields = dataclasses.asdict(params)
    assert "lookahead" not in fields and "lookahead" not in repr(params)
    again = Params(**fields)
    assert again == params and again.lookahead == 1
    assert Params(**fields, lookahead=3).lookahead == 3


def test_the_score_estimator_ignores_lookahead():
    base = dict(n=100, depth=5, noise_rate=0.1, score_samples=10, leaf_samples=10)
    assert Params(**base, lookahead=5).max_node_queries == Params(**base).max_node_queries \
        == 20
    assert Params(**base, lookahead=5).describe() == Params(**base).describe()

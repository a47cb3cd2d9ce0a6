"""The benchmark suite: quick mode end to end, its statistics, the peer's tuning."""

import argparse
import dataclasses
import json
import math

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from lca import derive, exact, suite, targets  # noqa: E402

# -- quick mode end to end ---------------------------------------------------


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    config = suite.quick_config()
    # Every registered mode this lca has, side by side.
    factories, note = suite.resolve_modes(",".join(suite.MODES), config)
    result = suite.run_suite(config, factories, note=note, jobs=1, progress=False)
    img = tmp_path_factory.mktemp("img")
    plots = suite.make_plots(result, str(img))
    return result, suite.render_markdown(result, img_rel="img"), plots


def _all_errors(case):
    for ours in case["ours"].values():
        yield ours["err_f"]
        yield ours["err_clean"]
    for row in case["peer"]["rows"]:
        yield row["err_f"]
        yield row["err_clean"]


class TestQuickRun:
    def test_every_case_and_mode_ran(self, quick):
        result, _, _ = quick
        assert not result.failures
        assert [c["case"] for c in result.cases] == [c.name for c in result.config.cases]
        expected_modes = tuple(name for name, mode in suite.MODES.items() if mode.available())
        assert result.modes == expected_modes
        for case in result.cases:
            assert tuple(case["ours"]) == expected_modes
        assert [row["n"] for row in result.scaling] == list(result.config.scaling_sizes)

    def test_markdown_has_the_tables_and_columns(self, quick):
        result, text, _ = quick
        for section in ("## Headline", "## Where the peer wins", "## Settings",
                        "## Grid that ran, and why", "## Accuracy", "## Cost",
                        "## The peer: error at each N", "## Crossover", "## Scaling",
                        "## Plots"):
            assert section in text
        for columns in (suite.ACCURACY_COLUMNS, suite.COST_COLUMNS,
                        suite.CROSSOVER_COLUMNS):
            assert "| " + " | ".join(columns) + " |" in text
        for case in result.config.cases:
            assert f"| {case.spec.key} | {case.n} | {case.noise:g} |" in text
        # The quick grid's 3 scaling sizes within one decade are too few for a fit.
        assert "Fitted growth exponents" not in text and "n^" not in text
        assert "too few to fit a growth exponent (a fit needs 4 or more sizes spanning " \
            "100× or more)" in text
        assert "img/suite_scaling.png" in text

    def test_errors_are_proportions_with_intervals_around_them(self, quick):
        result, _, _ = quick
        for case in result.cases:
            for error in _all_errors(case):
                assert 0.0 <= error["low"] <= error["value"] <= error["high"] <= 1.0
                assert error["points"] == result.config.eval_points

    def test_costs_are_consistent(self, quick):
        result, _, _ = quick
        config = result.config
        for case in result.cases:
            depth = config.depth_for(case["n"])
            for mode, ours in case["ours"].items():
                answers = [c["answers"] for c in ours["cumulative"]]
                queries = [c["queries"] for c in ours["cumulative"]]
                assert answers == list(config.answer_counts)
                assert queries == sorted(queries) and queries[0] == ours["first_queries"]
                assert ours["floor"] == pytest.approx(
                    ours["first_internal_nodes"] * math.log2(case["n"]))
                # Modes with early leaves may stop at the root.
                assert (1 if mode == "fixed" else 0) <= ours["max_depth"] <= depth
                assert 0 <= ours["mean_depth"] <= ours["max_depth"]
                assert ours["nodes_built"] < 2 ** depth
                assert ours["leaves_built"] <= 2 ** depth
                if mode == "fixed":
                    params = suite.fixed_params(case["n"], config=config)
                    assert ours["first_queries"] == params.predicted_queries
                    assert ours["first_internal_nodes"] == depth == ours["max_depth"]
                else:
                    assert ours["first_queries"] <= queries[-1]

    def test_opt_and_ratio(self, quick):
        result, _, _ = quick
        for case in result.cases:
            opt = case["opt"]
            if case["n"] <= exact.MAX_OPTIMUM_VARIABLES and case["noise"] > 0:
                spec = suite.SPECS[case["key"]]
                clean = spec.build(case["n"], result.config.target_seed)
                f = targets.with_label_noise(clean, case["noise"], result.config.noise_seed)
                assert opt["kind"] == "exact"
                assert opt["value"] == exact.opt_size(f, clean.size).distance
                for ours in case["ours"].values():
                    assert 0 <= ours["exact_err_f"] <= 1
                    assert ours["ratio"] == pytest.approx(ours["exact_err_f"] / opt["value"])
            elif "model" in case:
                # No optimum is computed for a trained model, so its cost is recorded
                # as exactly 0.0 (a fixed value, not a measured time).
                not_computed = {"value": None, "kind": "unknown", "size": None, "seconds": 0.0}
                assert opt == not_computed
                assert all(ours["ratio"] is None for ours in case["ours"].values())
            elif case["noise"] == 0:
                assert opt == {"value": 0.0, "kind": "exact", "size": case["size"],
                               "seconds": 0.0}
                assert all(ours["ratio"] is None for ours in case["ours"].values())
            else:
                assert opt["kind"] == "bound" and opt["value"] == case["noise"]

    def test_peer_grid_respects_the_cap_and_stops_after_matching_or_runs_whole(self, quick):
        result, _, _ = quick
        config = result.config
        for case in result.cases:
            peer = case["peer"]
            sizes = [row["queries"] for row in peer["rows"]]
            assert sizes == list(config.peer_sizes[:len(sizes)])
            assert all(size * case["n"] <= config.peer_entry_cap for size in sizes)
            for row in peer["rows"]:
                assert 1 <= row["leaves"] <= row["grown_leaves"] <= config.peer_max_leaves
                assert row["train"] == row["queries"] - round(row["queries"] *
                                                              config.peer_validation)
            if case["tier"] in config.peer_full_grid_tiers:
                # Held to the peer's best error: the whole grid ran.
                assert len(sizes) == len(config.peer_sizes) or peer["capped"]
                continue
            goal = min(o["err_f"]["value"] for o in case["ours"].values())
            matched = [i for i, row in enumerate(peer["rows"]) if row["err_f"]["value"] <= goal]
            if matched:
                assert len(sizes) <= matched[0] + 2

    def test_high_noise_and_model_tiers_ran(self, quick):
        result, text, _ = quick
        noisy = [case for case in result.cases if case["tier"] == "eta=0.2"]
        assert [(case["noise"], case["opt"]["kind"]) for case in noisy] == [(0.2, "bound")]
        (model,) = [case for case in result.cases if case["tier"] == "models"]
        spec = suite.MODEL_SPECS[model["key"]]
        assert model["n"] == spec.n and model["noise"] == 0
        info = model["model"]
        assert info["bits"] == spec.bits and 0 < info["positive_rate"] < 1
        assert 0.5 < info["train_accuracy"] <= 1
        for ours in model["ours"].values():     # f is the model itself: no noise
            assert ours["err_f"] == ours["err_clean"]
        assert f"| {model['key']} | {model['n']} | {info['dataset']} |" in text
        assert "opt is unknown" in text and "unknown (trained model)" in text

    def test_plots_are_pngs(self, quick):
        _, _, plots = quick
        assert [p.rsplit("/", 1)[-1] for p in plots] == [
            "suite_error_vs_queries.png", "suite_scaling.png", "suite_crossover.png"]
        for path in plots:
            with open(path, "rb") as handle:
                assert handle.read(8) == b"\x89PNG\r\n\x1a\n"

    def test_json_round_trips_to_the_same_report(self, quick):
        result, text, _ = quick
        assert json.loads(result.to_json())["config"] == "quick"
        again = suite.SuiteResult.from_json(result.to_json())
        assert suite.render_markdown(again, img_rel="img") == text


def test_cases_are_deterministic_apart_from_wall_time():
    config = suite.quick_config()
    factories, _ = suite.resolve_modes("fixed", config)
    case = config.cases[0]

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if "seconds" not in k}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    first = suite.run_case(case, config, factories)
    second = suite.run_case(case, config, factories)
    assert strip(first) == strip(second)


# -- the command line ----------------------------------------------------------


def test_bench_command_writes_report_and_json(tmp_path):
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers(dest="command")
    suite.add_bench_command(subparsers)
    out, data = tmp_path / "docs" / "suite.md", tmp_path / "suite.json"
    args = parser.parse_args(["bench", "--quick", "--cases", "tree16-iid", "--jobs", "1",
                              "--quiet", "--out", str(out), "--json", str(data)])
    assert args.run(args) == 0
    text = out.read_text()
    # The default mode is the recommended efficient preset.
    assert args.mode == suite.modes.DEFAULT_MODE == "efficient"
    assert "| tree16-iid | 11 | 0.05 | efficient |" in text and "| fixed |" not in text
    assert (f"Generated by `python scripts/bench_suite.py --quick --cases 'tree16-iid' "
            f"--out {out}`") in text  # the page names where it was written
    assert "## Plots" not in text  # --quick writes no plots unless --img is given
    assert json.loads(data.read_text())["cases"][0]["key"] == "tree16-iid"
    again = tmp_path / "again.md"
    args = parser.parse_args(["bench", "--quick", "--from-json", str(data), "--out", str(again)])
    assert args.run(args) == 0
    assert again.read_text() == text.replace(str(out), str(again))  # but where it went
    args = parser.parse_args(["bench", "--from-json", str(data), "--out", str(again)])
    with pytest.raises(ValueError, match="holds a 'quick' run; pass --quick"):
        args.run(args)


def test_tiers_select_cases_and_unknown_tiers_are_named():
    config = suite.quick_config()
    factories, _ = suite.resolve_modes("fixed", config)
    result = suite.run_suite(config, factories, progress=False, tiers=["eta=0.2"])
    assert [case["case"] for case in result.cases] == ["tree16-iid n=100 eta=0.2"]
    assert result.scaling == []
    with pytest.raises(ValueError, match=r"'tiers' parameter of lca bench .*Got n=5 instead"):
        suite.run_suite(config, factories, progress=False, tiers=["exact", "n=5"])


@pytest.mark.parametrize("value", ["fixed", "fixed,fixed", "efficient,fixed,adaptive"])
def test_bench_command_compare_needs_two_modes(value):
    args = suite.configure_parser(argparse.ArgumentParser()).parse_args(["--compare", value])
    with pytest.raises(ValueError, match="'--compare' parameter of lca bench must name two"):
        suite.run_bench_command(args)


def test_lca_bench_reports_an_unknown_mode(capsys):
    from lca.cli import main

    assert main(["bench", "--quick", "--mode", "fixed,turbo", "--quiet"]) == 2
    assert "'mode' parameter of lca bench" in capsys.readouterr().err


@pytest.mark.parametrize("mode, twice", [
    ("efficient,efficient", "'efficient'"),
    ("fixed, fixed", "'fixed'"),
    ("efficient,fixed,efficient", "'efficient'"),
    ("fixed,both", "'fixed'"),                   # through the alias
    ("both,adaptive,fixed", "'fixed', 'adaptive'"),
])
def test_lca_bench_refuses_a_mode_named_twice(capsys, mode, twice):
    from lca.cli import main

    assert main(["bench", "--quick", "--mode", mode, "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"lca bench: error: argument --mode: The 'mode' parameter of lca bench must name each "
        f"mode once. Got {mode!r} instead (naming {twice} more than once).\n")


def test_lca_bench_names_an_unknown_mode_before_a_repeated_one(capsys):
    from lca.cli import main

    assert main(["bench", "--quick", "--mode", "turbo,turbo", "--quiet"]) == 2
    assert "comma-separated list of 'fixed', 'adaptive', 'efficient', 'both'. Got " \
        "'turbo,turbo' instead" in capsys.readouterr().err


def test_lca_bench_blames_compare_for_an_unknown_compared_mode(capsys):
    from lca.cli import main

    assert main(["bench", "--quick", "--compare", "bogus,fixed", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "error: argument --compare: The 'compare' parameter of lca bench must be a " \
        "comma-separated list of" in err and "--mode" not in err


@pytest.mark.parametrize("argv, option", [
    (["--cases", "zzz-no-such-case"], "--cases"),
    (["--tiers", "eta=0.2", "--cases", "n=1000"], "--cases/--tiers"),
])
def test_lca_bench_refuses_a_selection_that_runs_nothing(capsys, argv, option):
    from lca.cli import main

    assert main(["bench", "--quick", *argv, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"lca bench: error: argument {option}: The ") and \
        "must select a case or scaling point of the quick grid" in err
    assert err.count("\n") == 0


def test_a_growth_exponent_needs_enough_sizes():
    assert not suite.stats.fits_a_growth([100, 316, 1000])          # the quick grid
    assert not suite.stats.fits_a_growth([100, 200, 300, 900])      # 4 sizes, < 100×
    assert not suite.stats.fits_a_growth([100, 100, 1000, 10_000])  # 3 distinct
    assert suite.stats.fits_a_growth([100, 316, 1000, 10_000])
    assert suite.stats.fits_a_growth(suite.full_config().scaling_sizes)


def test_bench_command_rejects_bad_jobs():
    args = suite.configure_parser(argparse.ArgumentParser()).parse_args(["--jobs", "0"])
    with pytest.raises(ValueError, match="'--jobs' parameter of lca bench"):
        suite.run_bench_command(args)


def test_missing_extra_names_it(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "sklearn", None)
    monkeypatch.setitem(__import__("sys").modules, "sklearn.tree", None)
    with pytest.raises(ImportError, match=r"lca\[bench\]"):
        suite.measure.peer_classifier()


# -- modes ---------------------------------------------------------------------


def _without(monkeypatch, name):
    """Pretend this lca lacks mode ``name``."""
    monkeypatch.setitem(suite.MODES, name, dataclasses.replace(suite.MODES[name],
                                                                available=lambda: False))


class TestResolveModes:
    def test_fixed(self):
        factories, note = suite.resolve_modes("fixed", suite.quick_config())
        assert list(factories) == ["fixed"] and note == ""
        assert not getattr(factories["fixed"](100), "adaptive", False)

    @pytest.mark.skipif(not suite.adaptive_available(), reason="no adaptive mode")
    def test_both(self):
        factories, note = suite.resolve_modes("both", suite.quick_config())
        assert list(factories) == ["fixed", "adaptive"] and note == ""
        fixed, adaptive = factories["fixed"](100), factories["adaptive"](100)
        assert adaptive.adaptive and not fixed.adaptive
        assert (adaptive.score_samples, adaptive.leaf_samples, adaptive.depth) == (
            fixed.score_samples, fixed.leaf_samples, fixed.depth)

    def test_both_without_adaptive_runs_fixed_and_says_so(self, monkeypatch):
        _without(monkeypatch, "adaptive")
        factories, note = suite.resolve_modes("both", suite.quick_config())
        assert list(factories) == ["fixed"]
        assert "only fixed mode ran" in note

    def test_adaptive_without_adaptive_raises(self, monkeypatch):
        _without(monkeypatch, "adaptive")
        with pytest.raises(ValueError, match="no adaptive mode"):
            suite.resolve_modes("adaptive", suite.quick_config())

    def test_unknown_mode(self):
        with pytest.raises(ValueError, match="'mode' parameter of lca bench"):
            suite.resolve_modes("fast", suite.quick_config())
        with pytest.raises(ValueError, match=r"of 'fixed', 'adaptive', 'efficient', 'both'. "
                                             r"Got 'fixed,fast' instead"):
            suite.resolve_modes("fixed,fast", suite.quick_config())

    @pytest.mark.parametrize("text,names", [
        ("fixed", ("fixed",)),
        ("both", ("fixed", "adaptive")),
        ("efficient,fixed", ("efficient", "fixed")),
        (" fixed , both ", ("fixed", "adaptive")),     # spaces and duplicates dropped
        (("adaptive", "fixed"), ("adaptive", "fixed")),
    ])
    def test_lists_and_aliases(self, text, names):
        assert suite.parse_modes(text) == names

    def test_lists_keep_the_requested_order_and_drop_missing_modes(self, monkeypatch):
        _without(monkeypatch, "efficient")
        factories, note = suite.resolve_modes("efficient,fixed", suite.quick_config())
        assert list(factories) == ["fixed"]
        assert note == ("--mode efficient,fixed: this lca has no efficient mode "
                        "(no lca.Params.efficient), so only fixed mode ran.")
        with pytest.raises(ValueError, match=r"--mode efficient: this lca has no efficient"):
            suite.resolve_modes("efficient", suite.quick_config())

    def test_every_registered_mode_builds_params_for_its_config(self):
        config = suite.quick_config()
        for name, mode in suite.MODES.items():
            if mode.available():
                params = mode.factory(100, config=config)
                assert params.n == 100 and params.depth == config.depth_for(100), name


# -- statistics ----------------------------------------------------------------


class TestWilsonInterval:
    @pytest.mark.parametrize("errors,total", [(0, 10), (10, 10), (3, 10), (500, 10_000),
                                              (1, 1), (0, 1)])
    def test_contains_the_estimate_inside_unit_interval(self, errors, total):
        low, high = suite.wilson_interval(errors, total)
        assert 0.0 <= low <= errors / total <= high <= 1.0

    def test_known_value(self):
        # 0 of 10 at 95%: upper bound z^2 / (n + z^2).
        z2 = 1.959963984540054 ** 2
        assert suite.wilson_interval(0, 10) == pytest.approx((0.0, z2 / (10 + z2)))

    def test_rejects_empty(self):
        with pytest.raises(ValueError, match="total must be positive"):
            suite.wilson_interval(0, 0)


CUMULATIVE = [(1, 1000), (10, 5000), (100, 20_000), (1000, 50_000)]


@pytest.mark.parametrize("needed,largest,relation,value", [
    (800, 800, "<=", 1),                       # peer cheaper than our first answer
    (1000, 1000, "<=", 1),
    (5000, 5000, "~", 10.0),
    (10_000, 10_000, "~", 10 ** (1 + math.log(2) / math.log(4))),
    (60_000, 60_000, ">", 1000),               # beyond the measured K
    (None, 10_000, ">", 10 ** (1 + math.log(2) / math.log(4))),   # lower bound
    (None, 500, "?", None),                    # unmatched below our first answer
    (None, None, "?", None),
])
def test_crossover(needed, largest, relation, value):
    cross = suite.crossover(CUMULATIVE, needed, largest)
    assert cross["relation"] == relation
    if value is None:
        assert cross["value"] is None
    else:
        assert cross["value"] == pytest.approx(value)


def test_growth_exponent_of_a_power_law():
    sizes = [100, 1000, 10_000, 100_000]
    assert suite.growth_exponent(sizes, [3 * n ** 0.75 for n in sizes]) == pytest.approx(0.75)
    assert suite.growth_exponent(sizes, [7.0] * 4) == pytest.approx(0.0, abs=1e-12)
    # a zero (a root leaf has floor 0) has no logarithm: left out
    assert suite.growth_exponent(sizes, [0.0, 3 * 1000 ** 0.5, 3 * 10_000 ** 0.5, 0.0]) == \
        pytest.approx(0.5)
    assert math.isnan(suite.growth_exponent(sizes, [0.0, 0.0, 0.0, 5.0]))


# -- the peer's tuning -----------------------------------------------------------


@pytest.fixture(scope="module")
def fitted_peer():
    from sklearn.tree import DecisionTreeClassifier

    n = 30
    f = targets.with_label_noise(targets.random_tree(n=n, leaves=32, seed=3), 0.1, seed=4)
    x = derive.unpack_points(derive.uniform_points(derive.node_key(0, "test/peer", ()),
                                                   n, 0, 4000), n)
    held = derive.unpack_points(derive.uniform_points(derive.node_key(0, "test/held", ()),
                                                      n, 0, 1000), n)
    model = DecisionTreeClassifier(max_leaf_nodes=300, random_state=0).fit(x, f(x))
    return DecisionTreeClassifier, x, f(x), held, f(held), model


@pytest.mark.parametrize("leaves", [1, 2, 3, 17, 64, 299, 300])
def test_cut_tree_equals_a_fit_with_that_many_leaves(fitted_peer, leaves):
    classifier, x, y, held, held_y, model = fitted_peer
    cut = suite.prefix_predict(model, held, leaves)
    if leaves >= 2:
        small = classifier(max_leaf_nodes=leaves, random_state=0).fit(x, y)
        assert np.array_equal(cut, small.predict(held))
    else:
        assert np.unique(cut).size == 1
    errors = suite.prefix_errors(model, held, held_y)
    assert errors[leaves - 1] == np.count_nonzero(cut != held_y)


def test_prefix_errors_cover_every_size(fitted_peer):
    _, _, _, held, held_y, model = fitted_peer
    errors = suite.prefix_errors(model, held, held_y)
    assert errors.shape == (model.tree_.n_leaves,)
    assert errors[-1] == np.count_nonzero(model.predict(held) != held_y)


# -- mode comparison: a candidate mode against a baseline --------------------


def _err_entry(value, low, high):
    return {"value": value, "low": low, "high": high, "points": 10_000}


def _ours(first, total, err, cross, seconds):
    return {"first_queries": first, "err_f": err, "crossover": cross, "nodes_built": 7,
            "low_margin": 2,
            "cumulative": [{"answers": 1, "queries": first, "seconds": 0.0},
                           {"answers": 10_000, "queries": total, "seconds": seconds}]}


def _case(key, noise, candidate, baseline, peer_errors):
    return {"case": f"{key} n=100 eta={noise:g}", "key": key, "n": 100, "noise": noise,
            "ours": {"cand": candidate, "base": baseline},
            "peer": {"rows": [{"queries": 1000 * (i + 1), "err_f": _err_entry(e, e, e)}
                              for i, e in enumerate(peer_errors)]}}


HAND_MADE = [
    # candidate 10x cheaper first, 4x cheaper overall, error inside the baseline's interval
    _case("a", 0.0,
          _ours(2_000, 250_000, _err_entry(0.11, 0.10, 0.12), {"relation": "~", "value": 40.0},
                2.0),
          _ours(20_000, 1_000_000, _err_entry(0.10, 0.09, 0.11),
                {"relation": "~", "value": 4.0}, 4.0),
          [0.3, 0.05]),
    # noisy: candidate error above the baseline's interval, 0.05 above the peer's best
    _case("b", 0.2,
          _ours(4_000, 200_000, _err_entry(0.30, 0.29, 0.31), {"relation": "<=", "value": 1},
                3.0),
          _ours(20_000, 2_000_000, _err_entry(0.25, 0.24, 0.26),
                {"relation": "?", "value": None}, 2.0),
          [0.26, 0.25]),
    # noisy: candidate 0.01 above the peer's best, within the baseline's interval
    _case("c", 0.2,
          _ours(5_000, 100_000, _err_entry(0.26, 0.25, 0.27),
                {"relation": ">", "value": 10_000, "lower_bound": True}, 1.0),
          _ours(20_000, 600_000, _err_entry(0.27, 0.26, 0.28),
                {"relation": "~", "value": 2.0}, 1.0),
          [0.25]),
    # only the baseline ran: left out of every number
    {"case": "d n=100 eta=0", "key": "d", "n": 100, "noise": 0.0,
     "ours": {"base": _ours(1, 1, _err_entry(0.5, 0.4, 0.6), {"relation": "?", "value": None},
                            1.0)},
     "peer": {"rows": []}},
]


class TestCompareModes:
    def test_summary_on_hand_made_cases(self):
        c = suite.compare_modes(HAND_MADE, "cand", "base")
        assert (c["candidate"], c["baseline"], c["cases"]) == ("cand", "base", 3)
        assert c["first_ratio"] == pytest.approx(5.0)          # median of 10, 5, 4
        assert c["all_ratio"] == pytest.approx(6.0)            # median of 4, 10, 6
        assert c["no_worse"] == 2                               # b is above 0.26
        assert c["noisy"] == 2 and c["flagged"] == ["b n=100 eta=0.2"]
        assert c["max_peer_gap"] == pytest.approx(0.05)
        # candidate K: 40, 1, 10,000 -> 40; baseline: 4, 2 (b unknown) -> 3
        assert c["crossover"] == [pytest.approx(40.0), pytest.approx(3.0)]
        assert c["crossover_ratio"] == pytest.approx(40 / 3)
        # ms per answer over 10,000 answers: ratios 0.5, 1.5, 1 -> 1
        assert c["time_ratio"] == pytest.approx(1.0)
        assert [row["key"] for row in c["rows"]] == ["a", "b", "c"]
        assert [row["peer_gap"] for row in c["rows"]] == [
            None, pytest.approx(0.05), pytest.approx(0.01)]
        assert c["rows"][0]["ms_per_answer"] == [pytest.approx(0.2), pytest.approx(0.4)]

    def test_needs_a_case_with_both_modes(self):
        assert suite.compare_modes(HAND_MADE[3:], "cand", "base") is None
        assert suite.compare_modes(HAND_MADE, "cand", "other") is None

    def test_rendered_section_states_targets_and_rows(self):
        text = "\n".join(suite.render_comparison(suite.compare_modes(HAND_MADE, "cand",
                                                                     "base")))
        assert "## Mode comparison: cand against base" in text
        assert ("| median first-answer queries, baseline / candidate | 5.00× | ≥ 5× | yes |"
                in text)
        assert "| cases with error no worse (rule below) | 2 of 3 (67%) | ≥ 90% | **no** |" \
            in text
        assert "+0.0500 (b n=100 eta=0.2)" in text
        assert "| 40.0 / 3.0 (13.33×) | ratio ≥ 10× | yes |" in text
        assert "| b | 100 | 0.2 | 4,000 / 20,000 | 5.00× |" in text
        assert "| ≤ 1 / unknown |" in text
        assert text.count("| 2/7 / 2/7 |") == 3
        assert "| " + " | ".join(suite.COMPARISON_COLUMNS) + " |" in text

    def test_json_carries_the_comparison(self, quick):
        result, _, _ = quick
        data = json.loads(dataclasses.replace(result, compare=("adaptive", "fixed")).to_json())
        assert data["compare"] == ["adaptive", "fixed"]
        if suite.adaptive_available():
            assert data["comparison"]["cases"] == len(result.cases)
        again = suite.SuiteResult.from_json(json.dumps(data))
        assert again.compare == ("adaptive", "fixed")


# -- trained models ---------------------------------------------------------------


@pytest.mark.parametrize("key", list(suite.MODEL_SPECS))
def test_model_specs_build_their_declared_oracle(key):
    pytest.importorskip("lca.models")
    spec = suite.MODEL_SPECS[key]
    f, info = suite.model_oracle.__wrapped__(spec, 1)      # uncached: a fresh fit
    assert f.n == spec.n and 32 <= spec.n <= 300
    points = derive.sample_points(0, "test/models", spec.n, 1000)
    values = f(points)
    # Not a constant function under uniform points (else the benchmark is empty):
    # both labels among these fixed points prove it, with no chance involved.
    positives = int(np.sum(values == 1))
    assert 0 < positives < values.size
    # Nor nearly constant. Measured with 20,000 points, the share p of +1 is 0.18 to
    # 0.76 for these models; for any p in [0.15, 0.85] a 1,000-point share leaves
    # (0.05, 0.95) with probability <= 2 exp(-2 * 1000 * 0.1**2) < 5e-9 (Hoeffding,
    # derived points treated as independent uniform points).
    assert 0.05 < positives / values.size < 0.95
    assert info["rows"] > 2 ** spec.bits and info["features"] * spec.bits == spec.n


@pytest.mark.parametrize("key", ["rf-digits", "mlp-wine"])
def test_model_training_is_deterministic(key):
    pytest.importorskip("lca.models")
    spec = suite.MODEL_SPECS[key]
    points = derive.sample_points(0, "test/models", spec.n, 1000)
    first, _ = suite.model_oracle.__wrapped__(spec, 1)
    again, _ = suite.model_oracle.__wrapped__(spec, 1)     # a second fit, fixed random_state
    assert np.array_equal(first(points), again(points))


def test_model_specs_cover_every_model_kind_once_per_dataset():
    specs = suite.MODEL_SPECS.values()
    assert len(specs) >= 6
    assert {spec.model for spec in specs} == set(suite.trained.MODEL_LABELS)
    assert len({(spec.model, spec.dataset) for spec in specs}) == len(specs)


def test_unknown_dataset_and_model_kind():
    with pytest.raises(ValueError, match="unknown dataset 'iris'"):
        suite.trained.load_dataset("iris")
    with pytest.raises(ValueError, match="unknown model kind 'svm'"):
        suite.trained.make_model("svm", 0)

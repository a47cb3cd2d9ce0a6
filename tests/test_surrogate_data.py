"""Surrogate(distribution="data"): each rule of docs/randomness.md §10 pinned by a test."""

import json
import multiprocessing
import re
import warnings
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from rows_support import fitted_json, rule, table

from lca.decisions import LeafDecision, RowsSplit
from lca.models import Surrogate, ThresholdEncoder, UnseenValueWarning
from lca.models.rows import RowsTree, row_order
from lca.models.sources import ProductTree
from lca.oracle import OracleError


def data_surrogate(rows=600, **kwargs):
    kwargs = {"positive": 1, "distribution": "data", "depth": 6, **kwargs}
    return Surrogate(rule, **kwargs).fit(table(rows))


# -- parameters ---------------------------------------------------------------------------

def test_an_unknown_distribution_is_refused_naming_the_parameter_and_its_values():
    with pytest.raises(ValueError, match=r"'distribution' parameter of Surrogate.fit must be "
                                         r"one of \('product', 'data'\)\. Got 'rows'"):
        Surrogate(rule, positive=1, distribution="rows").fit(table(50))


@pytest.mark.parametrize("name, value, error, match", [
    ("shared_rows", -1, ValueError, r"'shared_rows' parameter of Surrogate.fit must be an int "
                                    r"in the range \[0, 1048576\]\. Got -1"),
    ("shared_rows", 2 ** 20 + 1, ValueError, r"in the range \[0, 1048576\]"),
    ("shared_rows", 1.0, TypeError, r"'shared_rows' parameter of Surrogate.fit must be an int"),
    ("min_rows", 0, ValueError, r"'min_rows' parameter of Surrogate.fit must be an int in the "
                                r"range \[1, 4096\]\. Got 0"),
    ("min_rows", 4097, ValueError, r"'min_rows' parameter .* \[1, 4096\]\. Got 4097"),
    ("rows_per_node", 0, ValueError, r"'rows_per_node' parameter .* \[1, 4096\]\. Got 0"),
])
def test_the_rows_parameters_are_checked_at_fit(name, value, error, match):
    with pytest.raises(error, match=match):
        data_surrogate(50, **{name: value})
    for edge in ({"shared_rows": 0}, {"shared_rows": 2 ** 20}, {"min_rows": 4096},
                 {"rows_per_node": 4096}, {"min_rows": 1}, {"rows_per_node": 1}):
        data_surrogate(20, depth=1, **edge)  # the ends of each range are taken


def test_an_unfitted_threshold_encoder_says_so_before_reading_rows():
    rows = pd.DataFrame({"v": [0.0, 1.0], "c": ["a", "b"]})
    for read in (lambda e: e.columns_of("Surrogate.fidelity", rows), lambda e: e.encode(rows)):
        with pytest.raises(ValueError, match=r"^This ThresholdEncoder is not fitted yet; call "
                                             r"fit\(X\) before "):
            read(ThresholdEncoder())


def test_report_asks_the_model_about_the_rows_given_once():
    """The agreement and the leaves of report(X) are counted on one model call over X."""
    asked = []

    def counting(frame):
        asked.append(len(frame))
        return rule(frame)

    surrogate = Surrogate(counting, positive=1, depth=3).fit(table(300))
    surrogate.tree()
    held = table(77, seed=3)
    asked.clear()
    report = surrogate.report(held)
    assert asked.count(77) == 1  # not once for the agreement and again for the leaves
    assert "agreement on the rows given" in report and "leaves holding the most" in report


def test_data_mode_refuses_product_parameters_and_encoders():
    with pytest.raises(ValueError, match=r"'params' parameter of Surrogate.fit configures the "
                                         r"product distribution"):
        Surrogate(rule, positive=1, distribution="data", params={"pairs": 8}).fit(table(50))
    from lca.models import QuantileEncoder
    with pytest.raises(TypeError, match=r"must be a ThresholdEncoder or None with "
                                        r"distribution='data'. Got QuantileEncoder"):
        Surrogate(rule, positive=1, distribution="data",
                  encoder=QuantileEncoder()).fit(table(50))
    with pytest.raises(ValueError, match=r"'rows_per_node' parameter of Surrogate.fit"):
        Surrogate(rule, positive=1, distribution="data", rows_per_node=4097).fit(table(50))


def test_data_mode_is_the_default_and_product_mode_is_asked_for_by_name():
    surrogate = Surrogate(rule, positive=1, depth=3).fit(table(200))
    assert surrogate.distribution_ == "data" and isinstance(surrogate.tree_, RowsTree)
    assert isinstance(surrogate.encoder_, ThresholdEncoder) and surrogate.params_ is None
    product = surrogate.set_params(distribution="product").fit(table(200))
    assert product.distribution_ == "product" and isinstance(product.tree_, ProductTree)
    assert product.params_ == product.tree_.reconstructor.params
    # A refit keeps nothing of the data mode's fit.
    assert not any(hasattr(product, name) for name in ("rows_digest_", "rows_per_node_",
                                                       "min_rows_", "shared_rows_"))
    assert repr(Surrogate(rule, distribution="product")) == \
        "Surrogate(function, distribution='product')"


def test_each_tree_source_answers_what_fidelity_samples_and_its_yardstick():
    rows, held = table(200), table(80, seed=1)
    data = Surrogate(rule, positive=1, depth=3).fit(rows)
    product = Surrogate(rule, positive=1, depth=3, distribution="product").fit(rows)
    labels = data.oracle_.label_rows(held)
    # A rows tree draws rows of the fitted marginals and keeps the rows for its yardstick.
    tree, model = data.tree_.product_sample(data.oracle_, 50)
    assert tree.shape == model.shape == (50,)
    assert 0 <= data.tree_.yardstick(held, labels) <= 1
    # A product tree draws points under its seed; the same tree read back with its model
    # draws the same points and answers them alike; neither keeps rows.
    back = Surrogate.from_json(product.to_json(), model=rule)
    for answers, again in zip(product.tree_.product_sample(product.oracle_, 50),
                              back.tree_.product_sample(back.oracle_, 50), strict=True):
        np.testing.assert_array_equal(answers, again)
    assert product.tree_.yardstick(held, labels) is back.tree_.yardstick(held, labels) is None
    # A data-mode tree read back keeps no rows: nothing to draw, no yardstick.
    saved = Surrogate.from_json(data.to_json(), model=rule)
    assert saved.tree_.product_sample(saved.oracle_, 50) is None
    assert saved.tree_.yardstick(held, labels) is None
    assert saved.fidelity(held).product is None and saved.fidelity(held).rows_tree is None


# -- questions ------------------------------------------------------------------------------

def test_every_midpoint_is_a_cut_up_to_the_limit_then_row_quantiles():
    few = pd.DataFrame({"v": [1.0, 2.0, 2.0, 4.0]})
    assert ThresholdEncoder().fit(few).cuts_[0].tolist() == [1.5, 3.0]
    many = pd.DataFrame({"v": np.arange(100.0)})
    encoder = ThresholdEncoder(cuts=3).fit(many)
    # Rows floor(k * 100 / 4) = 25, 50, 75: the cut just below each of those values.
    assert encoder.cuts_[0].tolist() == [24.5, 49.5, 74.5]
    assert ThresholdEncoder(cuts=99).fit(many).cuts_[0].size == 99


def test_questions_are_plus_one_when_they_hold():
    encoder = ThresholdEncoder().fit(pd.DataFrame({"v": [0.0, 1.0, 2.0],
                                                   "c": ["a", "b", "a"]}))
    # variables: v >= 0.5, v >= 1.5, c == a, c == b
    assert encoder.encode(pd.DataFrame({"v": [1.0], "c": ["b"]})).tolist() == [[1, -1, -1, 1]]
    assert encoder.encode(pd.DataFrame({"v": [-7.0], "c": ["a"]})).tolist() == [[-1, -1, 1, -1]]


def test_an_unseen_category_answers_no_to_each_category_with_one_warning():
    encoder = ThresholdEncoder().fit(pd.DataFrame({"v": [0.0, 1.0], "c": ["a", "b"]}))
    with pytest.warns(UnseenValueWarning, match=r"'c' \(column 1\): 2 rows") as caught:
        points = encoder.encode(pd.DataFrame({"v": [0.5, 9.0], "c": ["z", "y"]}))
    assert len(caught) == 1
    assert points[:, 1:].tolist() == [[-1, -1], [-1, -1]]
    assert points[:, 0].tolist() == [1, 1]  # any real value encodes: 9.0 >= 0.5


def test_conditions_are_intersected_per_feature():
    encoder = ThresholdEncoder().fit(pd.DataFrame({"v": [0.0, 1.0, 2.0, 3.0],
                                                   "c": ["a", "b", "c", "a"]}))
    # v >= 0.5 (+1), then v >= 2.5 (-1): one interval.
    assert encoder.describe(2, -1, ((0, 1),)) == "0.5 <= v < 2.5"
    assert encoder.describe(3, -1) == "c != a"
    # A step that names the category reads as an equality; exclusions stay exclusions
    # even when one fitted category is left (a category fit never saw goes there too).
    assert encoder.describe(4, -1, ((3, -1),)) == "c not in {a, b}"
    assert encoder.describe(4, 1, ((3, -1),)) == "c == b"
    assert encoder.describe(3, 1) == "c == a"
    yes_no = ThresholdEncoder().fit(pd.DataFrame({"had": ["no", "yes", "no"]}))
    assert [yes_no.describe(0, bit) for bit in (-1, 1)] == ["had != no", "had == no"]
    surrogate = data_surrogate()
    rules = surrogate.explain(table(600).iloc[0])
    names = [condition.split()[0] if not condition[0].isdigit() and condition[0] != "-"
             else condition.split()[2] for condition in rules.by_feature]
    assert len(names) == len(set(names))  # one condition per feature


# -- rows and regions ------------------------------------------------------------------------

def test_rows_are_ranked_by_their_derived_key_ties_to_the_lower_index():
    order = row_order(5, 1000)
    from lca import derive
    keys = derive.raw_words(derive.node_key(5, "surrogate-rows", ()), 0, 0, 1000)
    assert order.tolist() == sorted(range(1000), key=lambda i: (int(keys[i]), i))


def _ranks(seed, m):
    """Each fitted row's place in the derived order (§10), computed here from the keys."""
    from lca import derive
    keys = derive.raw_words(derive.node_key(seed, "surrogate-rows", ()), 0, 0, m)
    order = sorted(range(m), key=lambda i: (int(keys[i]), i))
    ranks = np.empty(m, dtype=np.int64)
    ranks[order] = np.arange(m)
    return ranks


def _regions(surrogate, rows):
    """Each decided node's region: the fitted rows answering every step of its path."""
    points = surrogate.encoder_.encode(rows)
    return {path: np.flatnonzero(np.all([points[:, v] == b for v, b in path], axis=0)
                                 if path else np.ones(len(rows), dtype=bool))
            for path in surrogate.tree().decisions}


@pytest.mark.parametrize("shared, per_node", [(768, 128), (0, 40), (100, 16), (1, 1)])
def test_a_node_takes_its_regions_shared_rows_and_at_least_rows_per_node(shared, per_node):
    rows = table(900, seed=5)
    surrogate = Surrogate(rule, positive=1, depth=5, seed=2, shared_rows=shared,
                          rows_per_node=per_node).fit(rows)
    tree = surrogate.tree()
    ranks = _ranks(2, 900)
    for path, region in _regions(surrogate, rows).items():
        s = int((ranks[region] < shared).sum())
        r = max(s, min(per_node, region.size))
        decision = tree.decisions[path]
        if isinstance(decision, RowsSplit):
            assert (decision.rows, decision.points) == (r, max(r, per_node)), path
        else:
            assert surrogate.tree_.leaf_rows(path).rows == r, path
            assert decision.samples == max(r, per_node), path


@pytest.mark.parametrize("shared, per_node, r", [(10, 4, 10), (0, 4, 4), (30, 4, 30),
                                                 (31, 4, 30), (0, 30, 30), (0, 31, 30),
                                                 (9, 10, 10), (11, 10, 11)])
def test_the_root_takes_max_of_its_shared_rows_and_rows_per_node(shared, per_node, r):
    surrogate = Surrogate(rule, positive=1, depth=0, shared_rows=shared,
                          rows_per_node=per_node).fit(table(30))
    leaf = surrogate.tree_.decide(())
    # r fitted rows, and rows drawn up to rows_per_node: every point one model query.
    assert surrogate.tree_.leaf_rows(()).rows == r
    assert leaf.samples == max(r, per_node) == surrogate.queries_


class Logged:
    """A model remembering every row it is asked about (as a frame)."""

    def __init__(self, function):
        self.function, self.asked = function, []

    def __call__(self, frame):
        self.asked.append(frame.copy())
        return self.function(frame)


def test_drawn_rows_are_the_nodes_rows_with_features_drawn_in_its_region():
    """At the root (every value allowed), drawn row k is the node's row b_k with each feature
    j kept or drawn on the low bit of word k*d + j, drawn from the sorted fitted values."""
    from lca import derive

    rows = table(12, seed=3).drop(columns="colour")  # three ordered features
    model = Logged(lambda frame: (frame["x"] + frame["y"] > 0).to_numpy().astype(int))
    surrogate = Surrogate(model, positive=1, depth=0, rows_per_node=40).fit(rows)
    surrogate.tree_.decide(())
    asked = model.asked[0]
    assert len(asked) == 40  # one call: the 12 fitted rows, then 28 drawn ones
    order = np.argsort(_ranks(0, 12), kind="stable")  # the node's rows in rank order
    key = derive.node_key(0, "surrogate-topup", ())
    words = derive.raw_words(key, 0, 0, 28 * 3).reshape(28, 3)
    bases = derive.raw_words(key, 1, 0, 28)
    for k in range(28):
        base = order[int(int(bases[k]) >> 32) * 12 >> 32]
        for j, name in enumerate(rows.columns):
            word = int(words[k, j])
            expected = np.sort(rows[name].to_numpy(float))[(word >> 32) * 12 >> 32] \
                if word & 1 else float(rows[name].iloc[base])
            assert float(asked[name].iloc[12 + k]) == expected, (k, name)


def _node(tree_, path):
    """A decided node's points, asked again as the node asked them: its fitted rows then
    its drawn rows, as columns, as ±1 answers to every question, as the tree keeps them
    (bins), their classes and their weights (§10: fitted rows t each, drawn min(r, t))."""
    decision = tree_.decisions.pop(path)
    try:
        tree_.prepare([path])
        points = tree_._pending.pop(path)
    finally:
        tree_.decisions[path] = decision
    rows, base = points.rows, points.base
    columns = [np.concatenate([tree_.columns[j][rows], tree_._shaped_column(
        j, rows[base], points.position[:, j], points.swap[:, j])]).astype(
        tree_.columns[j].dtype) for j in range(len(tree_.columns))]
    r, t = rows.size, base.size
    row, draw = (t, min(r, t)) if t else (1, 0)
    return SimpleNamespace(columns=columns, encoded=tree_.encoder.encode_columns(columns)[0],
                           bins=points.bins, labels=points.labels, r=r,
                           weights=np.where(np.arange(r + t) < r, row, draw))


def _node_points(tree_, path):
    node = _node(tree_, path)
    return node.encoded, node.labels, node.weights, node.r


def test_drawn_rows_stay_in_the_region_of_their_node():
    surrogate = Surrogate(rule, positive=1, depth=4, rows_per_node=150).fit(table(200))
    tree = surrogate.tree()
    drawn = 0
    for path in list(tree.decisions):
        encoded, _, _, r = _node_points(surrogate.tree_, path)
        drawn += encoded.shape[0] - r
        for variable, bit in path:
            assert (encoded[:, variable] == bit).all(), path
    assert drawn > 1000


# -- the split --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_the_split_is_the_largest_weighted_gini_gain_compared_exactly(seed):
    surrogate = Surrogate(rule, positive=1, depth=4, seed=seed, rows_per_node=64,
                          shared_rows=100).fit(table(300, seed=seed))
    tree = surrogate.tree()
    splits = 0
    for path, decision in tree.decisions.items():
        if len(path) >= 4 or surrogate.tree_.region(path).size < 4:
            continue
        encoded, labels, weights, r = _node_points(surrogate.tree_, path)
        totals = [int(weights[labels == c].sum()) for c in (0, 1)]
        parent = Fraction(sum(w * w for w in totals), sum(totals))
        scores = {}
        for v in range(encoded.shape[1]):
            if encoded[:r, v].min() == encoded[:r, v].max():
                continue  # a candidate takes both values among the fitted rows
            score = Fraction(0)
            for bit in (-1, 1):
                side = encoded[:, v] == bit
                mine = [int(weights[side & (labels == c)].sum()) for c in (0, 1)]
                score += Fraction(sum(w * w for w in mine), sum(mine))
            if score > parent:
                scores[v] = score
        if not scores or len(set(labels[weights > 0].tolist())) == 1:
            assert isinstance(decision, LeafDecision), path
            continue
        top = max(scores.values())
        best = sorted(v for v, score in scores.items() if score == top)
        assert isinstance(decision, RowsSplit) and decision.variable in best, path
        if decision.variable != best[0]:  # the run rule moved it along a run of cuts
            assert best[:best.index(decision.variable) + 1] == list(
                range(best[0], decision.variable + 1)), path
        splits += 1
    assert splits >= 5


def test_a_run_of_tied_cuts_splits_in_the_middle_of_the_gap_they_share():
    # w = 0: v in {0..4} answers "a" and v in {15..19} answers "b"; w = 1: v in {5..14},
    # always "c". The root splits on w; below it, on w = 0, every cut between 4 and 15
    # (4.5, 5.5, ..., 14.5: the other side's values made them) parts the rows alike.
    below = [(v, 0) for v in (*range(5), *range(15, 20))]
    rows = pd.DataFrame([(float(v), float(w)) for v, w in below * 4 +
                         [(v, 1) for v in range(5, 15)] * 4], columns=["v", "w"])

    class Clusters:
        classes_ = np.array(["a", "b", "c"])

        def predict(self, frame):
            v, w = frame["v"].to_numpy(), frame["w"].to_numpy()
            return np.where(w > 0.5, "c", np.where(v < 10, "a", "b"))

    # Every node decides on all its rows (shared_rows), none drawn (rows_per_node = 8).
    surrogate = Surrogate(Clusters(), depth=2, rows_per_node=8, shared_rows=1000).fit(rows)
    tree = surrogate.tree()
    assert tree.conditions[()] == ("w < 0.5", "w >= 0.5")
    child = next(path for path in tree.decisions if path and path[0][1] == -1)
    # The middle of the gap between 4 and 15 is 9.5, one of the cuts: that one.
    assert tree.conditions[child] == ("v < 9.5", "v >= 9.5")
    assert surrogate.predict(pd.DataFrame({"v": [9.0, 10.0], "w": [0.0, 0.0]})).tolist() == \
        ["a", "b"]


# -- the leaf ----------------------------------------------------------------------------------

@pytest.mark.parametrize("min_rows", [1, 4, 9, 40])
def test_a_leaf_answers_its_fitted_rows_from_min_rows_of_them_else_its_weighted_points(
        min_rows):
    surrogate = Surrogate(rule, positive=1, depth=4, rows_per_node=40, shared_rows=0,
                          min_rows=min_rows).fit(table(120, seed=9))
    checked = set()
    for path, leaf in surrogate.tree().leaves.items():
        found = surrogate.tree_.leaf_rows(path)
        r, t = found.rows, leaf.samples - found.rows
        plus = (leaf.samples + leaf.total) // 2  # points labelled +1
        fitted_plus = found.agree if leaf.label > 0 else r - found.agree
        drawn_plus = plus - fitted_plus
        row, draw = (t, min(r, t)) if t else (1, 0)
        weight_plus = row * fitted_plus + draw * drawn_plus
        weight_minus = row * (r - fitted_plus) + draw * (t - drawn_plus)
        by_weight = 1 if weight_plus >= weight_minus else -1
        if r >= min_rows and 2 * fitted_plus != r:
            expected = 1 if 2 * fitted_plus > r else -1
        else:
            expected = by_weight
        assert leaf.label == expected, path
        checked.add((r >= min_rows, expected == by_weight))
    # Both rules apply somewhere (min_rows 4 and 9).
    assert {kind for kind, _ in checked} == ({True} if min_rows == 1 else {False}
                                             if min_rows == 40 else {True, False})


@pytest.mark.parametrize("min_rows, label", [(10, 1), (11, -1)])
def test_fitted_rows_overrule_drawn_rows_from_min_rows_of_them(min_rows, label):
    """Ten fitted rows, six labelled +1; the model answers -1 on any other row, so the drawn
    rows (shaped from them, but mixed) are nearly all -1 and outweigh the fitted ones."""
    rows = table(10, seed=4).drop(columns="colour")
    known = {tuple(row): int(i < 6) for i, row in enumerate(rows.itertuples(index=False))}

    def lookup(frame):
        return np.array([known.get(tuple(row), 0) for row in frame.itertuples(index=False)])

    surrogate = Surrogate(lookup, positive=1, depth=0, rows_per_node=50,
                          min_rows=min_rows).fit(rows)
    leaf = surrogate.tree_.decide(())
    found = surrogate.tree_.leaf_rows(())
    assert (found.rows, leaf.samples) == (10, 50)
    plus = (leaf.samples + leaf.total) // 2
    assert plus < 25  # most points are -1: the weighted points say -1 ...
    assert leaf.label == label  # ... and decide only below min_rows fitted rows


def test_stopping_rules():
    # Depth cap: depth 0 is one leaf.
    assert isinstance(data_surrogate(depth=0).tree_.decide(()), LeafDecision)
    # Fewer than min_rows fitted rows in the region: a leaf; as many: not on that account.
    builder = data_surrogate(min_rows=600).tree_
    assert isinstance(builder.decide(()), RowsSplit)
    builder = data_surrogate(min_rows=601).tree_
    assert isinstance(builder.decide(()), LeafDecision)
    # Pure labels: a leaf labelled by them.
    constant = Surrogate(lambda X: np.ones(len(X), dtype=int), positive=1,
                         distribution="data").fit(table(100))
    leaf = constant.tree_.decide(())
    assert isinstance(leaf, LeafDecision) and leaf.label == 1 and leaf.total == leaf.samples


def test_a_tied_leaf_is_labelled_plus_one():
    X = pd.DataFrame({"v": [0.0, 0.0, 1.0, 1.0]})
    # The model's labels are 1, 0, 1, 0 on rows of equal questions: no split has any gain.
    def alternating(frame):
        return (np.arange(len(frame)) % 2 == 0).astype(int) if len(frame) == 4 else \
            np.zeros(len(frame), dtype=int)
    surrogate = Surrogate(alternating, positive=1, distribution="data", rows_per_node=4,
                          min_rows=1).fit(X)
    leaf = surrogate.tree_.decide(())
    assert isinstance(leaf, LeafDecision) and leaf.total == 0 and leaf.label == 1


# -- locality, identity, replicas ----------------------------------------------------------------

def test_one_depth_8_path_costs_well_under_a_tenth_of_the_whole_tree():
    rows = table(3000, seed=1)
    whole = Surrogate(rule, positive=1, distribution="data", depth=8).fit(rows)
    tree = whole.tree()
    points = whole.encoder_.encode(rows)
    deep = next(i for i in range(len(rows)) if len(tree.trace(points[i])[0]) == 8)
    local = Surrogate(rule, positive=1, distribution="data", depth=8).fit(rows)
    rules = local.explain(rows.iloc[deep])
    # The path built alone is the whole tree's path, at a tenth of its queries: at most
    # the shared rows, rows_per_node a level and one row asked again a node.
    assert rules.path == tree.trace(points[deep])[0] and len(rules.path) == 8
    assert local.queries_ <= 768 + 128 * 8 + 8 and 10 * local.queries_ < whole.queries_


class Unfixed:
    """Models that are not fixed functions of the row."""

    @staticmethod
    def flipping():
        calls = []

        def model(frame):
            calls.append(len(frame))
            return rule(frame) ^ (len(calls) % 2)
        return model

    @staticmethod
    def random():
        generator = np.random.default_rng(0)
        return lambda frame: generator.integers(0, 2, len(frame))

    @staticmethod
    def by_batch():  # the answer depends on how many rows come together
        return lambda frame: rule(frame) ^ (len(frame) % 3 == 0)


@pytest.mark.parametrize("kind", ["flipping", "random", "by_batch"])
def test_a_model_that_answers_a_row_two_ways_is_refused(kind):
    surrogate = Surrogate(getattr(Unfixed, kind)(), positive=1, depth=4).fit(table(300))
    with pytest.raises(OracleError, match=r"^the model answered the same row with two "
                                          r"different values \(fitted row \d+, asked again "
                                          r"with the nodes at depth \d\): lca needs a fixed "
                                          r"function, the same value every time a row is "
                                          r"asked$"):
        surrogate.tree()


def test_a_fixed_model_asks_one_row_again_a_node_and_nothing_else():
    model = Logged(rule)
    surrogate = Surrogate(model, positive=1, depth=3, rows_per_node=20).fit(table(60))
    tree = surrogate.tree()
    asked = pd.concat(model.asked, ignore_index=True)
    # Every fitted row once, each node's drawn rows, and one row again per node below the
    # root: the queries counted.
    drawn = sum(max(20 - surrogate.tree_.leaf_rows(path).rows, 0) for path in tree.leaves) + \
        sum(node.points - node.rows for node in tree.internal_nodes.values())
    assert len(asked) == surrogate.queries_ == 60 + drawn + len(tree.decisions) - 1


def test_the_rows_digest_is_part_of_the_identity():
    rows = table(300)
    first = data_surrogate(300).rows_digest_
    assert data_surrogate(300).rows_digest_ == first
    changed = rows.copy()
    changed.loc[17, "x"] += 0.001
    other = Surrogate(rule, positive=1, distribution="data").fit(changed).rows_digest_
    assert other != first and other.startswith("sha256:") and len(other) == 7 + 64
    renamed = rows.copy()
    renamed.loc[3, "colour"] = "green" if rows.loc[3, "colour"] != "green" else "blue"
    assert Surrogate(rule, positive=1, distribution="data").fit(renamed).rows_digest_ != first
    report = data_surrogate(300, depth=3).report()
    assert first in report and "300 fitted rows" in report


def test_json_round_trip_keeps_every_answer_and_the_whole_tree():
    surrogate = data_surrogate(400)
    text = surrogate.to_json()
    document = json.loads(text)
    assert document["version"] == 3 and document["tree"]["params"]["builder"] == "rows"
    assert document["queries"] == surrogate.queries_ and "distribution" not in document
    assert document["rows"]["digest"] == surrogate.rows_digest_
    assert document["rows"]["count"] == 400
    back = Surrogate.from_json(text)
    assert surrogate.rows_digest_ in back.report() and "fitted rows" in back.report()
    assert back.get_params()["distribution"] == "data"
    product = Surrogate(rule, positive=1, depth=2, distribution="product").fit(table(100))
    assert Surrogate.from_json(product.to_json()).get_params()["distribution"] == "product"
    rows = table(500, seed=9)
    assert (back.predict(rows) == surrogate.predict(rows)).all()
    assert back.to_json() == text
    assert str(back.explain(rows.iloc[4])) == str(surrogate.explain(rows.iloc[4]))
    assert [str(r) for r in back.leaves()] == [str(r) for r in surrogate.leaves()]
    assert "fitted rows agree" in str(back.leaves()[0])
    # A leaf of threshold questions has no share of uniform points: none is shown,
    # before or after the round trip.
    assert not surrogate.tree().uniform_mass and not back.tree().uniform_mass
    assert "of inputs" not in back.tree().to_text()
    assert back.tree().to_text() == surrogate.tree().to_text()
    with_model = Surrogate.from_json(text, model=rule)
    fidelity = with_model.fidelity(rows)
    assert fidelity.product is None and fidelity.data is not None
    assert fidelity.data.rate == surrogate.fidelity(rows).data.rate


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["rows"].update(count=0), r"'rows.count' must be an int in \[1, "),
    (lambda d: d["rows"]["leaves"].pop(), r"'rows.leaves' must be a list of \d+ \[path, rows, "),
    (lambda d: d["rows"]["leaves"][0].__setitem__(2, 10 ** 6), r"'rows.leaves\[0\]' must be"),
    (lambda d: d.update(distribution="data"), r"the document has unknown 'distribution'"),
    (lambda d: d["tree"]["params"].update(builder="reconstructor"), r"the document has "
                                                                    r"unknown 'rows'"),
    (lambda d: d["tree"]["params"].update(shared_rows=-1),
     r"'tree.params.shared_rows' must be an int in \[0, 1048576\]"),
    (lambda d: d["tree"]["params"].update(depth=4), r"'tree.params.depth' must be the "
                                                    r"surrogate's 'depth', 3"),
    (lambda d: d["tree"]["params"].pop("min_rows"), r"'tree.params' misses 'min_rows'"),
    (lambda d: d.update(queries=-1), r"'queries' must be an int in \[0, "),
    (lambda d: d["tree"]["nodes"][0]["decision"].update(rows=0), r"the decision's 'rows' "
                                                                 r"must be in \[1, inf\]"),
    (lambda d: d["tree"]["nodes"][0]["decision"].update(rows=10 ** 6, points=10 ** 6),
     r"decided on 1000000 points of which 1000000 fitted rows; a node decides on its fitted "
     r"rows \(1 to 200\)"),
    (lambda d: d["tree"]["nodes"][0]["decision"].update(points=3), r"the decision's 'points' "
                                                                   r"must be in \[200, inf\]"),
    (lambda d: d["tree"]["nodes"][0]["decision"].update(rows=100, points=100),
     r"decided on 100 points of which 100 fitted rows; .* rows_per_node=128"),
    (lambda d: d["tree"]["nodes"][0].update(kind="node"), r"'decision' misses 'samples'"),
    (lambda d: d["encoder"].update(kind="QuantileEncoder"), r"'encoder"),
    (lambda d: d["rows"].update(digest="sha256:" + "0" * 64), r"'digest' does not match"),
    (lambda d: d["encoder"]["thresholds"]["0"].reverse(),
     r"'encoder.thresholds.0' must be strictly increasing cuts"),
    (lambda d: d["encoder"]["thresholds"]["0"].pop(),
     r"'tree.n' is \d+, but the encoder makes \d+ bits"),
    (lambda d: d["encoder"].update(cuts=0), r"'encoder.cuts' must be an int in \[1, 4096\]"),
])
def test_a_forged_data_document_is_refused_naming_the_field(edit, match):
    document = json.loads(data_surrogate(200, depth=3).to_json())
    edit(document)
    with pytest.raises(ValueError, match=match):
        Surrogate.from_json(json.dumps(document))


def test_replicas_in_two_processes_save_the_same_surrogate():
    here = fitted_json(500, 4)
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        there = pool.apply(fitted_json, (500, 4))
    assert there == here
    assert fitted_json(500, 5) != here  # another seed, another tree


def test_a_saved_data_surrogate_is_served(tmp_path):
    from lca.serve.saved import load_saved

    surrogate = data_surrogate(300, depth=4)
    path = tmp_path / "data.json"
    path.write_text(surrogate.to_json())
    answerer, oracle = load_saved(str(path))
    points = surrogate.encoder_.encode(table(50, seed=3))
    assert (answerer.answer_many(points, surrogate.seed_) ==
            surrogate.tree().query(points)).all()
    assert oracle.n == surrogate.encoder_.n_bits


def test_clean_use_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        surrogate = data_surrogate(300, depth=4)
        surrogate.predict(table(100, seed=2))
        surrogate.report()


@pytest.mark.parametrize("distribution", ["data", "product"])
def test_lca_distill_takes_the_distribution(tmp_path, capsys, distribution):
    joblib = pytest.importorskip("joblib")
    from sklearn.tree import DecisionTreeClassifier

    from lca.cli import main

    rows = table(300)
    numeric = rows[["x", "y", "k"]]
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(numeric, rule(rows))
    joblib.dump(model, tmp_path / "model.joblib")
    numeric.to_csv(tmp_path / "rows.csv", index=False)
    code = main(["distill", str(tmp_path / "model.joblib"), "--data", str(tmp_path / "rows.csv"),
                 "--depth", "3", "--quiet", "--distribution", distribution, "--holdout", "0"])
    printed = capsys.readouterr().out
    expected = Surrogate(model, depth=3, distribution=distribution).fit(numeric)
    assert code == 0 and expected.tree().to_text() in printed
    assert ("threshold questions" in printed) == (distribution == "data")


def test_a_row_of_an_unseen_category_is_answered_on_the_not_in_side():
    surrogate = data_surrogate(600, depth=4)
    tree = surrogate.tree()
    row = table(1, seed=5).assign(colour="purple")
    with pytest.warns(UnseenValueWarning, match=r"'colour' \(column 3\): 1 row"):
        rules = surrogate.explain(row)
    assert not any("colour ==" in condition for condition in rules.conditions)
    assert any(re.match(r"colour (!=|not in)", condition) for condition in rules.conditions)
    with pytest.warns(UnseenValueWarning):
        assert surrogate.predict(row).tolist() == [rules.prediction]
    assert rules.path in tree.leaves


def test_tree_draws_a_bar_over_the_nodes_it_decides_and_none_unless_asked(capsys):
    quiet = data_surrogate(400, depth=4)
    tree = quiet.tree()
    assert capsys.readouterr().err == ""
    loud = data_surrogate(400, depth=4)
    assert loud.tree(progress=True).to_json() == tree.to_json()
    err = capsys.readouterr().err
    # One count per node decided (internal nodes and leaves), no total to reach.
    decided = len(tree.internal_nodes) + len(tree.leaves)
    assert f"deciding:{decided}nodes[" in err.replace(" ", "")


# -- the tree's counting route against the points spelled out --------------------------------

class Bands:
    """A three-class model over table()'s columns (classes_ not in sorted order)."""

    classes_ = np.array(["low", "mid", "high"])

    def predict(self, frame):
        score = frame["x"].to_numpy(float) + 0.3 * frame["k"].to_numpy(float)
        out = np.where(score > 1.5, "high", np.where(score > 0.3, "mid", "low"))
        return np.where(frame["colour"].to_numpy() == "red", "mid", out)


@pytest.mark.parametrize("model, positive", [(rule, 1), (Bands(), None)])
def test_each_node_counts_as_its_points_encoded_question_by_question(model, positive):
    # The tree keeps a node's points as one level per feature and counts every
    # question's answers from them at once; spelled out as ±1 answers (the encoder's
    # encode_columns on the node's rows and drawn rows) they give the same counts, and
    # the model's labels of those columns are the node's.
    kwargs = {"positive": positive, "depth": 4, "rows_per_node": 48, "shared_rows": 40,
              "seed": 5}
    whole = Surrogate(model, **kwargs).fit(table(300))
    whole.tree()
    tree_ = whole.tree_
    assert tree_.multiclass == (positive is None)
    drawn = 0
    for path in list(tree_.decisions):
        node = _node(tree_, path)
        assert node.encoded.shape[0] == node.labels.size == max(node.r, 48)
        drawn += node.labels.size - node.r
        assert (tree_.ask(node.columns) == node.labels).all()
        zeros = np.zeros(node.labels.size, dtype=np.int64)
        assert (tree_.minus_counts(node.bins, zeros, 1)[0] == (node.encoded < 0).sum(axis=0)).all()
    assert drawn > 200


def test_levels_answer_each_question_as_the_question_reads():
    # Values exactly on a cut, one ulp either side of it and far outside the fitted
    # range: "x >= cut" compared directly, and "x == category".
    rng = np.random.default_rng(11)
    encoder = ThresholdEncoder(cuts=8).fit(pd.DataFrame({
        "v": rng.integers(0, 40, 500) / 4, "w": rng.normal(0, 1, 500),
        "c": rng.choice(list("abcd"), 500)}))
    v, w = encoder.cuts_[0], encoder.cuts_[1]
    probe = np.concatenate([v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf),
                            [-1e300, 1e300, 0.0, -0.0]])
    frame = pd.DataFrame({"v": probe, "w": np.resize(np.concatenate([w, -w]), probe.size),
                          "c": np.resize(np.array(list("dcba")), probe.size)})
    points = encoder.encode(frame)
    direct = np.concatenate(
        [frame["v"].to_numpy()[:, None] >= v[None, :],
         frame["w"].to_numpy()[:, None] >= w[None, :],
         frame["c"].to_numpy()[:, None] == encoder.categories_[2][None, :]], axis=1)
    assert (points == np.where(direct, 1, -1)).all()
    levels = encoder.levels([frame["v"].to_numpy(), frame["w"].to_numpy(),
                             encoder.category_codes(2, frame["c"].to_numpy())])
    assert (levels[:, 0] == (frame["v"].to_numpy()[:, None] >= v[None, :]).sum(axis=1)).all()
    assert (levels[:v.size, 0] == np.arange(1, v.size + 1)).all()  # on a cut: it holds


def test_fit_rows_returns_the_rows_as_columns_of_and_category_codes_read_them():
    X = table(200)
    encoder = ThresholdEncoder()
    columns, values = encoder.fit_rows(X)
    again = encoder.columns_of("test", X)
    for j, (column, read) in enumerate(zip(columns, values, strict=True)):
        assert column.tolist() == again[j].tolist()
        if j in encoder.categories_:
            assert read.tolist() == encoder.category_codes(j, again[j]).tolist()
        else:
            assert read.tolist() == again[j].tolist()
    assert encoder.rows_digest_ == ThresholdEncoder().fit(X).rows_digest_

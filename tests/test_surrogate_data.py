"""Surrogate(distribution="data"): each rule of docs/randomness.md §10 pinned by a test."""

import json
import multiprocessing
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from rows_support import fitted_json, rule, table

from lca.decisions import LeafDecision, NodeDecision
from lca.models import Surrogate, ThresholdEncoder, UnseenValueWarning
from lca.models.rows import RowsTree, best_split, row_order
from lca.models.sources import ProductTree


def data_surrogate(rows=600, **kwargs):
    kwargs = {"positive": 1, "distribution": "data", "depth": 6, **kwargs}
    return Surrogate(rule, **kwargs).fit(table(rows))


# -- parameters ---------------------------------------------------------------------------

def test_an_unknown_distribution_is_refused_naming_the_parameter_and_its_values():
    with pytest.raises(ValueError, match=r"'distribution' parameter of Surrogate.fit must be "
                                         r"one of \('product', 'data'\)\. Got 'rows'"):
        Surrogate(rule, positive=1, distribution="rows").fit(table(50))


@pytest.mark.parametrize("product_rows, rows_per_node, match", [
    (128, 128, r"'product_rows' parameter of Surrogate.fit must be below rows_per_node=128 "
               r"\(a node needs a fitted row to split\)\. Got 128"),
    (8, 4, r"must be below rows_per_node=4 .*Got 8"),
    (-1, 128, r"'product_rows' parameter of Surrogate.fit must be an int in the range "
              r"\[0, 4095\]\. Got -1"),
    (1.0, 128, r"'product_rows' parameter of Surrogate.fit must be an int"),
])
def test_product_rows_below_rows_per_node_only(product_rows, rows_per_node, match):
    with pytest.raises((TypeError, ValueError), match=match):
        data_surrogate(50, product_rows=product_rows, rows_per_node=rows_per_node)


def test_a_stated_mix_takes_at_most_r_minus_d_rows_and_draws_the_rest():
    rows_per_node, product_rows = 64, 24
    mixed = data_surrogate(2000, depth=3, rows_per_node=rows_per_node,
                           product_rows=product_rows)
    builder = mixed.tree_
    # The root's region holds all 2,000 rows: it takes exactly R - D of them and draws D.
    points, labels, r = builder.node_points(())
    assert (r, points.shape[0], labels.size) == (40, 64, 64)
    assert (builder.region(())[:r] == builder.region(())[:40]).all()
    assert builder.topup_count(r) == product_rows
    # A region with fewer rows than R - D takes them all and draws up to R.
    assert builder.topup_count(5) == 59
    # Every leaf's fitted rows are at most R - D.
    tree = mixed.tree()
    assert max(mixed.tree_.leaf_rows(path).rows for path in tree.leaves) <= 40
    assert "product_rows=24" in repr(mixed)
    plain = data_surrogate(2000, depth=3, rows_per_node=rows_per_node)
    assert plain.tree_.node_points(())[2] == 64 and "product_rows" not in repr(plain)


def test_a_stated_mix_is_saved_and_read_back_and_the_default_is_not_written():
    mixed = data_surrogate(400, depth=3, product_rows=16)
    text = mixed.to_json()
    assert json.loads(text)["rows"]["product_rows"] == 16
    back = Surrogate.from_json(text)
    assert back.get_params()["product_rows"] == 16 and back.to_json() == text
    assert "product_rows" not in json.loads(data_surrogate(400, depth=3).to_json())["rows"]
    document = json.loads(text)
    for forged in (0, 128, 1.0):  # 0 is the default, never written; at least a fitted row
        document["rows"]["product_rows"] = forged
        with pytest.raises(ValueError, match=r"'rows.product_rows' must be an int in \[1, 127\]"):
            Surrogate.from_json(json.dumps(document))


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
                                                       "min_rows_", "product_rows_"))
    assert repr(Surrogate(rule, distribution="product")) == \
        "Surrogate(function, distribution='product')"


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
    assert encoder.describe(3, -1) == "c not in {a}"
    assert encoder.describe(4, -1, ((3, -1),)) == "c not in {a, b}"
    assert encoder.describe(4, 1, ((3, -1),)) == "c in {b}"
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


def test_a_node_takes_the_first_rows_of_its_region_including_its_ancestors_rows():
    surrogate = data_surrogate(rows_per_node=64)
    builder = surrogate.tree_
    root = builder.decide(())
    assert isinstance(root, NodeDecision)
    parent_rows = builder.region(())[:64]
    for bit in (-1, 1):
        child = ((root.variable, bit),)
        region = builder.region(child)
        # The region: exactly the fitted rows that answer the step so.
        every = builder.encoder.encode_columns(builder.columns)[0]
        assert set(region.tolist()) == set(np.flatnonzero(
            every[:, root.variable] == bit).tolist())
        mine = set(region[:64].tolist())
        assert {i for i in parent_rows.tolist() if i in set(region.tolist())} <= mine


def test_top_up_fills_a_node_to_rows_per_node_points_and_counts_every_query():
    surrogate = Surrogate(rule, positive=1, distribution="data", rows_per_node=100,
                          depth=0).fit(table(30))
    leaf = surrogate.tree_.decide(())
    # 30 fitted rows and 100 - 30 drawn ones: 100 model queries.
    assert isinstance(leaf, LeafDecision) and leaf.samples == 100
    assert surrogate.queries_ == 100
    assert surrogate.tree_.leaf_rows(()).rows == 30
    full = Surrogate(rule, positive=1, distribution="data", rows_per_node=20,
                     depth=0).fit(table(30))
    full.tree_.decide(())
    assert full.tree_.leaf_rows(()).rows == 20 and full.queries_ == 20


def test_drawn_rows_stay_in_the_region_of_their_node():
    surrogate = data_surrogate(rows=200, rows_per_node=150)
    builder = surrogate.tree_
    tree = surrogate.tree()
    from lca.models.rows import topup_columns
    for path in list(tree.decisions)[:12]:
        drawn = topup_columns(builder.encoder, builder.sorted_columns, 0, path, 50)
        points, _ = builder.encoder.encode_columns(drawn)
        for variable, bit in path:
            assert (points[:, variable] == bit).all()


# -- the split --------------------------------------------------------------------------------

def _gini_scores(points, labels, candidates):
    out = {}
    n, p = labels.size, int((labels > 0).sum())
    parent = Fraction(p * p + (n - p) ** 2, n)
    for v in candidates:
        score = 0
        for side in (-1, 1):
            chosen = labels[points[:, v] == side]
            k, kp = chosen.size, int((chosen > 0).sum())
            score += Fraction(kp * kp + (k - kp) ** 2, k)
        if score > parent:
            out[int(v)] = score
    return out


@pytest.mark.parametrize("seed", range(20))
def test_the_split_is_the_largest_gini_gain_compared_exactly(seed):
    rng = np.random.default_rng(seed)
    points = rng.choice(np.array([-1, 1], dtype=np.int8), size=(40, 12))
    labels = np.where(points[:, 3] + points[:, 7] + rng.normal(0, 1, 40) > 0, 1, -1)
    candidates = np.arange(12)
    scores = _gini_scores(points, labels, candidates)
    best = max(scores, key=lambda v: (scores[v], -v)) if scores else None
    assert best_split(points, labels, candidates) == best


def test_ties_go_to_the_lowest_variable_and_no_gain_is_no_split():
    column = np.array([-1, -1, 1, 1], dtype=np.int8)
    points = np.stack([column, -column, column], axis=1)  # three equally good questions
    labels = np.array([1, 1, -1, -1])
    assert best_split(points, labels, np.array([2, 1, 0])) == 0
    assert best_split(points, labels, np.array([2, 1])) == 1
    flat = np.array([[-1], [1], [-1], [1]], dtype=np.int8)
    assert best_split(flat, np.array([1, 1, -1, -1]), np.array([0])) is None


def test_stopping_rules():
    # Depth cap: depth 0 is one leaf.
    assert isinstance(data_surrogate(depth=0).tree_.decide(()), LeafDecision)
    # Fewer than min_rows fitted rows in the region: a leaf; as many: not on that account.
    builder = data_surrogate(min_rows=600).tree_
    assert isinstance(builder.decide(()), NodeDecision)
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
    # The path built alone is the whole tree's path, at a twentieth of its queries.
    assert rules.path == tree.trace(points[deep])[0] and len(rules.path) == 8
    assert 20 * local.queries_ < whole.queries_


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
    assert document["version"] == 2 and document["distribution"] == "data"
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
    (lambda d: d.update(distribution="rows"), r"'distribution' must be 'data'"),
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
    assert not any("colour in {" in condition for condition in rules.conditions)
    assert any("colour not in {" in condition for condition in rules.conditions)
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
def test_each_node_counts_and_splits_as_its_points_encoded_question_by_question(model,
                                                                                positive):
    # The tree keeps a node's points as one level per feature and counts every
    # question's answers from them at once; spelled out as ±1 answers (the encoder's
    # encode_columns on the node's rows and on its drawn rows read back from the
    # top-up rule) they give the same counts, labels, candidates and split.
    from lca.models.rows import best_class_split, topup_columns
    kwargs = {"positive": positive, "distribution": "data", "depth": 4, "rows_per_node": 48,
              "product_rows": 8, "seed": 5}
    whole = Surrogate(model, **kwargs).fit(table(300))
    whole.tree()
    fresh = Surrogate(model, **kwargs).fit(table(300)).tree_
    encoder, classes = fresh.encoder, fresh.classes
    assert bool(classes) == (positive is None)
    splits = 0
    for path, decision in whole.tree_.decisions.items():
        bins, labels, r = fresh.node_points(path)
        rows = fresh.region(path)[:40]
        drawn = topup_columns(encoder, fresh.sorted_columns, 5, path, fresh.topup_count(r))
        columns = [np.concatenate([column[rows], extra]) if j not in encoder.categories_
                   else np.concatenate([column[rows].astype(object), extra.astype(object)])
                   for j, (column, extra) in enumerate(zip(fresh.columns, drawn, strict=True))]
        points = encoder.encode_columns(columns)[0]
        assert r == rows.size and points.shape[0] == labels.size == 48
        asked = (fresh.oracle.class_columns(columns) if classes else
                 fresh.oracle.label_columns(columns))
        assert (labels == asked).all()
        assert (fresh.minus_counts(bins)[0] == (points < 0).sum(axis=0)).all()
        own = points[:r]
        varied = np.flatnonzero((own < 0).any(axis=0) & (own > 0).any(axis=0))
        if isinstance(decision, NodeDecision):
            splits += 1
            chosen = (best_class_split(points, labels, classes, varied) if classes else
                      best_split(points, labels, varied))
            assert chosen == decision.variable
    assert splits >= 5


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

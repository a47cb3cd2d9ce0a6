"""One data-mode tree for a multi-class model (docs/randomness.md §10, multi-class trees)."""

import json
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from rows_support import rule, table

from lca.decisions import ClassLeafDecision, LeafDecision, RowsSplit
from lca.export import ReconstructedTree
from lca.models import ClassLabels, LowFidelityWarning, Not, Surrogate
from lca.models.oracle import from_classifier
from lca.models.rows import best_split
from lca.oracle import OracleError


class Three:
    """A model of three classes over rows_support.table; ``classes_`` deliberately unsorted."""

    classes_ = np.array(["z", "y", "x"])

    def predict(self, frame):
        x, y = frame["x"].to_numpy(float), frame["y"].to_numpy(float)
        red = (frame["colour"] == "red").to_numpy()
        out = np.where(x > 0.5, "x", np.where(y > 0.0, "y", "z"))
        return np.where(red, "x", out)


class Fixed:
    """A model answering given labels, row by row (its rows carry their index in ``i``)."""

    def __init__(self, classes, labels):
        self.classes_ = np.array(classes)
        self.labels = np.array(labels)

    def predict(self, frame):
        return self.labels[frame["i"].to_numpy(int)]


def multiclass(rows=600, **kwargs):
    return Surrogate(Three(), **{"depth": 5, **kwargs}).fit(table(rows))


# -- the rules ---------------------------------------------------------------------------------

def test_a_class_tie_goes_to_the_lowest_index_in_classes_order():
    # 40 rows, half "y" (index 1) and half "x" (index 2): no split (depth 0), a tie among
    # the fitted rows and (no row drawn: 40 = rows_per_node) among the weights.
    rows = pd.DataFrame({"i": np.arange(40), "v": np.arange(40.0)})
    model = Fixed(["z", "y", "x"], ["x", "y"] * 20)
    surrogate = Surrogate(model, depth=0, rows_per_node=40).fit(rows)
    leaf = surrogate.tree().decisions[()]
    assert isinstance(leaf, ClassLeafDecision)
    assert (leaf.label, leaf.samples, leaf.total) == (1, 40, 20)
    assert surrogate.predict(rows).tolist() == ["y"] * 40
    # One more "x" than "y": the majority wins, whatever the order.
    model = Fixed(["z", "y", "x"], ["x", "y"] * 19 + ["x", "x"])
    leaf = Surrogate(model, depth=0, rows_per_node=40).fit(rows).tree().decisions[()]
    assert (leaf.label, leaf.total) == (2, 21)


def _exact(minus, totals):
    """best_split's rule in Fractions: every candidate of largest positive A / B."""
    whole = sum(totals)
    parent = Fraction(sum(c * c for c in totals), whole)
    scores = {}
    for v in range(len(minus[0])):
        below = [minus[c][v] for c in range(len(totals))]
        above = [t - b for t, b in zip(totals, below, strict=True)]
        score = Fraction(sum(b * b for b in below), sum(below)) + \
            Fraction(sum(a * a for a in above), sum(above))
        if score > parent:
            scores[v] = score
    if not scores:
        return []
    top = max(scores.values())
    return [v for v, score in scores.items() if score == top]


def test_the_gain_sums_squared_weights_over_every_class():
    # Classes [0,0,1,1,2,2] (weights 1); candidate 0 splits {0,0,1}|{1,2,2}, candidate 1
    # {0,0}|{1,1,2,2}: over three classes S0 = 5/3 + 5/3 = 10/3 < S1 = 4/2 + 8/4 = 4.
    totals = np.array([2, 2, 2])
    minus = np.array([[2, 2], [1, 0], [0, 0]])
    assert best_split(minus, totals).tolist() == [1]
    # "class 2 or not" picks candidate 0 instead (S0 = 9/3 + 5/3 > S1 = 2 + 8/4).
    assert best_split(np.array([[3, 2], [0, 0]]), np.array([4, 2])).tolist() == [0]
    # Equal gains: every one of them, in increasing order.
    assert best_split(minus[:, [1, 1]], totals).tolist() == [0, 1]


def test_the_gain_is_compared_exactly_with_large_weights_and_needs_to_be_positive():
    rng = np.random.default_rng(7)
    for trial in range(400):
        classes, candidates = int(rng.integers(2, 5)), int(rng.integers(1, 8))
        # Weights as large as a node's can be (4096 fitted rows weighing 4096 each).
        scale = int(rng.choice([1, 3, 4096 * 4096]))
        totals = rng.integers(1, 30, classes) * scale
        minus = np.stack([rng.integers(0, t // scale + 1, candidates) * scale
                          for t in totals])
        sides = minus.sum(axis=0)
        keep = (sides > 0) & (sides < totals.sum())  # both sides weigh something
        minus = minus[:, keep]
        if minus.shape[1] == 0:
            continue
        assert best_split(minus, totals).tolist() == _exact(minus.tolist(),
                                                             totals.tolist()), trial
    # A split that leaves each side with the parent's proportions has no positive gain.
    assert best_split(np.array([[2], [4]]), np.array([4, 8])).tolist() == []
    assert best_split(np.array([[2], [4]]), np.array([4, 9])).tolist() == [0]


def test_a_pure_node_is_a_leaf_of_its_class():
    rows = pd.DataFrame({"i": np.arange(30), "v": np.arange(30.0)})
    surrogate = Surrogate(Fixed(["a", "b", "c"], ["c"] * 30), depth=4,
                          rows_per_node=30).fit(rows)
    tree = surrogate.tree()
    assert tree.decisions == {(): ClassLeafDecision(2, 30, 30)}
    # Pure on three classes means one class: two classes below the root still split.
    labels = ["a"] * 15 + ["b"] * 15
    split = Surrogate(Fixed(["a", "b", "c"], labels), depth=4, rows_per_node=30).fit(rows)
    decisions = split.tree().decisions
    assert isinstance(decisions[()], RowsSplit)
    assert all(d.total == d.samples for d in split.tree().leaves.values())
    assert split.predict(rows).tolist() == labels


class ByValue:
    """Three classes of one column ``v``: below 30, "a" on even values and "c" on odd ones;
    from 30, "b"."""

    classes_ = np.array(["a", "b", "c"])

    def predict(self, frame):
        v = frame["v"].to_numpy(float)
        return np.where(v >= 30, "b", np.where(v % 2 == 0, "a", "c"))


def test_a_class_unseen_in_a_region_or_in_the_rows_never_answers_there():
    # The root splits "b" off (v >= 29.5: S = 450/30 + 900/30 = 45, the largest); below
    # it, at the depth cap, "b" is unseen and the leaf answers "a" or "c"; the other side
    # is pure "b".
    rows = pd.DataFrame({"v": np.arange(60.0)})
    surrogate = Surrogate(ByValue(), depth=1, rows_per_node=60).fit(rows)
    tree = surrogate.tree()
    root = tree.decisions[()]
    assert tree.conditions[()] == ("v < 29.5", "v >= 29.5")
    below, above = (tree.decisions[((root.variable, bit),)] for bit in (-1, 1))
    assert isinstance(below, ClassLeafDecision) and below.label in (0, 2)
    assert below.samples == 60 and 30 <= below.total < 60  # drawn rows: "a" and "c" only
    assert above == ClassLeafDecision(1, 60, 60)
    assert set(surrogate.predict(rows[:30]).tolist()) == {"abc"[below.label]}
    # A class the model never predicts on these rows ("q") is never answered.
    model = Fixed(["q", "a", "b"], ["a"] * 20 + ["b"] * 20)
    rows = pd.DataFrame({"i": np.arange(40), "v": np.r_[np.zeros(20), np.ones(20)]})
    unseen = Surrogate(model, depth=3, rows_per_node=40).fit(rows)
    assert unseen.predict(rows).tolist() == ["a"] * 20 + ["b"] * 20
    assert 0 not in {leaf.label for leaf in unseen.tree().leaves.values()}
    assert unseen.classes_.tolist() == ["q", "a", "b"]
    back = Surrogate.from_json(unseen.to_json())
    assert back.predict(rows).tolist() == unseen.predict(rows).tolist()


def test_positive_still_gives_the_one_vs_rest_tree():
    one = Surrogate(Three(), positive="y", depth=4).fit(table(400))
    assert one.classes_.tolist() == [Not("y"), "y"]
    tree = one.tree()
    assert not tree.multiclass and tree.class_names == ("not y", "y")
    assert all(type(leaf) is LeafDecision for leaf in tree.leaves.values())
    # The same tree as a 0/1 function of "the model predicts y".
    function = Surrogate(lambda frame: (Three().predict(frame) == "y").astype(int), positive=1,
                         depth=4).fit(table(400))
    assert function.tree().decisions == tree.decisions
    predicted = one.predict(table(400))
    assert set(predicted.tolist()) == {"y", Not("y")}
    np.testing.assert_array_equal(predicted == "y", one.tree_.answers(
        one.encoder_.encode(table(400))) > 0)


# -- the estimator's surfaces ---------------------------------------------------------------

def test_predict_explain_and_leaves_name_the_model_classes():
    surrogate = multiclass()
    rows = table(300, seed=1)
    predicted = surrogate.predict(rows)
    assert set(predicted.tolist()) <= {"x", "y", "z"} and len(set(predicted.tolist())) == 3
    assert surrogate.classes_.tolist() == ["z", "y", "x"]
    tree = surrogate.tree()
    assert tree.multiclass and tree.class_names == ("z", "y", "x")
    assert tree.query(surrogate.encoder_.encode(rows)).dtype == np.int64
    np.testing.assert_array_equal(surrogate.classes_[tree.query(surrogate.encoder_.encode(rows))],
                                  predicted)
    for i in range(5):
        rules = surrogate.explain(rows.iloc[i], rows)
        assert rules.prediction == predicted[i]
        assert rules.prediction == surrogate.classes_[rules.leaf.label]
        assert str(rules).split(" => ")[1].startswith(repr(str(predicted[i])))
        assert f"{rules.leaf.total}/{rules.leaf.samples} with the rows drawn" in str(rules)
    model = surrogate.oracle_.class_rows(rows)
    leaves = surrogate.leaves(rows)
    assert sum(r.on_rows.reach for r in leaves) == 300
    assert sum(r.on_rows.agree for r in leaves) == int(
        (surrogate.classes_[model] == predicted).sum())
    text = tree.to_text()
    assert ": x (" in text and ": y (" in text and ": z (" in text


def test_fidelity_counts_the_same_class_and_the_baseline_is_the_most_common_class():
    surrogate = multiclass()
    rows = table(400, seed=2)
    labels = Three().predict(rows)
    fidelity = surrogate.fidelity(rows, samples=500)
    assert fidelity.data.rate == float(np.mean(surrogate.predict(rows) == labels))
    common = max(np.unique(labels, return_counts=True)[1])
    assert fidelity.baseline == common / 400
    assert fidelity.data.rate > fidelity.baseline and fidelity.concerns == ()
    report = surrogate.report(rows)
    assert "one tree over its 3 classes ['z', 'y', 'x']" in report
    assert f"majority-label baseline {common / 400:.3f}" in report
    # A root leaf answers one class: no better than the baseline, said so.
    stump = multiclass(depth=0)
    with pytest.warns(LowFidelityWarning, match=r"no better than always answering the model's "
                                                r"most common label 'x' \(0\.477\)"):
        stump.fidelity(rows, samples=100)


@pytest.mark.parametrize("label, flagged", [(0, False), (1, True), (2, True)])
def test_a_leaf_is_flagged_when_its_class_is_not_its_rows_plurality(label, flagged):
    """40% / 35% / 25% of a leaf's rows: the plurality class 0 is what the leaf should answer,
    though it holds fewer than half; class 1 and 2 answer against the model's majority."""
    from lca.models.quality import against_majority

    labels = np.repeat([0, 1, 2], [40, 35, 25])
    leaf = ClassLeafDecision(label=label, samples=100, total=int((labels == label).sum()))
    said = against_majority([("the leaf", leaf, labels)], 100, 3, "rows given")
    assert bool(said) == flagged
    # A tie with the plurality is not flagged: 50 / 50 over two of three classes.
    tied = np.repeat([0, 1], [50, 50])
    assert against_majority([("t", ClassLeafDecision(1, 100, 50), tied)], 100, 3, "rows") == []
    assert against_majority([("t", ClassLeafDecision(2, 100, 0), tied)], 100, 3, "rows") != []


def test_json_round_trip_is_bit_identical_and_answers_alike():
    surrogate = multiclass()
    text = surrogate.to_json()
    back = Surrogate.from_json(text)
    assert back.to_json() == text
    rows = table(200, seed=3)
    assert back.predict(rows).tolist() == surrogate.predict(rows).tolist()
    assert back.explain(rows.iloc[0]) == surrogate.explain(rows.iloc[0])
    document = json.loads(text)
    assert document["classes"] == ["z", "y", "x"] and document["positive"] is None
    assert document["tree"]["class_names"] == ["z", "y", "x"]
    assert {node["kind"] for node in document["tree"]["nodes"]} == {"split", "class"}
    again = Surrogate.from_json(text, model=Three())
    assert again.fidelity(rows, samples=50).data.rate == surrogate.fidelity(
        rows, samples=50).data.rate
    with pytest.raises(ValueError, match=r"'model' parameter of lca.models.from_classifier "
                                         r"must be a classifier of more than two classes"):
        Surrogate.from_json(text, model=Fixed(["a", "b"], ["a"]))


def _edit(text, change):
    document = json.loads(text)
    change(document)
    return json.dumps(document)


def _first_leaf(document):
    return next(node for node in document["tree"]["nodes"] if node["kind"] == "class")


EDITS = {
    "leaf class out of range": (
        lambda d: _first_leaf(d)["decision"].update(label=3),
        r"a class leaf's label must be a class index in \[0, 3\)\. Got 3"),
    "leaf class negative": (
        lambda d: _first_leaf(d)["decision"].update(label=-1),
        r"a class leaf's label must be a class index in \[0, 3\)\. Got -1"),
    "leaf total past its samples": (
        lambda d: _first_leaf(d)["decision"].update(total=10 ** 6),
        r"a class leaf's 'total' .* must be in \[0, samples=\d+\]"),
    "a yes/no leaf among class leaves": (
        lambda d: (_first_leaf(d)["decision"].update(label=1), _first_leaf(d).update(kind="leaf")),
        r"the leaves mix kinds 'leaf' \(labels -1/\+1\) and 'class'"),
    "class names of two": (
        lambda d: d["tree"].update(class_names=["z", "y"]),
        r"'class_names' must be one string per class \(at least 3\)"),
    "class names reordered": (
        lambda d: d["tree"].update(class_names=["y", "z", "x"]),
        r"'tree.class_names' \['y', 'z', 'x'\] must be the 'classes'"),
    "classes repeated": (
        lambda d: d.update(classes=["z", "z", "x"]),
        r"'classes' must be different labels of one type"),
    "a positive class": (
        lambda d: d.update(positive="y"),
        r"'positive' must be null: a tree over the 3 'classes' answers a class"),
    "classes swapped": (  # consistent with the tree, but the digest says no
        lambda d: (d.update(classes=["y", "z", "x"]),
                   d["tree"].update(class_names=["y", "z", "x"])),
        r"'digest' does not match"),
}


@pytest.mark.parametrize("name", EDITS)
def test_an_edited_document_is_refused(name):
    change, message = EDITS[name]
    with pytest.raises(ValueError, match=message):
        Surrogate.from_json(_edit(multiclass(rows=300).to_json(), change))


def test_a_product_document_cannot_hold_more_than_two_classes():
    text = Surrogate(Three(), positive="y", distribution="product", depth=2).fit(
        table(200)).to_json()
    with pytest.raises(ValueError, match=r"'classes' must be two different labels"):
        Surrogate.from_json(_edit(text, lambda d: d.update(classes=["z", "y", "x"])))


def test_a_tree_alone_checks_its_class_leaves():
    tree = multiclass(rows=300).tree()
    document = json.loads(tree.to_json())
    assert ReconstructedTree.from_json(tree.to_json()) == tree
    with pytest.raises(ValueError, match=r"'class_names' must be one string per class"):
        ReconstructedTree.from_json(json.dumps({k: v for k, v in document.items()
                                                if k != "class_names"}))
    with pytest.raises(ValueError, match=r"lca.targets.DecisionTree holds -1/\+1 labels only"):
        tree.to_decision_tree()


# -- what is refused ------------------------------------------------------------------------

def test_product_mode_still_needs_positive_and_names_the_data_mode():
    with pytest.raises(ValueError, match=r"has 3 classes \['z', 'y', 'x'\], and a product-"
                                         r"distribution tree answers one yes/no question\. "
                                         r".*for ONE tree whose leaves answer the model's "
                                         r"class use "
                                         r"distribution='data' \(the default\)"):
        Surrogate(Three(), distribution="product").fit(table(100))


def test_a_threshold_without_positive_is_refused_for_many_classes():
    class Scored(Three):
        def predict_proba(self, frame):
            return np.full((len(frame), 3), 1 / 3)

    with pytest.raises(ValueError, match=r"threshold=0\.5 cuts the score of one class, but "
                                         r"model Scored has 3 classes"):
        Surrogate(Scored(), threshold=0.5).fit(table(100))


def test_the_class_oracle_answers_indices_and_refuses_plus_minus_one():
    surrogate = multiclass(rows=200)
    oracle = surrogate.oracle_
    rows = table(50, seed=4)
    expected = [["z", "y", "x"].index(c) for c in Three().predict(rows)]
    assert oracle.class_rows(rows).tolist() == expected
    # A class-valued oracle of its own: no yes/no side to ask.
    assert oracle.label_names == ("z", "y", "x") and isinstance(oracle, ClassLabels)
    assert not hasattr(oracle, "label_rows") and not hasattr(oracle, "query")
    bad = Fixed(["a", "b", "c"], ["a", "d"])
    frame = pd.DataFrame({"i": [0, 1], "v": [0.0, 1.0]})
    wrapped = from_classifier(bad, surrogate.encoder_.__class__().fit(frame))
    with pytest.raises(OracleError, match=r"returned 'd', which is not one of its classes"):
        wrapped.class_rows(frame)
    with pytest.raises(ValueError, match=r"must be a classifier of more than two classes"):
        from_classifier(Fixed(["a", "b"], ["a"]), surrogate.encoder_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Surrogate(rule, positive=1, depth=2).fit(table(100)).classes_.tolist() == [0, 1]

"""lca.models.Surrogate: the estimator, DataFrames, agreement of every route, JSON, clone."""

from __future__ import annotations

import itertools
import json
import pickle
import warnings

import numpy as np
import pytest

import lca
from lca.models import LowFidelityWarning, QuantileEncoder, Surrogate
from lca.tester import hoeffding_halfwidth

pd = pytest.importorskip("pandas")
sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

from models_support import loans  # noqa: E402

# Tests that are not about warnings ignore LowMarginWarning (the warnings tests
# below pin it separately).
pytestmark = pytest.mark.filterwarnings("ignore::lca.reconstruct.LowMarginWarning")


@pytest.fixture(scope="module")
def cancer():
    data = load_breast_cancer(as_frame=True)
    y = data.target.map({0: "malignant", 1: "benign"})
    model = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0)
    return data.data, model.fit(data.data, y)


@pytest.fixture(scope="module")
def loan_model():
    X, y = loans()
    model = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["size_class", "region"])],
                          remainder="passthrough"),
        LogisticRegression(max_iter=1000))
    return X, model.fit(X, y)


# -- every route answers alike ---------------------------------------------------------

def test_tree_predict_explain_and_json_agree_on_every_row(cancer) -> None:
    X, model = cancer
    surrogate = Surrogate(model, distribution="product", depth=5).fit(X)
    assert surrogate.classes_.tolist() == ["benign", "malignant"]  # positive: classes_[1]
    before = surrogate.predict(X)  # the reconstructor, path by path
    rules = [surrogate.explain(X.iloc[i]) for i in range(0, len(X), 7)]
    tree = surrogate.tree()
    assert tree.complete and tree.class_names == ("benign", "malignant")
    points = surrogate.encoder_.encode(X)
    expected = np.where(tree.query(points) > 0, "malignant", "benign")
    np.testing.assert_array_equal(before, expected)
    np.testing.assert_array_equal(surrogate.predict(X), expected)  # now from the tree
    back = Surrogate.from_json(surrogate.to_json())
    np.testing.assert_array_equal(back.predict(X), expected)
    assert back.tree() == tree
    for i, rule in zip(range(0, len(X), 7), rules, strict=True):
        assert rule.prediction == expected[i]
        assert surrogate.explain(X.iloc[i]) == rule == back.explain(X.iloc[i])
        # The rules are the conditions along the row's path in the tree.
        assert rule.conditions == tuple(
            tree.conditions[rule.path[:k]][0 if bit < 0 else 1]
            for k, (_, bit) in enumerate(rule.path))
    assert set(expected) == {"benign", "malignant"}  # not vacuous
    # Rows as lists, arrays and one-row frames explain alike.
    row = X.iloc[3]
    assert surrogate.explain(row.to_numpy()) == surrogate.explain(X.iloc[[3]]) == \
        surrogate.explain(row.tolist()) == surrogate.explain(row)
    leaf = rules[0].leaf
    agree = (leaf.samples + leaf.label * leaf.total) // 2
    assert str(rules[0]) == " AND ".join(rules[0].by_feature) + \
        f" => {rules[0].prediction!r} (leaf: {agree}/{leaf.samples} product samples agree)"


def test_same_answers_in_another_process_and_after_pickling(cancer) -> None:
    X, model = cancer
    surrogate = Surrogate(model, distribution="product", depth=4, seed=3).fit(X)
    expected = surrogate.predict(X.iloc[:60])
    again = pickle.loads(pickle.dumps(surrogate))
    np.testing.assert_array_equal(again.predict(X.iloc[:60]), expected)
    with lca.parallel.ReplicaPool(surrogate.oracle_, surrogate.params_, workers=2) as pool:
        answers = pool.answer(surrogate.encoder_.encode(X.iloc[:60]), 3).answers
    np.testing.assert_array_equal(np.where(answers > 0, "malignant", "benign"), expected)


def test_fidelity_on_data_and_product_distribution(cancer) -> None:
    X, model = cancer
    surrogate = Surrogate(model, distribution="product", depth=4).fit(X)
    fidelity = surrogate.fidelity(X, samples=500)
    model_side = model.predict(X) == "malignant"
    assert fidelity.data.rate == np.mean((surrogate.predict(X) == "malignant") == model_side)
    assert fidelity.data.rows == len(X)
    assert fidelity.data.halfwidth == hoeffding_halfwidth(len(X), 0.05)
    points = lca.derive.sample_points(0, "surrogate-fidelity", surrogate.oracle_.n, 500)
    tree = surrogate.tree()
    assert fidelity.product.rate == np.mean(tree.query(points) == surrogate.oracle_(points))
    assert fidelity.product.halfwidth == hoeffding_halfwidth(500, 0.05)
    assert 0.5 < fidelity.product.rate < 1 and 0.5 < fidelity.data.rate <= 1
    assert surrogate.fidelity().data is None
    # The baseline: the share of the model's most common label on the rows.
    assert fidelity.baseline == max(model_side.sum(), (~model_side).sum()) / len(X)
    # A leaf holding at least 5% of the rows whose label most of them contradict is said.
    against = [rules for rules in surrogate.leaves(X) if 20 * rules.on_rows.reach >= len(X)
               and 2 * rules.on_rows.agree < rules.on_rows.reach]
    assert [len(against)] == [1] and fidelity.concerns == (
        f"the leaf {' AND '.join(against[0].by_feature)} holds {against[0].on_rows.reach} of the "
        f"{len(X)} rows given ({against[0].on_rows.reach / len(X):.0%}) and answers against the "
        f"model on {against[0].on_rows.reach - against[0].on_rows.agree} of them: its label is "
        "not their majority.",)
    with pytest.warns(LowFidelityWarning, match="answers against the model on"):
        report = surrogate.report(X)
    lines = report.splitlines()
    assert lines[0] == "Surrogate of GradientBoostingClassifier: 'malignant' vs 'benign'"
    assert lines[3] == f"  model queries spent building the tree: " \
                       f"{surrogate.tree_.reconstructor.stats.queries:,}"
    # The rows given first, beside their baseline; then the product samples, said so.
    assert lines[4] == f"  agreement on the rows given: {fidelity.data}; majority-label " \
                       f"baseline {fidelity.baseline:.3f}"
    assert lines[5] == "  agreement on the product distribution (features independent): " \
                       f"{surrogate.fidelity().product.rate:.3f} ± " \
                       f"{hoeffding_halfwidth(2000, 0.05):.3f} (2000 samples)"
    assert str(fidelity) == f"on the rows given {fidelity.data}, majority-label baseline " \
        f"{fidelity.baseline:.3f}; on the product distribution {fidelity.product.rate:.3f} ± " \
        f"{fidelity.product.halfwidth:.3f} (500 samples)"


def test_json_holds_the_encoder_and_needs_the_model_only_for_fidelity(cancer) -> None:
    X, model = cancer
    surrogate = Surrogate(model, distribution="product", depth=3).fit(X)
    text = surrogate.to_json()
    document = json.loads(text)
    assert document["format"] == "lca.models.Surrogate" and document["encoder"]["bits"] == 3
    alone = Surrogate.from_json(text)
    with pytest.raises(ValueError, match=r"Surrogate.fidelity compares with the model, which "
                                         r"this Surrogate \(read from JSON\) does not hold"):
        alone.fidelity()
    assert alone.to_json() == text
    with_model = Surrogate.from_json(text, model=model)
    assert with_model.fidelity(X) == surrogate.fidelity(X)
    with pytest.raises(ValueError, match=r"not a saved Surrogate"):
        Surrogate.from_json(surrogate.tree().to_json())
    with pytest.raises(TypeError, match=r"The 'text' parameter of Surrogate.from_json"):
        Surrogate.from_json(document)
    # A leaf cut out of the saved tree: refused when read, not at the first predict.
    leaf = next(i for i, node in enumerate(document["tree"]["nodes"]) if node["kind"] == "leaf")
    cut = document["tree"]["nodes"].pop(leaf)
    with pytest.raises(ValueError, match=r"Surrogate.from_json: the saved tree is incomplete "
                                         r"\(unexplored at \(\(" + str(cut["path"][0][0])):
        Surrogate.from_json(json.dumps(document))


# -- the scikit-learn protocol -------------------------------------------------------------

def test_clone_get_params_set_params_and_errors_before_fit(cancer) -> None:
    X, model = cancer
    surrogate = Surrogate(model, distribution="product", depth=3, params={"pairs": 32})
    copy = clone(surrogate)
    assert copy is not surrogate and copy.model is model  # the model is the oracle: kept
    assert copy.get_params() == surrogate.get_params()
    with pytest.raises(ValueError, match=r"This Surrogate is not fitted yet; call fit\(X\) "
                                         r"before predict"):
        copy.predict(X)
    for method in ("explain", "tree", "fidelity", "report", "to_json"):
        with pytest.raises(ValueError, match=f"before {method}"):
            getattr(copy, method)(*([X.iloc[0]] if method == "explain" else []))
    fitted = copy.fit(X)
    assert fitted is copy and copy.params_.score_samples == 32 and copy.params_.depth == 3
    assert copy.set_params(depth=2) is copy and copy.depth == 2
    with pytest.raises(ValueError, match=r"Invalid parameter 'bits' for estimator Surrogate"):
        copy.set_params(bits=2)
    assert repr(surrogate) == "Surrogate(GradientBoostingClassifier, depth=3, " \
                              "params={'pairs': 32}, distribution='product')"


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(depth=31), ValueError, r"The 'depth' parameter of Surrogate.fit must be an int in "
                                 r"the range \[0, 30\]"),
    (dict(seed=-1), ValueError,
     r"The 'seed' parameter of Surrogate must be an int in the range \[0, 2\*\*64\)"),
    (dict(params="fast"), TypeError, r"The 'params' parameter of Surrogate.fit must be None"),
    (dict(params={"bits": 2}), TypeError, r"must hold arguments of lca.Params.efficient"),
    (dict(params=lca.Params.efficient(5)), ValueError, r"has n=5, but the encoder makes 90"),
    (dict(encoder="quantiles"), TypeError, r"The 'encoder' parameter of Surrogate.fit"),
    (dict(positive="healthy"), ValueError, r"positive='healthy' is not one of the model's "
                                           r"classes \['benign', 'malignant'\]"),
])
def test_bad_parameters_are_refused_at_fit(cancer, kwargs, error, match) -> None:
    X, model = cancer
    with pytest.raises(error, match=match):
        Surrogate(model, distribution="product", **kwargs).fit(X)


# -- DataFrames, strings, warnings ----------------------------------------------------------

def test_string_categories_by_name_and_partitions(loan_model) -> None:
    X, model = loan_model
    encoder = QuantileEncoder(bits=2, categorical=["size_class", "region"]).fit(X)
    assert encoder.feature_names == ("income", "size_class", "region", "age")
    assert encoder.categories_[1].tolist() == ["large", "medium", "small"]
    decoded = encoder.decode(lca.consistency.uniform_queries(1, encoder.n_bits, 50))
    assert list(decoded.columns) == list(X.columns)
    assert set(decoded.size_class) <= {"large", "medium", "small"}
    # Sibling conditions partition the categories whose rows reach the node,
    # at every node a path of this feature's other bits can make.
    for feature, bits in ((1, (2, 3)), (2, (4, 5))):
        categories = encoder.categories_[feature].tolist()
        for variable in bits:
            others = [v for v in bits if v != variable]
            for values in itertools.product((None, -1, 1), repeat=len(others)):
                path = tuple((v, b) for v, b in zip(others, values, strict=True) if b is not None)
                sides = [_listed(encoder.describe(variable, bit, path)) for bit in (-1, 1)]
                reach = {c for c, home in zip(categories, encoder.home_bin_[feature], strict=True)
                         if all(((home >> (1 - (v - 2 * feature))) & 1) == (1 - b) // 2
                                for v, b in path)}
                assert not sides[0] & sides[1] and sides[0] | sides[1] == reach
    # encode sends every row of a category to its home bin, so describe is true of data.
    points = encoder.encode(X)
    for row in range(0, len(X), 37):
        for variable in (2, 3, 4, 5):
            listed = _listed(encoder.describe(variable, int(points[row, variable])))
            assert X.iloc[row, variable // 2] in listed


def _listed(condition: str) -> set[str]:
    inside = condition.split("{", 1)[1].split("}", 1)[0]
    return {part.strip() for part in inside.split(",") if part.strip()}


def test_surrogate_detects_categorical_columns_and_predicts_strings(loan_model) -> None:
    X, model = loan_model
    surrogate = Surrogate(model, distribution="product", positive="repaid", depth=4).fit(X)
    assert surrogate.encoder_.categorical_ == {1, 2}
    assert surrogate.feature_names_in_.tolist() == list(X.columns)
    assert set(surrogate.predict(X)) == {"default", "repaid"}
    text = surrogate.tree().to_text()
    assert "size_class in {" in text and "repaid (" in text and "default (" in text
    assert surrogate.fidelity(X, samples=300).data.rate > 0.8


@pytest.mark.parametrize("maker", ["gradient boosting", "pipeline", "lightgbm"])
def test_no_warnings_from_dataframe_fitted_models(maker, loan_model, cancer) -> None:
    X, model = _warning_case(maker, loan_model, cancer)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        surrogate = Surrogate(model, distribution="product", depth=4).fit(X)
        surrogate.predict(X)
        surrogate.explain(X.iloc[0])
        surrogate.tree()
        surrogate.fidelity(X, samples=200)
        surrogate.report(X)
    # What the tree's fidelity says is reported, not a complaint about feature names.
    others = [w for w in caught if not issubclass(
        w.category, (lca.LowMarginWarning, lca.models.LowFidelityWarning))]
    assert others == [], [str(w.message) for w in others]


def test_no_low_margin_warning_either(cancer) -> None:
    X, model = cancer
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        surrogate = Surrogate(model, distribution="product", depth=4).fit(X)
        surrogate.predict(X)
        surrogate.tree()
    assert caught == []


def _warning_case(maker, loan_model, cancer):
    if maker == "pipeline":
        return loan_model
    if maker == "gradient boosting":
        return cancer
    lightgbm = pytest.importorskip("lightgbm")
    X, y = loans()
    X = X.astype({"size_class": "category", "region": "category"})
    model = lightgbm.LGBMClassifier(n_estimators=20, verbose=-1, random_state=0).fit(X, y)
    return X, model


# -- regression, multi-class ------------------------------------------------------------------

def test_regressors_answer_predict_at_or_above_the_threshold() -> None:
    data = load_diabetes(as_frame=True, scaled=False)
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(data.data,
                                                                          data.target)
    threshold = float(np.median(data.target))
    surrogate = Surrogate(model, distribution="product", threshold=threshold,
                          depth=4).fit(data.data)
    assert surrogate.classes_.tolist() == [False, True]
    answers = surrogate.predict(data.data)
    assert answers.dtype == bool and 0 < answers.mean() < 1
    np.testing.assert_array_equal(surrogate.oracle_.label_rows(data.data) > 0,
                                  model.predict(data.data) >= threshold)
    assert surrogate.tree().class_names == (f"predict < {threshold:g}",
                                            f"predict >= {threshold:g}")
    with pytest.raises(ValueError, match=r"has no classes_ \(a regressor or a plain "
                                         r"function\); pass threshold="):
        Surrogate(model, distribution="product").fit(data.data)


def test_multiclass_needs_positive_and_says_how() -> None:
    iris = load_iris(as_frame=True)
    model = LogisticRegression(max_iter=1000).fit(iris.data, iris.target)
    with pytest.raises(ValueError, match=r"has 3 classes \[0, 1, 2\], and a product-distribution "
                                         r"tree answers one yes/no question\. Pass positive=c "
                                         r"for 'the model predicts c' \(predict then answers c "
                                         r"or lca.models.Not\(c\)\).* "
                                         r"Surrogate\(model, positive=c\)\.fit\(X\) for c in "
                                         r"model.classes_"):
        Surrogate(model, distribution="product").fit(iris.data)
    surrogates = {c: Surrogate(model, distribution="product", positive=c, depth=3).fit(iris.data)
                  for c in model.classes_}
    for c, surrogate in surrogates.items():
        # The model's labels: c, and Not(c), which equals every class but c.
        assert surrogate.classes_.tolist() == [lca.models.Not(c), c]
        assert [str(label) for label in surrogate.classes_] == [f"not {c}", str(c)]
        assert surrogate.tree().class_names == (f"not {c}", str(c))
        fidelity = surrogate.fidelity(iris.data, samples=200)
        assert fidelity.data.rate > 0.8
        predicted, says = surrogate.predict(iris.data), model.predict(iris.data)
        yes = surrogate.tree_.answers(surrogate.encoder_.encode(iris.data)) > 0
        np.testing.assert_array_equal(predicted == c, yes)
        np.testing.assert_array_equal(predicted != c, ~yes)
        # Equal to the model's own label exactly where the tree and the model agree.
        np.testing.assert_array_equal(predicted == says, yes == (says == c))
        assert np.mean(predicted == says) == fidelity.data.rate
    # A threshold on the class's probability works too.
    scored = Surrogate(model, distribution="product", positive=2, threshold=0.3,
                       depth=3).fit(iris.data)
    np.testing.assert_array_equal(scored.oracle_.label_rows(iris.data) > 0,
                                  model.predict_proba(iris.data)[:, 2] >= 0.3)


# -- edges: no rows, a failing model ------------------------------------------------------------

def test_no_rows_predict_nothing_and_fidelity_refuses_them(cancer) -> None:
    X, model = cancer
    surrogate = Surrogate(model, distribution="product", depth=3).fit(X)
    labels = surrogate.predict(X.iloc[:3])
    for built in (False, True):  # answered path by path, then by the whole tree
        if built:
            surrogate.tree()
        empty = surrogate.predict(X.iloc[:0])
        assert empty.shape == (0,) and empty.dtype == labels.dtype
        assert surrogate.predict(X.to_numpy()[:0]).shape == (0,)
    with pytest.raises(ValueError, match=r"^The 'X' parameter of Surrogate.fidelity must have "
                                         r"at least one row: agreement on no rows is "
                                         r"undefined\. Got 0 rows\.$"):
        surrogate.fidelity(X.iloc[:0], samples=10)


class ModelBroke(Exception):
    """What a model raises: nothing lca knows about."""


class BreaksAfter:
    """A binary model that works for ``calls`` calls, then raises :class:`ModelBroke`."""

    classes_ = np.array([0, 1])
    n_features_in_ = 2

    def __init__(self, calls: int) -> None:
        self.calls = calls

    def predict(self, X):
        self.calls -= 1
        if self.calls < 0:
            raise ModelBroke("the model's own failure")
        return (np.asarray(X)[:, 0] > np.asarray(X)[:, 1]).astype(int)


@pytest.mark.parametrize("use", ["predict", "explain", "tree", "fidelity", "from_json"])
def test_what_the_model_raises_comes_out_unchanged(use) -> None:
    X = np.column_stack([np.arange(64.0), (np.arange(64.0) * 7) % 64])
    if use == "from_json":
        text = Surrogate(BreaksAfter(10 ** 6), distribution="product", depth=3).fit(X).to_json()
        surrogate = Surrogate.from_json(text, model=BreaksAfter(0))
        call = lambda: surrogate.fidelity(X, samples=10)  # noqa: E731
    else:
        # fit asks the model nothing
        surrogate = Surrogate(BreaksAfter(0), distribution="product", depth=3).fit(X)
        call = {"predict": lambda: surrogate.predict(X), "explain": lambda: surrogate.explain(X[0]),
                "tree": surrogate.tree,
                "fidelity": lambda: surrogate.fidelity(X, samples=10)}[use]
    with pytest.raises(ModelBroke, match=r"^the model's own failure") as caught:
        call()
    assert any("while calling predict of model 'BreaksAfter'" in note
               for note in caught.value.__notes__)


# -- the user's rows: fidelity beside the baseline, leaves counted on rows, one rule per feature --

class Diagonal:
    """Positive when x0 + x1 >= 100: a depth-2 tree of median cuts errs on its two sides."""

    classes_ = np.array([0, 1])

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        return (X[:, 0] + X[:, 1] >= 100).astype(int)


GRID = np.array([[a, b] for a in range(100) for b in range(100)], dtype=float)


@pytest.fixture(scope="module")
def diagonal():
    """The surrogate and the grid's rows by (tree, model) answer: 'TP', 'TN', 'FN', 'FP'."""
    surrogate = Surrogate(Diagonal(), distribution="product", depth=2,
                          encoder=QuantileEncoder(bits=2)).fit(GRID)
    tree, model = surrogate.predict(GRID), Diagonal().predict(GRID)
    pools = {"TP": (tree == 1) & (model == 1), "TN": (tree == 0) & (model == 0),
             "FN": (tree == 0) & (model == 1), "FP": (tree == 1) & (model == 0)}
    return surrogate, {key: GRID[mask] for key, mask in pools.items()}


def _rows(pools, **counts) -> np.ndarray:
    return np.concatenate([pools[key][:count] for key, count in counts.items()])


@pytest.mark.parametrize("extra, warned", [(0, True), (1, False)])
def test_the_baseline_warning_fires_at_the_baseline_and_not_one_row_above(diagonal, extra,
                                                                          warned) -> None:
    surrogate, pools = diagonal
    # 40 + 3 positive rows, 3 + extra negative ones: the tree is right on 40 + 3 + extra.
    rows = _rows(pools, TP=40, FN=3, TN=3 + extra)
    majority, agree = 43, 43 + extra
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fidelity = surrogate.fidelity(rows)
    assert fidelity.data.rate == agree / len(rows) and fidelity.baseline == majority / len(rows)
    concerns = [str(w.message) for w in caught if w.category is lca.models.LowFidelityWarning]
    sentence = (f"on the {len(rows)} rows given the tree agrees with the model on "
                f"{agree / len(rows):.3f}, no better than always answering the model's most "
                f"common label 1 ({majority / len(rows):.3f}): its rules say little about "
                "these rows.")
    # The 3 FN rows share a leaf (over 5% of the rows, all against it): said too.
    assert len(concerns) == 1 and concerns[0] == "Surrogate.fidelity: " + " Also, ".join(
        fidelity.concerns)
    assert (sentence in fidelity.concerns) == warned
    assert fidelity.concerns[-1].endswith("holds 3 of the "
                                          f"{len(rows)} rows given ({3 / len(rows):.0%}) and "
                                          "answers against the model on 3 of them: its label "
                                          "is not their majority.")
    assert len(fidelity.concerns) == 1 + warned
    assert fidelity.product.rate - 0.1 < fidelity.data.rate  # the far-below rule is quiet


@pytest.mark.parametrize("below, warned", [(0, False), (1, True)])
def test_the_far_below_warning_fires_only_beyond_a_tenth_below_the_product(diagonal, below,
                                                                          warned) -> None:
    surrogate, pools = diagonal
    product = surrogate.fidelity(samples=20).product
    k = round(product.rate * 20)
    assert 14 <= k < 20  # the tree errs on the product samples, but not on most
    # 20 rows, 10 of each label, agreeing on exactly k/20 - 1/10 (k - 2 rows), or one fewer.
    agree = k - 2 - below
    wrong = 20 - agree
    rows = _rows(pools, FN=wrong, TP=10 - wrong, TN=10)
    with pytest.warns(LowFidelityWarning):
        fidelity = surrogate.fidelity(rows, samples=20)
    assert fidelity.data.rate == agree / 20 and fidelity.baseline == 0.5
    sentence = (f"on the 20 rows given the tree agrees with the model on {agree / 20:.3f}, "
                f"more than 0.1 below its {k / 20:.3f} on the product distribution it was "
                "built for (features independent, each with its own marginal): these rows "
                "are unlike it.")
    assert (sentence in fidelity.concerns) == warned
    # The FN rows share one leaf that answers against them: the only other sentence.
    assert len(fidelity.concerns) == 1 + warned
    assert "answers against the model on" in fidelity.concerns[-1]


def test_report_leads_with_the_rows_and_says_what_is_wrong(diagonal) -> None:
    surrogate, pools = diagonal
    rows = _rows(pools, TP=40, FN=3, TN=3)
    with pytest.warns(lca.models.LowFidelityWarning, match=r"no better than always"):
        report = surrogate.report(rows)
    lines = report.splitlines()
    with pytest.warns(lca.models.LowFidelityWarning):
        fidelity = surrogate.fidelity(rows)
    assert lines[4].startswith("  agreement on the rows given: ")
    assert lines[5].startswith("  agreement on the product distribution (features "
                               "independent): ")
    assert lines[6:8] == [f"  warning: {concern}" for concern in fidelity.concerns]
    # Then the leaves holding the most rows, counted on them, most first.
    assert lines[8] == "  the 4 leaves holding the most of the rows given (of 4):"
    reach = [int(line.split("(leaf: ")[1].split(" of ")[0]) for line in lines[9:]]
    assert len(reach) == 4 and reach == sorted(reach, reverse=True) and sum(reach) == 46
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = surrogate.report()  # no rows: no baseline, no leaves listed
    assert len(quiet.splitlines()) == 5 and quiet.splitlines()[4] == lines[5]


def test_leaves_are_counted_on_the_rows_given(cancer) -> None:
    X, model = cancer
    surrogate = Surrogate(model, distribution="product", depth=4).fit(X.iloc[::2])
    held_out = X.iloc[1::2]
    leaves = surrogate.leaves(held_out)
    tree = surrogate.tree()
    assert [rules.path for rules in leaves] == [p for p, d in tree.walk()
                                                if isinstance(d, lca.LeafDecision)]
    model_side = surrogate.oracle_.label_rows(held_out)
    paths = [surrogate.explain(held_out.iloc[[i]]).path for i in range(len(held_out))]
    for rules in leaves:
        reach = np.array([path == rules.path for path in paths])
        assert rules.on_rows == lca.models.OnRows(
            int(reach.sum()), int((model_side[reach] == rules.leaf.label).sum()),
            len(held_out))
    assert sum(rules.on_rows.reach for rules in leaves) == len(held_out)
    # explain(row, X) counts the row's leaf on X alike; without X nothing is counted.
    row = held_out.iloc[5]
    explained = surrogate.explain(row, held_out)
    assert explained.on_rows == next(r.on_rows for r in leaves if r.path == explained.path)
    assert surrogate.explain(row).on_rows is None
    assert all(rules.on_rows is None for rules in surrogate.leaves())
    on_rows = explained.on_rows
    assert str(on_rows) == (f"{on_rows.reach} of {len(held_out)} rows given "
                            f"({on_rows.reach / len(held_out):.1%}), the model agrees on "
                            f"{on_rows.agree} ({on_rows.agree / on_rows.reach:.0%})")
    assert f"(leaf: {on_rows}; " in str(explained)
    assert str(lca.models.OnRows(0, 0, 9)) == "0 of 9 rows given (0.0%)"
    with pytest.raises(ValueError, match=r"^The 'X' parameter of Surrogate.leaves must have at "
                                         r"least one row"):
        surrogate.leaves(held_out.iloc[:0])


def test_explain_gives_one_condition_per_feature_their_intersection() -> None:
    class Band:
        classes_ = np.array([0, 1])

        def predict(self, X):
            X = np.asarray(X, dtype=float)
            return ((X[:, 0] >= 25) & (X[:, 0] < 75) & (X[:, 1] >= 50)).astype(int)

    i = np.arange(100)
    X = np.column_stack([i, i * 37 % 100]).astype(float)
    surrogate = Surrogate(Band(), distribution="product", depth=3,
                          encoder=QuantileEncoder(bits=2)).fit(X)
    rules = surrogate.explain([60.0, 80.0])
    assert rules.prediction == 1
    steps = [(variable // 2, condition) for (variable, _), condition
             in zip(rules.path, rules.conditions, strict=True)]
    assert len(steps) == 3 and len({feature for feature, _ in steps}) == 2  # x0 twice
    # Each feature once, where the path first tests it, as its last (narrowest) step says.
    first = list(dict.fromkeys(feature for feature, _ in steps))
    assert rules.by_feature == tuple([c for f, c in steps if f == feature][-1]
                                     for feature in first)
    assert "49.5 <= x0 < 74.5" in rules.by_feature and "x0 >= 49.5" not in rules.by_feature
    assert str(rules).split(" => ")[0] == " AND ".join(rules.by_feature)
    # A union of intervals is bracketed among the ANDs.
    union = lca.models.Rules((), 1, (), rules.leaf, ("x0 < 1 or 2 <= x0 < 3", "x1 >= 4"))
    assert str(union).startswith("(x0 < 1 or 2 <= x0 < 3) AND x1 >= 4 => 1")


def test_rare_and_integer_columns_fit_and_unseen_integers_are_answered() -> None:
    from sklearn.tree import DecisionTreeClassifier

    i = np.arange(640)
    X = pd.DataFrame({"score": (i * 37 % 640) / 10.0, "pixel": (i * 7 % 17 == 0) * (i % 3 + 4),
                      "flag": (i % 61 == 3).astype(int), "blank": np.zeros(640, dtype=int)})
    assert X.flag.mean() == pytest.approx(0.0172, abs=1e-3)  # a 0/1 column with 1.7% ones
    y = (X.score > 40) | (X.flag == 1)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    surrogate = Surrogate(model, distribution="product", depth=5).fit(X)
    assert surrogate.encoder_.ordered_ == {1, 2, 3}
    # The rare ones have their own side: the tree sends them to the model's answer.
    flagged = X[(X.flag == 1) & (X.score <= 40)]
    assert len(flagged) > 0 and (surrogate.predict(flagged) == True).all()  # noqa: E712
    held_out = X.iloc[:20].assign(pixel=[9] * 20, blank=1)  # integers fit never saw
    with pytest.warns(lca.models.UnseenValueWarning, match=r"'pixel' \(column 1\): 20 rows; "
                                                           r"'blank' \(column 3\): 20 rows\.$"):
        answers = surrogate.predict(held_out)
    np.testing.assert_array_equal(answers, surrogate.predict(X.iloc[:20].assign(pixel=6)))


def test_a_product_tree_deeper_than_16_levels_is_built() -> None:
    from sklearn.tree import DecisionTreeClassifier

    # Reconstructor.materialize refuses more decisions than max_decisions (65,536 by
    # default); the surrogate raises it to the whole tree of its depth, 2^18 - 1 at
    # 17 levels, so a deep product tree is built (here two certified leaves).
    i = np.arange(300)
    X = pd.DataFrame({name: np.sin(i * (k + 1.3)) for k, name in enumerate("abcdef")})
    model = DecisionTreeClassifier(max_depth=1).fit(X, X.a > 0)
    surrogate = Surrogate(model, distribution="product", depth=17).fit(X)
    assert surrogate.params_.path_length == 17
    tree = surrogate.tree()
    assert tree.complete and len(tree.leaves) == 2


@pytest.mark.parametrize("rows, said", [(100, True), (101, False)])
def test_a_leaf_against_its_rows_is_said_from_a_twentieth_of_them(rows, said) -> None:
    """5 rows all against their leaf: said among 100 rows (5%), not among 101."""
    from lca.decisions import LeafDecision
    from lca.models.quality import against_majority

    leaf = LeafDecision(label=1, samples=5, total=5)
    labels = np.full(5, -1)
    assert bool(against_majority([("the leaf", leaf, labels)], rows, 0, "rows")) == said
    # One row short of a tie is said; a tie (the label holds as many rows as the other) is not.
    assert against_majority([("t", leaf, np.array([1, 1, -1, -1, -1, 1]))], 6, 0, "r") == []
    assert against_majority([("t", leaf, np.array([1, 1, -1, -1, -1]))], 5, 0, "r") != []

"""Model adapters and encoders: output mappings, errors, pickling, replicas, marginals, names."""

from __future__ import annotations

import pathlib
import pickle
import re
import warnings

import numpy as np
import pytest

import lca
from lca.consistency import uniform_queries
from lca.models import (
    BinaryEncoder,
    ModelOracle,
    QuantileEncoder,
    Surrogate,
    ThresholdEncoder,
    from_estimator,
)
from lca.models.oracle import positive_class
from lca.oracle import CountingOracle, OracleError
from lca.params import Params

from conftest import all_points

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

IRIS = load_iris()


def params(n: int) -> Params:
    return Params.practical(n, depth=3, noise_rate=0.1, score_samples=200, leaf_samples=100)


def bits_of(points: np.ndarray) -> np.ndarray:
    """The 0/1 features the lca.oracle convention gives a ±1 point: +1 -> 0, -1 -> 1."""
    return (1 - points.astype(np.int64)) // 2


@pytest.fixture(scope="module")
def binary_tree_model():
    """A depth-3 tree on 12 0/1 features: breast cancer's first 12 columns cut at the median."""
    X, y = load_breast_cancer(return_X_y=True)
    X01 = (X[:, :12] >= np.median(X[:, :12], axis=0)).astype(int)
    return DecisionTreeClassifier(max_depth=3, random_state=0).fit(X01, y)


@pytest.fixture(scope="module")
def iris_oracle():
    """Logistic regression for 'virginica' on iris, 2 bits per feature: n = 8."""
    encoder = QuantileEncoder(bits=2, feature_names=IRIS.feature_names).fit(IRIS.data)
    model = LogisticRegression(max_iter=1000).fit(IRIS.data, IRIS.target == 2)
    return from_estimator(model, encoder, positive=True)


# -- wrapping -------------------------------------------------------------------

def test_one_line_wrapping_of_a_01_classifier(binary_tree_model) -> None:
    oracle = from_estimator(binary_tree_model, positive=1, n=12)
    assert isinstance(oracle, lca.Oracle) and oracle.n == 12
    assert "method='predict' (auto)" in repr(oracle) and "positive=1" in repr(oracle)
    points = uniform_queries(1, 12, 500)
    expected = np.where(binary_tree_model.predict(bits_of(points)) == 1, 1, -1)
    np.testing.assert_array_equal(oracle.query(points), expected)
    assert oracle.query(points).dtype == np.int8
    # Plain int lists are validated and accepted when users query directly.
    np.testing.assert_array_equal(oracle(points.astype(int).tolist()), expected)
    with pytest.raises(TypeError, match=r"points of 'DecisionTreeClassifier' must have shape"):
        oracle(points[:, :5])
    counted = CountingOracle(oracle)  # the library's own validation accepts it
    np.testing.assert_array_equal(counted.query(points), expected)
    assert counted.queries == 500


class Rule:
    """A fixed rule on decoded features with a configurable output format.

    ``+1`` exactly when ``x0 + 2 x1 - x2 >= 1`` on the 0/1 features.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.n_features_in_ = 3
        if kind == "strings":
            self.classes_ = np.array(["no", "yes"])
        if kind in ("proba", "multiclass proba", "multiclass labels"):
            self.classes_ = np.array([0, 1, 2])[: 2 if kind == "proba" else 3]

    def truth(self, X: np.ndarray) -> np.ndarray:
        return X[:, 0] + 2 * X[:, 1] - X[:, 2] >= 1

    def predict(self, X: np.ndarray):
        t = self.truth(X)
        return {
            "ints 0/1": t.astype(np.int64),
            "bools": t,
            "floats ±1": np.where(t, 1.0, -1.0),
            "strings": np.where(t, "yes", "no"),
            "column": t.astype(np.int32)[:, None],
            "list": t.astype(int).tolist(),
            "multiclass labels": np.where(t, 2, X[:, 2].astype(int)),
        }[self.kind]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        score = (X[:, 0] + 2 * X[:, 1] - X[:, 2] + 1) / 4  # in [0, 1]; truth <=> >= 0.5
        if self.kind == "proba":
            return np.column_stack([1 - score, score])
        return np.column_stack([(1 - score) / 2, score, (1 - score) / 2])

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        return X[:, 0] + 2 * X[:, 1] - X[:, 2] - 1


def rule_function(X: np.ndarray) -> np.ndarray:
    """A plain batched function with 0/1 outputs (no classes_, no methods)."""
    return (X[:, 0] + 2 * X[:, 1] - X[:, 2] >= 1).astype(np.uint8)


def rule_scores(X: np.ndarray) -> np.ndarray:
    return (X[:, 0] + 2 * X[:, 1] - X[:, 2] - 1)[:, None]


OUTPUT_KINDS = {
    "ints 0/1": dict(positive=1),
    "bools": dict(positive=True),
    "floats ±1": dict(positive=1.0),
    "strings": dict(positive="yes"),
    "column": dict(positive=1),
    "list": dict(positive=1),
    "multiclass labels": dict(positive=2),
    "proba": dict(positive=1, method="predict_proba", threshold=0.5),
    "multiclass proba": dict(positive=1, method="predict_proba", threshold=0.5),
    "decision": dict(method="decision_function", threshold=0.0),
}


@pytest.mark.parametrize("kind", sorted(OUTPUT_KINDS))
def test_every_output_kind_maps_to_plus_minus_one(kind: str) -> None:
    model = Rule(kind)
    oracle = from_estimator(model, n=3, **OUTPUT_KINDS[kind])
    points = all_points(3)
    truth = np.where(model.truth(bits_of(points)), 1, -1)
    answers = oracle.query(points)
    assert answers.dtype == np.int8
    np.testing.assert_array_equal(answers, truth)


@pytest.mark.parametrize("function, kwargs", [(rule_function, dict(positive=1)),
                                              (rule_scores, dict(threshold=0.0))])
def test_plain_batched_functions(function, kwargs) -> None:
    oracle = from_estimator(function, n=3, **kwargs)
    points = all_points(3)
    truth = np.where(Rule("bools").truth(bits_of(points)), 1, -1)
    np.testing.assert_array_equal(oracle.query(points), truth)
    assert oracle.name == function.__name__


def test_the_model_is_called_once_per_batch() -> None:
    calls = []

    class Counting(Rule):
        def predict(self, X):
            calls.append(X.shape)
            return super().predict(X)

    oracle = from_estimator(Counting("ints 0/1"), positive=1, n=3)
    oracle.query(all_points(3))
    assert calls == [(8, 3)]


def test_auto_method_choice_is_explicit_in_repr() -> None:
    both = Rule("proba")
    assert "method='predict' (auto)" in repr(from_estimator(both, positive=1, n=3))
    explicit = from_estimator(both, positive=1, method="predict_proba", threshold=0.7,
                              n=3)
    assert "method='predict_proba'" in repr(explicit) and "(auto)" not in repr(explicit)
    assert "score >= 0.7" in repr(explicit)

    class OnlyScores:
        n_features_in_ = 3
        decision_function = Rule.decision_function

    picked = from_estimator(OnlyScores(), threshold=0.0, n=3)
    assert "method='decision_function' (auto)" in repr(picked)
    # A plain function with a threshold is read as scores, and says it was a choice.
    function = from_estimator(lambda X: X[:, 0].astype(float), threshold=0.5, n=3)
    assert "method='decision_function' (auto) score >= 0.5" in repr(function)


def test_complex_outputs_are_not_labels() -> None:
    """A function without classes must return real 0/1 or ±1 labels; 0j is neither."""
    oracle = from_estimator(lambda X: X[:, 0].astype(complex), positive=1, n=3)
    with pytest.raises(OracleError, match=r"returned 0j, which the mapping does not "
                                          r"know; expected a binary label in \{0, 1\} or "
                                          r"\{-1, \+1\}"):
        oracle.query(all_points(3))


# -- mapping errors -------------------------------------------------------------

class Broken:
    """Returns a configurable wrong output from every method."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.n_features_in_ = 3
        self.classes_ = np.array([0, 1])

    def predict(self, X):
        m = X.shape[0]
        return {"unknown class": np.full(m, 2), "short": np.zeros(m - 1, dtype=int),
                "matrix": np.zeros((m, 2), dtype=int), "strings": np.full(m, "1"),
                "nan label": np.full(m, np.nan)}[self.what]

    def decision_function(self, X):
        m = X.shape[0]
        return {"nan score": np.where(np.arange(m) == 3, np.nan, 0.5),
                "short": np.zeros(m + 1), "text score": np.full(m, "a")}[self.what]

    def predict_proba(self, X):
        return np.full((X.shape[0], 2), 1.5)


@pytest.mark.parametrize("what, method, match", [
    ("unknown class", "predict", r"'Broken' \(predict\) returned 2, which the mapping "
                                 r"does not know; expected one of its classes \[0, 1\]"),
    ("short", "predict", r"'Broken' \(predict\) returned shape \(7,\) for 8 rows"),
    ("matrix", "predict", r"returned shape \(8, 2\) for 8 rows"),
    ("strings", "predict", r"returned '1', which the mapping does not know"),
    ("nan label", "predict", r"returned nan, which the mapping does not know"),
    ("nan score", "decision_function", r"'Broken' \(decision_function\) returned nan at "
                                       r"row 3; scores must be finite"),
    ("short", "decision_function", r"returned shape \(9,\) for 8 rows"),
    ("text score", "decision_function", r"returned dtype <U1; expected numeric scores"),
    ("any", "predict_proba", r"returned probability 1.5; expected values in \[0, 1\]"),
])
def test_bad_model_outputs_raise_oracle_error(what, method, match) -> None:
    kwargs = dict(positive=1) if method != "decision_function" else {}
    if method != "predict":
        kwargs["threshold"] = 0.5
    oracle = from_estimator(Broken(what), method=method, n=3, **kwargs)
    with pytest.raises(OracleError, match=match):
        oracle.query(all_points(3))


def test_labels_outside_01_without_classes_raise() -> None:
    def three_valued(X):
        return X.sum(axis=1)

    oracle = from_estimator(three_valued, positive=1, n=3)
    with pytest.raises(OracleError, match=r"'three_valued' \(predict\) returned 2.0, .* "
                                          r"expected a binary label in \{0, 1\}"):
        oracle.query(all_points(3))


def test_model_exceptions_carry_a_note() -> None:
    def failing(X):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom") as info:
        from_estimator(failing, positive=1, n=3).query(all_points(3))
    assert "while calling predict of model 'failing' on 8 rows" in info.value.__notes__[0]


@pytest.mark.parametrize("model, kwargs, error, match", [
    (Rule("multiclass labels"), {}, ValueError,
     r"pass positive=, the class of Rule \(its classes are \[0, 1, 2\]\) that maps to \+1"),
    (Rule("multiclass proba"), dict(method="predict_proba", threshold=0.5), ValueError,
     r"Rule has 3 classes \[0, 1, 2\]; pass positive="),
    (Rule("proba"), dict(method="predict_proba", threshold=0.5), ValueError,
     r"pass positive= \(one of \[0, 1\]\) to choose which class's probability"),
    (Rule("proba"), dict(positive=1, threshold=0.5), ValueError,
     r"threshold=0.5 is ambiguous for Rule, which has both decision_function and "
     r"predict_proba; pass method="),
    (Rule("strings"), dict(positive="maybe"), ValueError,
     r"positive='maybe' is not one of the model's classes \['no', 'yes'\]"),
    (Rule("proba"), dict(positive=1, method="predict", threshold=0.5), ValueError,
     r"threshold= applies to scores, not to predict's labels"),
    (Rule("proba"), dict(method="decision_function"), ValueError,
     r"method='decision_function' gives scores; pass threshold="),
    (Rule("proba"), dict(method="decision_function", positive=0, threshold=0.0), ValueError,
     r"decision_function of a binary model scores its second class 1"),
    (Rule("proba"), dict(method="predict_log_proba", positive=1), ValueError,
     r"The 'method' parameter of lca.models.from_estimator must be one of"),
    (Rule("proba"), dict(positive=1, threshold="high", method="predict_proba"), TypeError,
     r"The 'threshold' parameter of lca.models.from_estimator must be a real number"),
    (rule_function, dict(positive=1), ValueError, r"the model has no n_features_in_; pass n="),
    (rule_function, dict(positive="yes", n=3), ValueError,
     r"model rule_function has no classes_, so its labels must be 0/1 or ±1"),
    (Rule("ints 0/1"), dict(positive=1, n=4), ValueError, r"model Rule takes 3 features but "
                                                         r"the encoder produces 4"),
    (object(), dict(positive=1), TypeError, r"The 'model' parameter of lca.models."
                                            r"from_estimator must be callable"),
    (Rule("ints 0/1"), dict(positive=1, n=0), ValueError, r"The 'n' parameter"),
])
def test_ambiguous_or_inconsistent_mappings_are_rejected(model, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        from_estimator(model, **kwargs)


def test_a_binary_encoder_of_a_width_has_at_least_one_feature() -> None:
    assert BinaryEncoder.of_width("lca.models.from_estimator", 1, None).n_bits == 1
    with pytest.raises(ValueError, match=r"^The 'n' parameter of lca.models.from_estimator "
                                         r"must be an int in the range \[1, "):
        BinaryEncoder.of_width("lca.models.from_estimator", 0, None)


def test_encoder_must_be_fitted_and_match() -> None:
    model = Rule("ints 0/1")
    with pytest.raises(ValueError, match=r"^This QuantileEncoder is not fitted yet; call "
                                         r"fit\(X\) before lca.models.from_estimator\.$"):
        from_estimator(model, QuantileEncoder(), positive=1)
    with pytest.raises(TypeError, match=r"must be a fitted product encoder \(QuantileEncoder "
                                        r"or BinaryEncoder\), whose points decode into rows, "
                                        r"or None\. Got str instead\.$"):
        from_estimator(model, "quantiles", positive=1)
    with pytest.raises(TypeError, match=r"Got ThresholdEncoder instead; its points are regions "
                                        r"of rows, not rows"):
        from_estimator(model, ThresholdEncoder().fit(IRIS.data), positive=1)
    encoder = QuantileEncoder(bits=2).fit(IRIS.data)
    with pytest.raises(ValueError, match=r"takes 3 features but the encoder produces 4"):
        from_estimator(model, encoder, positive=1)
    with pytest.raises(ValueError, match=r"n=5 disagrees with the encoder's n_bits=8"):
        from_estimator(rule_function, encoder, positive=1, n=5)


# -- pickling and replicas --------------------------------------------------------

def test_pickles_with_the_model(iris_oracle) -> None:
    points = uniform_queries(2, iris_oracle.n, 300)
    clone = pickle.loads(pickle.dumps(iris_oracle))
    assert isinstance(clone, ModelOracle) and repr(clone) == repr(iris_oracle)
    np.testing.assert_array_equal(clone.query(points), iris_oracle.query(points))


@pytest.mark.filterwarnings("ignore::lca.reconstruct.LowMarginWarning")  # about answers only
def test_answers_equal_through_pool_dask_and_answer(iris_oracle) -> None:
    n = iris_oracle.n
    p = params(n)
    points = uniform_queries(3, n, 200)
    expected = lca.Reconstructor(iris_oracle, p).answer_many(points, 5)
    # The tree is not constant, so equality below is not vacuous.
    assert set(expected.tolist()) == {-1, 1}
    one_by_one = [lca.answer(z, 5, oracle=iris_oracle, params=p) for z in points[:20]]
    assert one_by_one == expected[:20].tolist()
    with lca.parallel.ReplicaPool(iris_oracle, p, workers=2) as pool:
        np.testing.assert_array_equal(pool.answer(points, 5).answers, expected)
    pytest.importorskip("dask.array")
    from lca.distributed import answer_array

    # The "processes" scheduler unpickles the description in worker processes.
    lazy = answer_array(points, oracle=iris_oracle, params=p, seed=5, rows_per_block=70)
    np.testing.assert_array_equal(lazy.compute(scheduler="processes", num_workers=2),
                                  expected)


# -- encoders: marginals ------------------------------------------------------------

def decoded_all(encoder) -> np.ndarray:
    return encoder.decode(all_points(encoder.n_bits))


def test_uniform_bits_give_each_feature_its_quantile_bins_exactly() -> None:
    X = load_wine().data[:, :3]  # 178 rows
    encoder = QuantileEncoder(bits=2).fit(X)
    decoded = decoded_all(encoder)  # all 2**6 points
    for j in range(3):
        cuts, reps = encoder.thresholds_[j], encoder.table_[j]
        # Bins are the intervals between consecutive cuts, and they hold the data
        # in the proportions bin_mass_ records.
        bins = np.searchsorted(cuts, X[:, j], side="right")
        np.testing.assert_array_equal(np.bincount(bins, minlength=4) / len(X),
                                      encoder.bin_mass_[j])
        # Each representative is the median of its bin's data and lies inside it.
        for k in range(4):
            assert reps[k] == np.median(X[bins == k, j])
            assert np.searchsorted(cuts, reps[k], side="right") == k
        # Uniform bits: every representative with probability exactly 1/4.
        values, counts = np.unique(decoded[:, j], return_counts=True)
        np.testing.assert_array_equal(values, np.sort(reps))
        assert (counts == 16).all()
    # Features are independent: every combination of bins occurs exactly once.
    assert len({tuple(row) for row in decoded}) == 64


def test_bins_are_equal_mass_without_ties() -> None:
    # A derived tie-free column: a permutation of 0..1002 (1003 rows, 8 bins).
    column = np.random.default_rng(3).permutation(1003).astype(float)
    encoder = QuantileEncoder(bits=3).fit(column[:, None])
    sizes = np.round(encoder.bin_mass_[0] * 1003).astype(int)
    assert set(sizes.tolist()) <= {125, 126} and sizes.sum() == 1003
    # Cuts sit halfway between the last value of a bin and the first of the next.
    positions = np.cumsum(sizes)[:-1]
    np.testing.assert_array_equal(encoder.thresholds_[0], positions - 0.5)
    # The most significant bit splits the rows in half.
    assert encoder.describe(0, -1) == "x0 >= 500.5"
    assert np.count_nonzero(column >= 500.5) == 502


def test_ties_move_cuts_to_the_nearest_change_of_value() -> None:
    # 40% zeros: the median cut is clean (between 10 and 11), but the lower
    # half's cut (ideally at row 25) falls in the run and moves to its end.
    column = np.concatenate([np.zeros(40), np.arange(1.0, 61.0)])
    encoder = QuantileEncoder(bits=2).fit(column[:, None])
    np.testing.assert_array_equal(encoder.thresholds_[0], [0.5, 10.5, 35.5])
    np.testing.assert_array_equal(encoder.bin_mass_[0], [0.4, 0.1, 0.25, 0.25])
    np.testing.assert_array_equal(encoder.table_[0], [0.0, 5.5, 23.0, 48.0])
    assert encoder.describe(0, -1) == f"x0 >= {np.median(column):g}"
    # With 3 bits the lower half needs 4 distinct values: its cut moves past
    # the run by one more value (to row 41) so that both of its halves can split.
    encoder = QuantileEncoder(bits=3).fit(column[:, None])
    np.testing.assert_array_equal(encoder.thresholds_[0],
                                  [0.5, 1.5, 5.5, 10.5, 22.5, 35.5, 47.5])
    np.testing.assert_array_equal(np.round(encoder.bin_mass_[0] * 100),
                                  [40, 1, 4, 5, 12, 13, 12, 13])


def test_any_feature_with_enough_distinct_values_fits() -> None:
    # Iris has 22 to 43 distinct values per feature and many ties.
    encoder = QuantileEncoder(bits=4).fit(IRIS.data)
    for j in range(4):
        cuts = encoder.thresholds_[j]
        assert (np.diff(cuts) > 0).all() and (encoder.bin_mass_[j] > 0).all()
        # Every representative lies inside its own bin.
        assert (np.searchsorted(cuts, encoder.table_[j], side="right") == np.arange(16)).all()


def test_categorical_bins_follow_frequencies() -> None:
    X = load_diabetes(scaled=False).data  # column 1 is sex, coded 1/2
    sex = X[:, 1]
    encoder = QuantileEncoder(bits=3, categorical=[1], feature_names=["age", "sex", "bmi"],
                              category_names={1: {1: "F", 2: "M"}}).fit(X[:, :3])
    codes, counts = np.unique(sex, return_counts=True)
    frequency = counts / len(sex)
    # Bin k holds the category covering (k + 1/2)/8 of the cumulative frequencies.
    centres = (np.arange(8) + 0.5) / 8
    expected = codes[np.searchsorted(np.cumsum(frequency), centres, side="right")]
    np.testing.assert_array_equal(encoder.categories_[1][encoder.table_[1].astype(int)],
                                  expected)
    decoded = decoded_all(encoder)[:, 1]
    for code, share in zip(codes, frequency, strict=True):
        assert abs(np.mean(decoded == code) - share) <= 1 / 8
    assert encoder.describe(3, +1) == "sex in {F}"
    assert encoder.describe(3, -1) == "sex in {M}"
    # A low bit alone: every row of both categories goes to its home bin
    # (its first, here bins 0 and 4, both even), so the +1 branch takes them all.
    np.testing.assert_array_equal(encoder.home_bin_[1], [0, 4])
    assert encoder.describe(5, +1) == "sex in {F, M}"
    assert encoder.describe(5, -1) == "sex in {} (no data row)"


def test_encode_is_the_inverse_of_decode_on_real_features() -> None:
    encoder = QuantileEncoder(bits=3).fit(IRIS.data)
    points = uniform_queries(4, encoder.n_bits, 300)
    np.testing.assert_array_equal(encoder.encode(encoder.decode(points)), points)
    coded = encoder.encode(IRIS.data)
    assert coded.dtype == np.int8 and coded.shape == (150, 12)
    # Each data value lands in the bin whose interval holds it.
    decoded = encoder.decode(coded)
    for j in range(4):
        cuts = encoder.thresholds_[j]
        np.testing.assert_array_equal(np.searchsorted(cuts, decoded[:, j], side="right"),
                                      np.searchsorted(cuts, IRIS.data[:, j], side="right"))


def test_binary_encoder_is_the_identity() -> None:
    X = np.array([[0, 1, 1], [1, 0, 1]])
    encoder = BinaryEncoder(feature_names=["a", "b", "c"]).fit(X)
    points = all_points(3)
    np.testing.assert_array_equal(encoder.decode(points), bits_of(points))
    assert encoder.n_bits == 3
    assert encoder.describe(1, +1) == "b = 0" and encoder.describe(1, -1) == "b = 1"
    with pytest.raises(ValueError, match=r"must hold only 0 and 1 .* column 2 has 2.0 at row 0"):
        BinaryEncoder().fit([[0, 1, 2]])


# -- encoders: validation ----------------------------------------------------------

@pytest.mark.parametrize("kwargs, X, error, match", [
    (dict(bits=0), IRIS.data, ValueError, r"The 'bits' parameter of QuantileEncoder.fit "
                                          r"must be an int in the range \[1, 16\]. Got 0"),
    (dict(bits=2.5), IRIS.data, TypeError, r"The 'bits' parameter .* Got 2.5"),
    (dict(bits=17), IRIS.data, ValueError, r"Got 17 instead"),
    (dict(bits=3), IRIS.data[:7], ValueError, r"has 7 rows; bits=3 needs at least 2\*\*bits "
                                              r"= 8 rows"),
    (dict(), np.full((40, 1), np.nan), ValueError,
     r"column 'x0' \(column 0\) is missing in all 40 rows, so it has no values to bin"),
    # Two bad values in a categorical column of numbers: the first row is named.
    (dict(bits=2, categorical=[0]),
     np.array([[1.0], [2.0], [np.inf], [1.0], [np.nan], [2.0], [1.0], [2.0]]), ValueError,
     r"column 'x0' \(column 0, numbers read as categories or levels\) has inf at row 2; "
     r"categories must be finite numbers or strings"),
    (dict(categorical=[4]), IRIS.data, ValueError, r"The 'categorical' parameter"),
    (dict(categorical=[0, 0]), IRIS.data, ValueError, r"lists a column twice"),
    (dict(feature_names=["a"]), IRIS.data, ValueError, r"sequence of 4 strings"),
    (dict(), IRIS.data[:, 0], TypeError, r"must be a 2-D array .* Got shape \(150,\)"),
    (dict(), np.array([["a", "b"]] * 10), TypeError, r"must hold numbers"),
])
def test_quantile_encoder_validates_its_inputs(kwargs, X, error, match) -> None:
    with pytest.raises(error, match=match):
        QuantileEncoder(**kwargs).fit(X)


@pytest.mark.parametrize("encoder, X, error, match", [
    # A str is a sequence of characters, and "ab" has one per column: still refused.
    (QuantileEncoder(bits=2, feature_names="ab"), IRIS.data[:, :2], TypeError,
     r"^The 'feature_names' parameter of QuantileEncoder.fit must be a sequence of 2 "
     r"strings\. Got 'ab' instead\.$"),
    (BinaryEncoder(feature_names="ab"), np.eye(4)[:, :2], TypeError,
     r"^The 'feature_names' parameter of BinaryEncoder.fit must be a sequence of 2 "
     r"strings\. Got 'ab' instead\.$"),
    (QuantileEncoder(bits=2, categorical=[1], category_names={0: {1.0: "one"}}),
     IRIS.data[:, :2], ValueError,
     r"^The 'category_names' parameter of QuantileEncoder.fit names column 0 \('x0', column "
     r"0\), which is not categorical \(the categorical columns are \[1\]\); list it in "
     r"categorical= or drop its names\.$"),
    (QuantileEncoder(bits=2, categorical=[1], feature_names=["a", "b"],
                     category_names={"a": {1.0: "one"}}), IRIS.data[:, :2], ValueError,
     r"names column 'a' \('a', column 0\), which is not categorical"),
    (QuantileEncoder(bits=2, categorical=[1], category_names={1: ["one"]}),
     IRIS.data[:, :2], TypeError,
     r"^The 'category_names' parameter of QuantileEncoder.fit must map each column to a "
     r"\{category: label\} mapping\. Got 1: \['one'\]\.$"),
    (QuantileEncoder(bits=2, categorical=[1], category_names={1: {(1, 2): "pair"}}),
     IRIS.data[:, :2], TypeError,
     r"the categories of column 1 must be strings or finite numbers\. Got \(1, 2\)\.$"),
    (QuantileEncoder(bits=2, categorical=[1], category_names={1: {float("nan"): "x"}}),
     IRIS.data[:, :2], TypeError, r"must be strings or finite numbers\. Got nan\.$"),
])
def test_encoders_refuse_names_that_do_not_fit_the_columns(encoder, X, error, match) -> None:
    with pytest.raises(error, match=match):
        encoder.fit(X)


def test_a_category_that_is_a_list_is_named_not_unhashable() -> None:
    X = np.array([["red", 1.0], ["blue", 2.0]] * 8, dtype=object)
    X[:, 1] = np.arange(16.0)
    encoder = QuantileEncoder(bits=1, categorical=[0], feature_names=["colour", "size"]).fit(X)
    bad = X.copy()
    bad[5, 0] = ["red"]
    with pytest.raises(TypeError, match=r"^The 'X' parameter of QuantileEncoder.encode: "
                                        r"column 'colour' \(column 0\) holds a list at row 5 "
                                        r"\(\['red'\]\), which a surrogate cannot split on; "
                                        r"convert the column to one column per item\.$"):
        encoder.encode(bad)
    with pytest.raises(TypeError, match=r"^The 'X' parameter of QuantileEncoder.fit: "
                                        r"column 'colour' \(column 0\) holds a list at row 5 "
                                        r"\(\['red'\]\), which a surrogate cannot split on; "
                                        r"convert the column to one column per item\.$"):
        QuantileEncoder(bits=1, categorical=[0], feature_names=["colour", "size"]).fit(bad)
    bad[5, 0] = {"red": 1}
    with pytest.raises(TypeError, match=r"holds a dict at row 5"):
        encoder.encode(bad)


def test_unfitted_encoders_say_so() -> None:
    with pytest.raises(ValueError, match=r"This QuantileEncoder is not fitted yet"):
        QuantileEncoder().decode(all_points(3))
    encoder = QuantileEncoder(bits=2).fit(IRIS.data)
    with pytest.raises(TypeError, match=r"must have shape \(m, 8\)"):
        encoder.decode(all_points(3))


# -- describe ----------------------------------------------------------------------

def test_describe_reads_bits_as_conditions_on_features() -> None:
    X = np.arange(32.0)[:, None]  # 4 bins of 8: cuts 7.5, 15.5, 23.5
    encoder = QuantileEncoder(bits=2, feature_names=["age"]).fit(X)
    assert encoder.describe(0, -1) == "age >= 15.5"
    assert encoder.describe(0, +1) == "age < 15.5"
    assert encoder.describe(1, +1, path=((0, -1),)) == "15.5 <= age < 23.5"
    assert encoder.describe(1, -1, path=((0, -1),)) == "age >= 23.5"
    assert encoder.describe(1, +1, path=((0, +1),)) == "age < 7.5"
    # The low bit alone is not an interval: said as a union.
    assert encoder.describe(1, +1) == "age < 7.5 or 15.5 <= age < 23.5"
    # The node's own bit on the path is consistent; the opposite bit is not.
    assert encoder.describe(0, -1, path=((0, -1),)) == "age >= 15.5"
    with pytest.raises(ValueError, match=r"path fixes variable 0 to -1, which contradicts"):
        encoder.describe(0, +1, path=((0, -1),))
    with pytest.raises(ValueError, match=r"The 'bit' parameter .* must be -1 or \+1"):
        encoder.describe(0, 0)
    with pytest.raises(ValueError, match=r"The 'variable' parameter"):
        encoder.describe(2, 1)
    assert [encoder.feature_of(v) for v in range(encoder.n_bits)] == ["age", "age"]
    for variable in (-1, encoder.n_bits):
        with pytest.raises(ValueError, match=r"^The 'variable' parameter of "
                                             r"QuantileEncoder.feature_of must be an int in "
                                             r"the range \[0, 1\]"):
            encoder.feature_of(variable)


def test_describe_ignores_other_features_on_the_path(iris_oracle) -> None:
    path = ((0, -1), (2, +1), (5, -1))  # sepal length, sepal width, petal length bits
    text = iris_oracle.describe(4, -1, path)
    assert text == "petal length (cm) >= 5.05"
    assert iris_oracle.describe(4, -1, ()) == "petal length (cm) >= 4.35"
    assert iris_oracle.describe(0, +1) == "sepal length (cm) < 5.75"


def test_from_estimator_without_encoder_names_the_model_features() -> None:
    model = Rule("ints 0/1")
    model.feature_names_in_ = np.array(["smoker", "age>40", "fit"], dtype=object)
    oracle = from_estimator(model, positive=1, n=3)
    assert oracle.describe(1, -1) == "age>40 = 1"
    assert from_estimator(rule_function, positive=1, n=3).describe(2, +1) == "x2 = 0"


# -- docs/models.md ------------------------------------------------------------------

def test_docs_walk_through_runs_as_written(capsys) -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "models.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    shown = re.search(r"prints \(scikit-learn ([\d.]+)\):\n\n```\n(.*?)```", text, re.S)
    exec(compile(code, "docs/models.md", "exec"), {})
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("<ModelOracle 'RandomForestClassifier' n=12 "
                               "method='predict' (auto) positive=True")
    assert all("(cm)" in line for line in lines[1:-3]) and len(lines) > 4
    assert re.fullmatch(r"agreement with the model on uniform bits: 0\.\d{3} ± 0\.030",
                        lines[-2])
    # The printed output in the docs is exact for the scikit-learn it names
    # (a forest's predictions may change between releases).
    if sklearn.__version__ == shown.group(1):
        assert out == shown.group(2)


def test_describe_is_true_of_every_decoded_point_and_false_for_the_other_bit() -> None:
    # Names are identifiers and cuts have few digits, so each text is a Python
    # expression; evaluate it on the decoded values of every point.
    X = np.column_stack([np.arange(64.0), (np.arange(64) * 7) % 64 / 4])
    encoder = QuantileEncoder(bits=3, feature_names=["a", "b"]).fit(X)
    points = all_points(6)
    decoded = encoder.decode(points)
    for z, values in zip(points, decoded, strict=True):
        env = {"a": values[0], "b": values[1]}
        for variable in range(6):
            for prefix in range(variable % 3 + 1):
                # The path: some other bits of the point, of both features.
                path = tuple((v, int(z[v])) for v in range(6) if v != variable)[:2 * prefix]
                assert eval(encoder.describe(variable, int(z[variable]), path), env)
                assert not eval(encoder.describe(variable, -int(z[variable]), path), env)


# -- honest failures (label mappings, sizes, missing encoders) ------------------------

def test_a_positive_the_model_never_outputs_is_an_error_naming_positive() -> None:
    def zero_one(X):
        return (X[:, 0] > 0).astype(int)

    oracle = from_estimator(zero_one, n=3, positive=-1)
    with pytest.raises(OracleError, match=r"model 'zero_one' \(predict\) returned 0, but "
                                          r"positive=-1 means ±1 labels, so this model's "
                                          r"labels \{0, 1\} could never map to \+1 through "
                                          r"positive=-1; pass positive=1 or positive=0"):
        oracle.query(all_points(3))

    def plus_minus(X):
        return np.where(X[:, 0] > 0, 1, -1)

    with pytest.raises(OracleError, match=r"returned -1, but positive=0 means 0/1 labels"):
        from_estimator(plus_minus, n=3, positive=0).query(all_points(3))
    # The consistent mappings work.
    assert set(from_estimator(plus_minus, n=3, positive=-1).query(all_points(3))) == {-1, 1}
    assert set(from_estimator(zero_one, n=3, positive=0).query(all_points(3))) == {-1, 1}


class Scores:
    """A model whose scoring methods return a configurable wrong shape or dtype."""

    def __init__(self, what: str, classes=(0, 1)) -> None:
        self.what = what
        if classes is not None:
            self.classes_ = np.array(classes)

    def predict_proba(self, X):
        m = X.shape[0]
        return {"three columns": np.full((m, 3), 1 / 3), "one column": np.full((m, 1), 0.5),
                "complex": np.full((m, 2), 0.5 + 0.5j)}[self.what]

    def decision_function(self, X):
        m = X.shape[0]
        return {"two columns": np.zeros((m, 2)), "complex": np.full(m, 1j)}[self.what]


@pytest.mark.parametrize("model, kwargs, match", [
    (Scores("three columns"), dict(method="predict_proba", positive=1),
     r"'Scores' \(predict_proba\) returned shape \(8, 3\) for 8 rows; a model with classes "
     r"\[0, 1\] must return \(8, 2\) probabilities, one column per class, for positive=1"),
    (Scores("one column"), dict(method="predict_proba", positive=1),
     r"returned shape \(8, 1\) for 8 rows; a model with classes \[0, 1\] must return"),
    (Scores("complex"), dict(method="predict_proba", positive=1),
     r"'Scores' \(predict_proba\) returned complex scores \(dtype complex128\); "
     r"threshold=0.5 needs real scores"),
    (Scores("complex", classes=None), dict(method="decision_function"),
     r"returned complex scores"),
    (Scores("two columns", classes=None), dict(method="decision_function", positive=5),
     r"'Scores' \(decision_function\) returned 2 score columns; positive=5 asks for "
     r"column 5"),
])
def test_score_shapes_and_dtypes_are_oracle_errors(model, kwargs, match) -> None:
    oracle = from_estimator(model, n=3, threshold=0.5, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        with pytest.raises(OracleError, match=match):
            oracle.query(all_points(3))


@pytest.mark.parametrize("n", [10 ** 400, 10 ** 8, 2 ** 20 + 1])
def test_sizes_beyond_what_a_batch_can_hold_are_refused(n) -> None:
    with pytest.raises(ValueError, match=r"The 'n' parameter of lca.models.from_estimator "
                                         r"must be an int in the range \[1, 1048576\]"):
        from_estimator(rule_function, n=n, positive=1)
    assert from_estimator(rule_function, n=2 ** 20, positive=1).n == 2 ** 20


def test_no_encoder_for_a_fitted_model_is_an_error_that_says_what_to_do() -> None:
    X, y = load_breast_cancer(return_X_y=True)
    model = LogisticRegression(max_iter=5000).fit(X, y)
    with pytest.raises(ValueError, match=r"no encoder given, so model LogisticRegression would "
                                         r"get 0/1 features, and lca cannot see whether its 30 "
                                         r"features are 0/1\. For real-valued or categorical "
                                         r"features pass encoder=QuantileEncoder\(\)\.fit\(X\)"):
        from_estimator(model, positive=1)
    with pytest.raises(ValueError, match=r"must hold only 0 and 1 \(use QuantileEncoder for "
                                         r"other values\); column 0 has 17.99 at row 0"):
        lca.models.Surrogate(model, distribution="product", encoder=BinaryEncoder()).fit(X)


def test_regressors_take_a_threshold_on_predict() -> None:
    X, y = load_diabetes(return_X_y=True)
    from sklearn.linear_model import LinearRegression

    model = LinearRegression().fit(X, y)
    encoder = QuantileEncoder(bits=2, categorical=[1]).fit(X)
    oracle = from_estimator(model, encoder, threshold=150.0)
    assert "method='predict' (auto) score >= 150.0" in repr(oracle)
    points = uniform_queries(5, oracle.n, 200)
    np.testing.assert_array_equal(oracle.query(points),
                                  np.where(model.predict(encoder.decode(points)) >= 150, 1, -1))
    with pytest.raises(ValueError, match=r"positive=1 has no meaning for the predictions of "
                                         r"regressor LinearRegression"):
        from_estimator(model, encoder, threshold=150.0, positive=1)


# -- the positive class: positive=None means the last class --------------------------------

def test_positive_none_means_the_last_class_in_one_place() -> None:
    classes = np.array([7, 2])  # not sorted: "last" is by position, not by value
    assert positive_class(None, classes) == 2 and type(positive_class(None, classes)) is int
    assert positive_class(7, classes) == 7
    assert positive_class(np.int64(7), classes) == 7  # numpy scalars come back plain
    assert positive_class(None, None) is None and positive_class(1, None) == 1
    assert positive_class(None, np.array(["no", "yes", "maybe"])) == "maybe"


class TwoClasses:
    """A binary classifier of classes ``[7, 2]``: predicts 2 when the first feature is >= 5."""

    classes_ = np.array([7, 2])
    n_features_in_ = 2

    def predict(self, X):
        return np.where(np.asarray(X)[:, 0] >= 5, 2, 7)

    def decision_function(self, X):  # scores classes_[1], as scikit-learn's do
        return np.asarray(X)[:, 0] - 5.0


def test_the_positive_class_rule_sets_sides_labels_and_names() -> None:
    X = np.column_stack([np.arange(16.0) % 10, np.arange(16.0)])
    encoder = QuantileEncoder(bits=2).fit(X)
    # decision_function with positive=None: the score is of the last class, 2.
    scored = from_estimator(TwoClasses(), encoder, threshold=0.0)
    assert scored.positive is None and scored.label_names == ("7", "2")
    surrogate = Surrogate(TwoClasses(), distribution="product", depth=2).fit(X)
    assert surrogate.classes_.tolist() == [7, 2]  # [other, positive]
    assert surrogate.oracle_.positive == 2 and surrogate.oracle_.label_names == ("7", "2")
    flipped = Surrogate(TwoClasses(), distribution="product", positive=7, depth=2).fit(X)
    assert flipped.classes_.tolist() == [2, 7] and flipped.oracle_.label_names == ("2", "7")
    # positive= the last class with decision_function is the default score: accepted.
    thresholded = Surrogate(TwoClasses(), distribution="product", positive=2, threshold=0.0,
                            depth=2).fit(X)
    assert thresholded.oracle_.positive is None and thresholded.classes_.tolist() == [7, 2]
    rows = np.array([[9.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(thresholded.oracle_.label_rows(rows), [1, -1])


# -- encodings of data accepted before rare levels were: pinned bit for bit -----------------

DIGITS_ACCEPTED = [j for j in range(64)  # the columns of load_digits fitted with bits=3, "auto"
                   if j not in (0, 8, 16, 24, 31, 32, 39, 40, 47, 48, 56)]


def _accepted_data(name: str):
    """Data sets every encoder below fitted before rare levels and unseen values had a rule."""
    from sklearn.datasets import load_digits

    pd = pytest.importorskip("pandas")
    if name == "iris":
        return IRIS.data
    if name == "cancer":
        return load_breast_cancer().data
    if name == "wine":
        return load_wine().data
    if name == "diabetes":
        return load_diabetes(scaled=False).data  # column 1 (sex) has two values
    if name == "digits":
        return load_digits().data[:, DIGITS_ACCEPTED]
    # A frame of derived columns: strings with a rare category that gets no bin of
    # its own (3 of 400 rows), integers with 5 values, and a real column with ties.
    i = np.arange(400)
    return pd.DataFrame({
        "colour": np.where(i < 3, "amber", np.where(i % 3 == 0, "red", np.where(
            i % 3 == 1, "green", "blue"))),
        "count": i % 5,
        "level": (i * 7919 % 400) // 40 * 0.5,
        "grade": np.where(i < 250, 1, np.where(i < 395, 2, 3)),
    })


def _fingerprint(encoder, X) -> str:
    """SHA-256 of everything that fixes bits and texts: encodings, tables, cuts, homes and
    conditions."""
    import hashlib

    digest = hashlib.sha256(np.ascontiguousarray(encoder.encode(X)).tobytes())
    digest.update(np.ascontiguousarray(encoder.table_).tobytes())
    for j in sorted(encoder.thresholds_):
        digest.update(f"cuts {j}".encode() + encoder.thresholds_[j].tobytes())
    for j in sorted(encoder.categories_):
        digest.update(f"categories {j} {encoder.categories_[j].tolist()!r}".encode())
        digest.update(encoder.home_bin_[j].astype(np.int64).tobytes())
    for variable in range(encoder.n_bits):
        for bit in (-1, 1):
            digest.update(encoder.describe(variable, bit).encode())
    if not encoder.categories_:  # real values beyond the fitted range go to the end bins
        digest.update(np.ascontiguousarray(encoder.encode(X * 1.25 - 1)).tobytes())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("name, kwargs, expected", [
    ("iris", dict(bits=3), "96960721b67f39f6"),
    ("iris", dict(bits=4, categorical="auto"), "f5deeeffe99a855f"),
    ("cancer", dict(bits=3, categorical="auto"), "7ba03fc180ab6dc7"),
    ("wine", dict(bits=2, categorical="auto"), "0830f79fe65ec3d6"),
    ("diabetes", dict(bits=3, categorical="auto"), "09676ea1f592808b"),
    ("diabetes", dict(bits=2, categorical=[1]), "832d60c30d7d787e"),
    ("digits", dict(bits=3, categorical="auto"), "732d1f4a00e7619c"),
    ("frame", dict(bits=3, categorical="auto"), "57840f8c494f6570"),
    ("frame", dict(bits=2, categorical=["colour", "count", "grade"]), "85127f913dc027b5"),
])
def test_data_accepted_before_encodes_exactly_as_before(name, kwargs, expected) -> None:
    X = _accepted_data(name)
    encoder = QuantileEncoder(**kwargs).fit(X)
    assert _fingerprint(encoder, X) == expected


# -- rare levels, near-constant and constant columns: fitted, never refused ---------------------

@pytest.mark.parametrize("bits", [1, 2, 3, 4])
@pytest.mark.parametrize("rows", [16, 17, 64, 1000])
def test_a_column_with_exactly_one_rare_value_gets_the_last_bin(bits, rows) -> None:
    # One 1 among `rows`: at rows = 2**bits the centre rule already gives it the last
    # bin; beyond, one level covers every centre and the rare side takes the end bin.
    X = np.r_[np.zeros(rows - 1), 1.0][:, None]
    n_bins = 1 << bits
    for categorical in ("auto", [0], ()):
        encoder = QuantileEncoder(bits=bits, categorical=categorical).fit(X)
        top = encoder.encode(X)[:, 0]
        assert top[-1] == -1 and (top[:-1] == 1).all()  # its one row has its own side
        if bits == 1 and categorical != [0]:  # two values fill two bins: a real column
            np.testing.assert_array_equal(encoder.thresholds_[0], [0.5])
            continue
        np.testing.assert_array_equal(encoder.table_[0], [0.0] * (n_bins - 1) + [1.0])
        np.testing.assert_array_equal(encoder.home_bin_[0], [0, n_bins - 1])
        np.testing.assert_array_equal(encoder.bin_mass_[0], [(rows - 1) / rows / (n_bins - 1)]
                                      * (n_bins - 1) + [1 / rows])
        assert (0 in encoder.ordered_) == (categorical != [0])
        assert encoder.describe(0, -1) == "x0 in {1}"


def test_the_centre_rule_is_unchanged_while_the_rare_level_covers_a_centre() -> None:
    # 3 bits: the last centre is 15/16 of the rows. Two ones in 32 rows cover it.
    X = np.r_[np.zeros(30), 1.0, 1.0][:, None]
    encoder = QuantileEncoder(bits=3, categorical="auto").fit(X)
    np.testing.assert_array_equal(encoder.table_[0], [0.0] * 7 + [1.0])
    np.testing.assert_array_equal(encoder.bin_mass_[0], [30 / 32 / 7] * 7 + [2 / 32])


@pytest.mark.parametrize("below, above, table", [
    (1, 1, [5.0, 9.0]),   # a tie: the upper side gets the spare bin
    (2, 1, [0.0, 5.0]),   # one row more below: the lower side does
    (1, 2, [5.0, 9.0]),
])
def test_with_one_bit_both_sides_share_one_spare_bin(below, above, table) -> None:
    X = np.r_[np.zeros(below), np.full(100, 5.0), np.full(above, 9.0)][:, None]
    encoder = QuantileEncoder(bits=1, categorical=[0]).fit(X)  # 3 values: real unless listed
    np.testing.assert_array_equal(encoder.categories_[0][encoder.table_[0].astype(int)], table)
    # The side without a bin is at home with the dominant level.
    np.testing.assert_array_equal(encoder.home_bin_[0], [0, 0, 1] if table[0] == 5 else
                                  [0, 1, 1])
    assert encoder.bin_mass_[0].sum() == pytest.approx(1, abs=1e-12)


def test_each_side_of_a_dominant_level_gets_an_end_bin_holding_its_middle_level() -> None:
    # Below 5: one row of 1; above it: three rows of 6 and one of 7 (middle: 6).
    X = np.r_[1.0, np.full(200, 5.0), 6.0, 6.0, 6.0, 7.0][:, None]
    encoder = QuantileEncoder(bits=3, categorical="auto").fit(X)
    np.testing.assert_array_equal(encoder.categories_[0], [1, 5, 6, 7])
    np.testing.assert_array_equal(encoder.table_[0], [0, 1, 1, 1, 1, 1, 1, 2])
    np.testing.assert_array_equal(encoder.home_bin_[0], [0, 1, 7, 7])
    # Bin 7 stands for the rows of 6 and of 7; the masses sum to 1.
    assert encoder.bin_mass_[0][7] == 3 / 205 + 1 / 205
    assert encoder.bin_mass_[0].sum() == pytest.approx(1, abs=1e-12)
    decoded = decoded_all(encoder)[:, 0]
    assert np.mean(decoded == 1) == np.mean(decoded == 6) == 1 / 8


def test_a_level_without_a_bin_is_counted_in_its_home_bin() -> None:
    # 3 rows of 2 in 100 get no bin (centre rule) and live in bin 7, whose mass counts them.
    X = np.r_[np.zeros(50), np.ones(47), np.full(3, 2.0)][:, None]
    encoder = QuantileEncoder(bits=3, categorical="auto").fit(X)
    np.testing.assert_array_equal(encoder.table_[0], [0] * 4 + [1] * 4)
    np.testing.assert_array_equal(encoder.home_bin_[0], [0, 4, 7])
    np.testing.assert_array_equal(encoder.bin_mass_[0], [0.125] * 4 + [0.1175] * 3
                                  + [0.1175 + 0.03])


def test_a_constant_column_is_fitted_and_its_bits_change_nothing() -> None:
    X = np.column_stack([np.arange(20.0), np.full(20, 3.0)])
    encoder = QuantileEncoder(bits=2).fit(X)
    np.testing.assert_array_equal(encoder.table_[1], [0, 0, 0, 0])
    np.testing.assert_array_equal(encoder.home_bin_[1], [0])
    assert encoder.ordered_ == {1}
    assert (decoded_all(encoder)[:, 1] == 3.0).all()
    assert encoder.describe(2, +1) == "x1 in {3}"
    assert encoder.describe(2, -1) == "x1 in {} (no data row)"


def test_which_columns_of_numbers_are_ordered() -> None:
    pd = pytest.importorskip("pandas")
    i = np.arange(64)
    frame = pd.DataFrame({"real": i * 1.5, "few": i % 3, "colour": np.where(i % 2, "a", "b"),
                          "coded": pd.Categorical(i % 4), "listed": i % 5})
    auto = QuantileEncoder(bits=3, categorical="auto").fit(frame)
    assert sorted(auto.thresholds_) == [0]
    assert auto.ordered_ == {1, 4}  # strings and pandas categories are unordered
    listed = QuantileEncoder(bits=3, categorical=["colour", "coded", "listed"]).fit(frame)
    assert listed.ordered_ == {1} and listed.categorical_ == {1, 2, 3, 4}
    # Levels fitted either way have the same bins.
    for j in (1, 4):
        np.testing.assert_array_equal(listed.table_[j], auto.table_[j])


def test_digits_fit_at_every_bits_with_every_column() -> None:
    from sklearn.datasets import load_digits

    X = load_digits().data  # 3 constant pixels, 8 more with a value in over 97% of rows
    for bits in (1, 2, 3, 4):
        encoder = QuantileEncoder(bits=bits, categorical="auto").fit(X)
        assert encoder.n_features_in_ == 64
        assert encoder.categorical_ == encoder.ordered_
        # Every level but a constant column's dominant one is sampled: no dead rare side.
        for j in encoder.categories_:
            if encoder.categories_[j].size > 1:
                assert np.unique(encoder.table_[j]).size >= 2


# -- values not seen in fit ------------------------------------------------------------------

def _levels_024():
    X = (np.arange(30) % 3 * 2.0)[:, None]  # levels 0, 2, 4
    return QuantileEncoder(bits=3, categorical="auto", feature_names=["grade"]).fit(X)


@pytest.mark.parametrize("value, level", [
    (np.nextafter(0.0, -1), 0.0), (-7.0, 0.0),      # just below and far below the range
    (np.nextafter(4.0, 5), 4.0), (1e9, 4.0),        # just above and far above
    (np.nextafter(1.0, 0), 0.0), (1.0, 2.0),        # halfway goes up
    (3.0, 4.0), (np.nextafter(3.0, 0), 2.0),
])
def test_an_unseen_value_of_ordered_levels_goes_to_the_nearest_level(value, level) -> None:
    encoder = _levels_024()
    with pytest.warns(lca.models.UnseenValueWarning,
                      match=r"^QuantileEncoder.encode: values not seen in fit went to the bin "
                            r"of the nearest fitted value in 1 column\(s\): 'grade' \(column "
                            r"0\): 1 row\.$"):
        point = encoder.encode([[value]])
    np.testing.assert_array_equal(point, encoder.encode([[level]]))
    assert encoder.decode(point)[0, 0] == level


def test_seen_values_do_not_warn_and_the_warning_counts_rows_per_column() -> None:
    encoder = QuantileEncoder(bits=2, categorical="auto").fit(
        np.column_stack([np.arange(40) % 3, np.arange(40) % 2, np.arange(40.0)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoder.encode([[0, 1, 100.0], [2, 0, -100.0]])  # real values beyond: end bins
    with pytest.warns(lca.models.UnseenValueWarning,
                      match=r"in 2 column\(s\): 'x0' \(column 0\): 3 rows; 'x1' \(column 1\): "
                            r"1 row\.$") as caught:
        encoder.encode([[5, 1, 0.0], [7, 0, 0.0], [-1, 3, 0.0], [1, 0, 0.0]])
    assert len(caught) == 1  # once per call
    assert caught[0].filename == __file__  # points at the line that called encode


def test_an_unseen_value_of_an_unordered_column_is_refused() -> None:
    X = (np.arange(30) % 3 * 2.0)[:, None]
    encoder = QuantileEncoder(bits=3, categorical=[0], feature_names=["code"]).fit(X)
    with pytest.raises(ValueError, match=r"^QuantileEncoder.encode: categorical feature 'code' "
                                         r"has no category 3.0 \(row 1\); fit saw \[0.0, 2.0, "
                                         r"4.0\], and an unordered column has no nearest "
                                         r"category\.$"):
        encoder.encode([[2.0], [3.0]])
    with pytest.raises(ValueError, match=r"column 'grade' \(column 0, numbers\) holds a missing "
                                         r"value \(nan\)"):
        _levels_024().encode([[np.nan]])


# lca.models in import order: each module imports only those before it, so the estimator
# reads the tree sources, quality and the saved document, and none of them reads it.
MODELS_MODULES = ("_data", "questions", "encoders", "thresholds", "oracle", "quality",
                  "sources", "rows", "_state", "surrogate", "cli")


@pytest.mark.parametrize("module", MODELS_MODULES)
def test_imports_within_lca_models_flow_one_way(module) -> None:
    text = pathlib.Path(lca.models.__file__).with_name(f"{module}.py").read_text()
    # Indented imports count too: those inside functions and under TYPE_CHECKING.
    imported = set(re.findall(r"^\s*from lca\.models\.(\w+) import", text, flags=re.M))
    assert "from lca.models import" not in text and "import lca.models" not in text
    assert imported <= set(MODELS_MODULES[:MODELS_MODULES.index(module)]), imported

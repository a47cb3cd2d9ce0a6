"""Missing values in product mode: a QuantileEncoder column with some missing gets missing bins.

The rule (lca.models.QuantileEncoder's docstring): the missing rows of a column
of numbers take the top k of its 2**bits bins, k their share rounded half up,
at least 1 and at most 2**bits - 1; the present values are binned into the
bins below; a missing bin decodes to NaN; encode sends a missing value to the
first missing bin (its home); describe says "or missing" / "is missing".
Columns without missing values are untouched.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from lca.models import QuantileEncoder, Surrogate

pd = pytest.importorskip("pandas")
pytest.importorskip("sklearn")

from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402
from test_saved_surrogate import forged, refused  # noqa: E402


def column(present, absent: int) -> np.ndarray:
    """One column: the present values, then ``absent`` NaNs."""
    return np.concatenate([np.asarray(present, dtype=float), np.full(absent, np.nan)])[:, None]


# -- fitting: which bins, which values, which masses ------------------------------------------

@pytest.mark.parametrize("bits, m, absent, first", [
    (3, 100, 20, 6),    # 1.6 bins -> 2: bins 6 and 7
    (3, 100, 1, 7),     # 0.08 bins -> at least 1
    (3, 100, 99, 1),    # 7.92 bins -> at most 7: the present values keep bin 0
    (3, 16, 3, 6),      # exactly 1.5 bins: half up -> 2
    (3, 16, 1, 7),      # exactly 0.5 bins: half up -> 1
    (2, 100, 30, 3),    # 1.2 bins -> 1
    (2, 100, 40, 2),    # 1.6 bins -> 2
    (1, 100, 50, 1),    # one bit: one bin each
    (4, 160, 25, 13),   # exactly 2.5 bins: half up -> 3: bins 13, 14, 15
])
def test_missing_values_take_the_top_bins_about_their_share(bits, m, absent, first) -> None:
    X = column(np.arange(m - absent), absent)
    encoder = QuantileEncoder(bits=bits).fit(X)
    n_bins = 1 << bits
    assert encoder.missing_bin_ == {0: first}
    table, mass = encoder.table_[0], encoder.bin_mass_[0]
    assert np.isnan(table[first:]).all() and np.isfinite(table[:first]).all()
    np.testing.assert_allclose(mass[first:], absent / m / (n_bins - first))
    assert mass.sum() == pytest.approx(1, abs=1e-12)
    if 0 in encoder.thresholds_:  # the present values in the bins below, equal-mass
        assert encoder.thresholds_[0].size == first - 1
        counts = mass[:first] * m
        np.testing.assert_allclose(counts, np.round(counts))
        counts = np.round(counts)
        assert counts.max() - counts.min() <= 1 and counts.sum() == m - absent


def test_present_values_are_cut_into_equal_bins_below_the_missing_ones() -> None:
    # 120 present values, 40 missing of 160, bits=3: 2 missing bins, 6 bins of 20 present rows.
    X = column(np.arange(120.0), 40)
    encoder = QuantileEncoder(bits=3).fit(X)
    assert encoder.missing_bin_ == {0: 6}
    np.testing.assert_array_equal(encoder.thresholds_[0], [19.5, 39.5, 59.5, 79.5, 99.5])
    np.testing.assert_array_equal(encoder.table_[0][:6], [9.5, 29.5, 49.5, 69.5, 89.5, 109.5])
    np.testing.assert_allclose(encoder.bin_mass_[0], [20 / 160] * 6 + [20 / 160] * 2)


def test_ordered_levels_with_missing_values_get_level_bins_below_the_missing_ones() -> None:
    # Levels 0, 1, 2 (8 rows each) and 8 missing of 32, bits=2: 1 missing bin (bin 3).
    X = column([0.0] * 8 + [1.0] * 8 + [2.0] * 8, 8)
    encoder = QuantileEncoder(bits=2).fit(X)
    assert encoder.missing_bin_ == {0: 3} and encoder.ordered_ == {0}
    np.testing.assert_array_equal(encoder.categories_[0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(encoder.table_[0][:3], [0, 1, 2])
    assert np.isnan(encoder.table_[0][3])
    np.testing.assert_array_equal(encoder.home_bin_[0], [0, 1, 2])
    np.testing.assert_allclose(encoder.bin_mass_[0], [0.25] * 4)
    decoded = encoder.decode(np.array([[s, t] for s in (1, -1) for t in (1, -1)], dtype=np.int8))
    np.testing.assert_array_equal(decoded[:, 0], [0.0, 1.0, 2.0, np.nan])


def test_one_bin_left_for_the_present_levels_holds_the_dominant_one() -> None:
    # 14 of 20 missing, bits=2: 2.8 bins -> 3 missing bins, one bin for levels 0 (5 rows)
    # and 1 (1 row). The dominant level holds it (no end bin for the rare level: there is
    # no bin to spare), and both levels' rows go to it.
    X = column([0.0] * 5 + [1.0], 14)
    encoder = QuantileEncoder(bits=2).fit(X)
    assert encoder.missing_bin_ == {0: 1} and encoder.ordered_ == {0}
    np.testing.assert_array_equal(encoder.table_[0][:1], [0])
    np.testing.assert_array_equal(encoder.home_bin_[0], [0, 0])
    np.testing.assert_allclose(encoder.bin_mass_[0], [6 / 20] + [14 / 60] * 3)
    np.testing.assert_array_equal(encoder.encode(column([1.0, 0.0], 1)),
                                  [[1, 1], [1, 1], [1, -1]])
    # One bit: the present values, whatever they are, against the missing ones; real
    # ones (two distinct values here) are one bin, represented by their median.
    one = QuantileEncoder(bits=1).fit(column([0.0] * 14 + [1.0], 1))
    assert one.missing_bin_ == {0: 1} and one.thresholds_[0].size == 0
    np.testing.assert_array_equal(one.table_[0], [0.0, np.nan])


def test_a_column_without_missing_values_is_fitted_as_it_would_be_alone() -> None:
    rng = np.random.default_rng(3)
    alone = np.column_stack([rng.normal(size=200), rng.integers(0, 3, 200)])
    with_nan = rng.normal(size=200)
    with_nan[rng.random(200) < 0.3] = np.nan
    both = QuantileEncoder(bits=3, feature_names=["w", "a", "b"]).fit(
        np.column_stack([with_nan, alone]))
    single = QuantileEncoder(bits=3, feature_names=["a", "b"]).fit(alone)
    assert set(both.missing_bin_) == {0} and single.missing_bin_ == {}
    for j in (0, 1):
        np.testing.assert_array_equal(both.table_[j + 1], single.table_[j])
        np.testing.assert_array_equal(both.bin_mass_[j + 1], single.bin_mass_[j])
    np.testing.assert_array_equal(both.thresholds_[1], single.thresholds_[0])
    np.testing.assert_array_equal(both.home_bin_[2], single.home_bin_[1])
    rows = np.column_stack([with_nan, alone])
    np.testing.assert_array_equal(both.encode(rows)[:, 3:], single.encode(alone))
    for variable in range(single.n_bits):
        for bit in (-1, 1):
            assert both.describe(variable + 3, bit) == single.describe(variable, bit)


# -- encode and decode -----------------------------------------------------------------------

def test_a_missing_value_encodes_to_the_first_missing_bin_and_decodes_to_nan() -> None:
    X = column(np.arange(120.0), 40)  # bins 0..5 present, 6 and 7 missing
    encoder = QuantileEncoder(bits=3).fit(X)
    rows = pd.DataFrame({"x0": pd.array([5.0, None, 115.0, pd.NA], dtype="Float64")})
    points = encoder.encode(rows.astype(object))
    np.testing.assert_array_equal(points, [[1, 1, 1], [-1, -1, 1], [-1, 1, -1], [-1, -1, 1]])
    decoded = encoder.decode(points)
    np.testing.assert_array_equal(decoded[:, 0], [9.5, np.nan, 109.5, np.nan])
    np.testing.assert_array_equal(encoder.encode(encoder.decode(points)), points)
    # Every missing bin decodes to NaN; every other bin to a number.
    every = np.array([[1 - 2 * ((k >> s) & 1) for s in (2, 1, 0)] for k in range(8)],
                     dtype=np.int8)
    np.testing.assert_array_equal(np.isnan(encoder.decode(every)[:, 0]), [0] * 6 + [1] * 2)


def test_a_missing_value_in_a_column_fit_saw_none_missing_in_is_refused_by_row() -> None:
    X = np.column_stack([column(np.arange(120.0), 40)[:, 0], np.arange(160.0),
                         np.arange(160) % 3])
    encoder = QuantileEncoder(bits=3).fit(X)
    assert 1 in encoder.thresholds_ and encoder.ordered_ == {2}  # a real and ordered levels
    for j in (1, 2):
        rows = np.array([[1.0, 2.0, 1.0]] * 3)
        rows[2, j] = np.nan
        with pytest.raises(ValueError, match=rf"column 'x{j}' \(column {j}, numbers\) holds a "
                                             r"missing value \(nan\) at row 2 \(1 in that "
                                             r"column\), and this encoder has no bin for one "
                                             r"there"):
            encoder.encode(rows)


def test_a_missing_category_and_an_all_missing_column_are_refused() -> None:
    frame = pd.DataFrame({"c": ["a", "b", None, "a"] * 4, "x": np.arange(16.0)})
    with pytest.raises(ValueError, match=r"categorical column 'c' \(column 0\) has a missing "
                                         r"value \((None|nan)\) at row 2; fill missing values"):
        QuantileEncoder(bits=2, categorical="auto").fit(frame)
    with pytest.raises(ValueError, match=r"column 'x' \(column 1\) is missing in all 16 rows"):
        QuantileEncoder(bits=2).fit(frame.assign(c=1.0, x=np.nan))


# -- describe ----------------------------------------------------------------------------------

def test_conditions_say_or_missing_and_is_missing() -> None:
    # 12 present values and 4 missing, bits=2: bins 0..2 of 4 values each, bin 3 missing.
    encoder = QuantileEncoder(bits=2, feature_names=["a"]).fit(column(np.arange(12.0), 4))
    assert encoder.missing_bin_ == {0: 3}
    assert encoder.describe(0, +1) == "a < 7.5"
    assert encoder.describe(0, -1) == "a >= 7.5 or missing"
    assert encoder.describe(1, +1) == "a < 3.5 or a >= 7.5"
    assert encoder.describe(1, -1) == "3.5 <= a < 7.5 or missing"
    assert encoder.describe(1, -1, ((0, -1),)) == "a is missing"
    assert encoder.describe(1, +1, ((0, -1),)) == "a >= 7.5"
    # Two missing bins (bits=3, 40 of 160): the second holds no row.
    wide = QuantileEncoder(bits=3, feature_names=["a"]).fit(column(np.arange(120.0), 40))
    assert wide.describe(2, +1, ((0, -1), (1, -1))) == "a is missing"
    assert wide.describe(2, -1, ((0, -1), (1, -1))) == "a is missing (no data row)"
    # One bit: present values against missing ones.
    one = QuantileEncoder(bits=1, feature_names=["a"]).fit(column(np.arange(12.0), 4))
    assert (one.describe(0, +1), one.describe(0, -1)) == ("a is not missing", "a is missing")
    # Ordered levels: the levels whose rows take the branch, and missing values.
    levels = QuantileEncoder(bits=2, feature_names=["k"]).fit(
        column([0.0] * 8 + [1.0] * 8 + [2.0] * 8, 8))
    assert levels.describe(0, -1) == "k in {2} or missing"
    assert levels.describe(1, -1) == "k in {1} or missing"
    assert levels.describe(1, +1, ((0, -1),)) == "k in {2}"
    assert levels.describe(1, -1, ((0, -1),)) == "k is missing"


# -- saving ------------------------------------------------------------------------------------

def loans_with_missing(rows: int = 400):
    from models_support import loans
    X, y = loans(rows)
    rng = np.random.default_rng(5)
    X = X.assign(income=X.income.mask(rng.random(rows) < 0.2),
                 age=X.age.astype(float).mask(rng.random(rows) < 0.1),
                 rooms=np.where(rng.random(rows) < 0.15, np.nan,
                                rng.integers(1, 5, rows).astype(float)))
    return X, y


@pytest.fixture(scope="module")
def saved():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    X, y = loans_with_missing()
    model = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["size_class", "region"])],
                          remainder="passthrough"),
        HistGradientBoostingClassifier(max_iter=30, random_state=0)).fit(X, y)
    surrogate = Surrogate(model, distribution="product", positive="repaid", depth=4,
                          seed=1, encoder=QuantileEncoder(bits=4, categorical="auto")).fit(X)
    return surrogate, X


def test_missing_bins_are_saved_and_read_back_exactly(saved) -> None:
    surrogate, X = saved
    encoder = surrogate.encoder_
    # income 20% missing: 3 bins; age 11%: 2 bins; rooms (levels 1..4) 16%: 3 bins.
    assert encoder.missing_bin_ == {0: 13, 3: 14, 4: 13} and encoder.ordered_ == {4}
    text = surrogate.to_json()
    document = json.loads(text)
    assert document["encoder"]["missing_bin"] == {"0": 13, "3": 14, "4": 13}
    assert document["encoder"]["table"][0][13:] == [None] * 3
    assert None not in document["encoder"]["table"][0][:13]
    assert len(document["encoder"]["thresholds"]["0"]) == 12
    back = Surrogate.from_json(text)
    assert back.to_json() == text
    assert back.encoder_.missing_bin_ == encoder.missing_bin_
    np.testing.assert_array_equal(back.encoder_.table_, encoder.table_)  # NaN where NaN
    np.testing.assert_array_equal(back.predict(X), surrogate.predict(X))
    assert back.tree().to_text() == surrogate.tree().to_text()


def test_a_document_without_missing_bins_has_no_missing_key() -> None:
    from sklearn.tree import DecisionTreeClassifier
    X = np.random.default_rng(0).normal(size=(200, 3))
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, X[:, 0] > 0)
    document = json.loads(Surrogate(model, distribution="product", depth=3).fit(X).to_json())
    assert "missing_bin" not in document["encoder"]


def _edit(*where_and_value):
    *where, value = where_and_value

    def edit(document):
        place = document
        for key in where[:-1]:
            place = place[key]
        if value is _DROP:
            del place[where[-1]]
        else:
            place[where[-1]] = value
    return edit


_DROP = object()
_FIELD = r"^Surrogate.from_json: 'encoder.missing_bin"
FORGED = {
    "empty": (_edit("encoder", "missing_bin", {}), _FIELD + r"' must be an object naming at "
                                                   r"least one feature"),
    "not an object": (_edit("encoder", "missing_bin", [13]), _FIELD + r"' must be an object "
                                                                      r"keyed by feature"),
    "a feature beyond the columns": (_edit("encoder", "missing_bin", {"0": 13, "9": 14}),
                                     _FIELD + r"' has the key '9'"),
    "bin 0": (_edit("encoder", "missing_bin", "0", 0), _FIELD + r".0' must be an int in "
                                                             r"\[1, 15\]"),
    "past the last bin": (_edit("encoder", "missing_bin", "0", 16), _FIELD + r".0' must be"),
    "a string bin": (_edit("encoder", "missing_bin", "0", "13"), _FIELD + r".0' must be"),
    "a categorical feature's row without nulls": (
        _edit("encoder", "missing_bin", "1", 15),
        r"'encoder.table\[1\]' must be 15 finite numbers, then 1 nulls"),
    "fewer missing bins than nulls": (
        _edit("encoder", "missing_bin", "0", 12),
        r"'encoder.table\[0\]' must be 12 finite numbers, then 4 nulls"),
    "more missing bins than nulls": (
        _edit("encoder", "missing_bin", "0", 14),
        r"'encoder.table\[0\]' must be 14 finite numbers, then 2 nulls"),
    "no key, nulls in the table": (_edit("encoder", "missing_bin", _DROP),
                                   r"'encoder.table\[0\]' must be a list of 16 finite numbers"),
    "a number where a null is": (_edit("encoder", "table", 0, 15, 1.0),
                                 r"'encoder.table\[0\]' must be 13 finite numbers, then 3"),
    "a null where a number is": (_edit("encoder", "table", 0, 2, None),
                                 r"'encoder.table\[0\]' must be 13 finite numbers, then 3"),
    "a cut too many": (_edit("encoder", "thresholds", "0", list(range(13))),
                       r"'encoder.thresholds.0' must be a list of 12 finite numbers"),
    "a home bin among the missing ones": (
        _edit("encoder", "home_bin", "4", [0, 3, 6, 13]),
        r"'encoder.home_bin.4' must be 4 bins in \[0, 13\) in increasing order"),
    "a level in a missing bin": (
        _edit("encoder", "table", 4, 13, 3.0),
        r"'encoder.table\[4\]' must be 13 finite numbers, then 3 nulls"),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_missing_bins_document_is_refused_naming_the_field(saved, case) -> None:
    document = json.loads(saved[0].to_json())
    edit, match = FORGED[case]
    refused(forged(document, edit), match)


def test_the_categorical_feature_check_names_the_missing_key(saved) -> None:
    # A missing bin on an unordered categorical feature, its table row made consistent.
    document = json.loads(saved[0].to_json())
    encoder = document["encoder"]
    assert "1" in encoder["categories"] and 1 not in encoder.get("ordered", [])

    def edit(d):
        d["encoder"]["missing_bin"]["1"] = 15
        d["encoder"]["table"][1][15] = None
    refused(forged(document, edit), r"^Surrogate.from_json: 'encoder.missing_bin' must be an "
                                    r"object keyed by real or ordered features \(here among "
                                    r"\[0, 3, 4\]\)")


# -- a model that takes missing values ---------------------------------------------------------

def test_a_product_surrogate_of_a_model_that_takes_nan_answers_rows_with_nan() -> None:
    """Held-out fidelity of a tree over missing bins: the label depends on missingness.

    Deterministic (fixed seeds): the measured agreement is one number. As a
    statistical statement, 1000 held-out rows measure the tree's agreement
    within 0.05 except with probability at most 2 exp(-2 * 1000 * 0.05**2)
    < 1.4% (Hoeffding), so a tree agreeing on 97% of such rows passes 0.9.
    """
    rng = np.random.default_rng(11)
    n = 4000
    X = rng.normal(size=(n, 4))
    absent = rng.random(n) < 0.2
    y = np.where(absent, X[:, 1] > 0.5, X[:, 0] > 0).astype(int)
    X[absent, 0] = np.nan
    model = HistGradientBoostingClassifier(random_state=0).fit(X[:3000], y[:3000])
    surrogate = Surrogate(model, distribution="product", positive=1, depth=4, seed=0)
    surrogate.fit(X[:3000])
    assert surrogate.encoder_.missing_bin_ == {0: 6}
    held = X[3000:]
    predicted = surrogate.predict(held)
    assert predicted.shape == (1000,)
    nan_rows = np.flatnonzero(np.isnan(held[:, 0]))
    assert nan_rows.size > 150
    # On rows with a missing x0 the tree follows x1, as the model does.
    agree = predicted[nan_rows] == model.predict(held[nan_rows])
    assert agree.mean() > 0.9
    rules = surrogate.explain(held[nan_rows[0]])
    assert "x0 is missing" in rules.conditions
    text = surrogate.tree().to_text()
    assert "x0 is missing" in text and "or missing" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no low-fidelity warning
        fidelity = surrogate.fidelity(held, samples=2000)
    assert fidelity.data is not None and fidelity.data.rate > 0.9
    assert fidelity.product is not None and fidelity.product.rate > 0.9
    assert "x0 is missing" in surrogate.report(held)

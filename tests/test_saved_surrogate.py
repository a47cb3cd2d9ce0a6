"""A saved Surrogate (Surrogate.to_json / from_json, lca serve --model): exact, checked whole.

Every test here reads documents made by editing one real saved Surrogate. An
edit is refused by the digest; an edit whose digest was recomputed (a forged
document) is refused by the field checks, each naming its field, or it loads
a surrogate that answers without error.
"""

from __future__ import annotations

import copy
import http.client
import json
from pathlib import Path

import numpy as np
import pytest

from lca.cli import main
from lca.models import BinaryEncoder, QuantileEncoder, Surrogate
from lca.models._state import FORMAT_VERSION, digest

pd = pytest.importorskip("pandas")
pytest.importorskip("sklearn")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from models_support import loans  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::lca.reconstruct.LowMarginWarning")


@pytest.fixture(scope="module")
def saved():
    """The three kinds of saved surrogate: a DataFrame with categories, a regressor, 0/1 bits."""
    X, y = loans(300, categorical=True)
    model = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["size_class", "region"])],
                          remainder="passthrough"),
        LogisticRegression(max_iter=1000)).fit(X, y)
    frame = Surrogate(model, distribution="product", positive="repaid", depth=4).fit(X)
    rng = np.random.default_rng(1)
    R = rng.normal(size=(200, 3))
    regressor = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(
        R, R[:, 0] + R[:, 1] ** 2)
    scored = Surrogate(regressor, distribution="product", threshold=0.5, depth=3, seed=2).fit(R)
    B = rng.integers(0, 2, size=(200, 5))
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(B, B[:, 0] ^ B[:, 2])
    bits = Surrogate(tree, distribution="product", depth=3, seed=5, encoder=BinaryEncoder()).fit(B)
    return {"frame": (frame, X, model), "regressor": (scored, R, regressor),
            "bits": (bits, B, tree)}


@pytest.fixture(scope="module")
def document(saved):
    """The DataFrame surrogate's document, as JSON values."""
    return json.loads(saved["frame"][0].to_json())


def forged(document: dict, edit) -> str:
    """The document after ``edit`` (a function of a deep copy), with its digest recomputed."""
    edited = copy.deepcopy(document)
    edit(edited)
    edited["digest"] = digest(edited)
    return json.dumps(edited)


def refused(text, match: str) -> ValueError:
    """The one ValueError (not a subclass, not a TypeError) that reading ``text`` raises."""
    with pytest.raises(ValueError, match=match) as caught:
        Surrogate.from_json(text)
    assert type(caught.value) is ValueError and "\n" not in str(caught.value)
    return caught.value


# -- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["frame", "regressor", "bits"])
def test_a_round_trip_is_exact_and_answers_identically(saved, kind) -> None:
    surrogate, X, _ = saved[kind]
    text = surrogate.to_json()
    document = json.loads(text)
    assert document["version"] == FORMAT_VERSION == 3
    assert document["digest"] == digest(document) and document["digest"].startswith("sha256:")
    back = Surrogate.from_json(text)
    assert back.to_json() == text  # the same document, byte for byte
    # Indentation is layout, not content: the digest covers the content.
    assert Surrogate.from_json(surrogate.to_json(indent=2)).to_json() == text
    assert Surrogate.from_json(text.encode()).to_json() == text
    expected, answers = surrogate.predict(X), back.predict(X)
    assert answers.dtype == expected.dtype and np.array_equal(answers, expected)
    assert len(set(expected.tolist())) == 2  # both answers occur: not vacuous
    rows = X.iloc[:40:7] if hasattr(X, "iloc") else X[:40:7]
    for i in range(len(rows)):
        row = rows.iloc[[i]] if hasattr(rows, "iloc") else rows[i]
        assert back.explain(row) == surrogate.explain(row)
    assert back.tree() == surrogate.tree()
    assert back.classes_.tolist() == surrogate.classes_.tolist()
    empty = back.predict(X.iloc[:0] if hasattr(X, "iloc") else X[:0])
    assert empty.shape == (0,) and empty.dtype == expected.dtype


def test_ordered_levels_are_saved_and_answer_unseen_values_alike() -> None:
    """Integers with few values, a rare 0/1 column and a constant one, saved and read back."""
    from lca.models import UnseenValueWarning

    i = np.arange(250)
    X = pd.DataFrame({"score": (i * 37 % 250) / 10.0, "grade": i % 4 * 2,
                      "rare": (i % 61 == 3).astype(int), "const": np.full(250, 7)})
    y = (X.score > 12) ^ (X.rare == 1)
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    surrogate = Surrogate(model, distribution="product", depth=4).fit(X)
    document = json.loads(surrogate.to_json())
    assert document["encoder"]["ordered"] == [1, 2, 3]
    back = Surrogate.from_json(surrogate.to_json())
    assert back.encoder_.ordered_ == {1, 2, 3}
    unseen = X.iloc[:6].assign(grade=[-1, 1, 3, 5, 7, 9], const=8)
    for answering in (surrogate, back):
        with pytest.warns(UnseenValueWarning, match=r"'grade' \(column 1\): 6 rows; 'const' "
                                                    r"\(column 3\): 6 rows\.$"):
            np.testing.assert_array_equal(answering.encoder_.encode(unseen),
                                          surrogate.encoder_.encode(X.iloc[:6].assign(
                                              grade=[0, 2, 4, 6, 6, 6])))
    # A document written before levels could be ordered has no 'ordered': none is, and
    # an unseen value is refused as it was then.
    older = Surrogate.from_json(forged(document, _delete("encoder", "ordered")))
    assert older.encoder_.ordered_ == frozenset()
    np.testing.assert_array_equal(older.predict(X), surrogate.predict(X))
    with pytest.raises(ValueError, match=r"categorical feature 'grade' has no category -1"):
        older.predict(unseen)


def test_a_category_without_a_bin_of_its_own_reads_back() -> None:
    # 3 rows of 'amber' in 400 get no bin; their rows count in their home bin's mass,
    # so the saved masses sum to 1 and the document reads back.
    i = np.arange(400)
    X = pd.DataFrame({"colour": np.where(i < 3, "amber", np.where(i % 2, "red", "blue")),
                      "size": (i * 7919 % 400) / 4.0})
    model = make_pipeline(ColumnTransformer([("c", OneHotEncoder(), ["colour"])],
                                            remainder="passthrough"),
                          DecisionTreeClassifier(max_depth=2, random_state=0)).fit(
        X, (X.colour == "red") ^ (X["size"] > 50))
    surrogate = Surrogate(model, distribution="product", depth=3).fit(X)
    assert 0 not in surrogate.encoder_.table_[0]  # 'amber' (category 0) has no bin
    assert surrogate.encoder_.bin_mass_[0].sum() == pytest.approx(1, abs=1e-12)
    back = Surrogate.from_json(surrogate.to_json())
    np.testing.assert_array_equal(back.predict(X), surrogate.predict(X))


def test_category_names_are_saved_and_read_back() -> None:
    """Codes with names (a categorical column of codes): the names are saved with the
    encoder, shown in the text after a round trip, and a wrong code is refused by name."""
    i = np.arange(300)
    X = pd.DataFrame({"grade": i % 3, "size": (i * 7919 % 300) / 3.0})
    y = (X.grade == 2) ^ (X["size"] > 50)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    names = {"grade": {0: "low", 1: "mid", 2: "high"}}
    surrogate = Surrogate(model, distribution="product", depth=3, encoder=QuantileEncoder(
        bits=2, categorical=["grade"], category_names=names)).fit(X)
    text = surrogate.to_json()
    assert json.loads(text)["encoder"]["category_labels"] == {
        "0": [[0.0, "low"], [1.0, "mid"], [2.0, "high"]]}
    back = Surrogate.from_json(text)
    assert back.encoder_.category_labels_ == surrogate.encoder_.category_labels_
    assert "high" in back.tree().to_text() and back.tree() == surrogate.tree()
    assert back.to_json() == text
    edited = forged(json.loads(text), _set("encoder", "category_labels", "0", 1, 0, 0.0))
    with pytest.raises(ValueError, match=r"encoder.category_labels.0"):
        Surrogate.from_json(edited)


# -- the digest --------------------------------------------------------------------------------

def test_an_edit_that_keeps_every_field_consistent_is_refused_by_the_digest(document) -> None:
    nodes = document["tree"]["nodes"]
    leaf = next(node for node in nodes if node["kind"] == "leaf")
    edits = {
        "a leaf's label": lambda d: d["tree"]["nodes"][nodes.index(leaf)]["decision"].update(
            label=-leaf["decision"]["label"]),
        "a cut moved within its bin": lambda d: d["encoder"]["thresholds"]["0"].__setitem__(
            0, float(np.nextafter(d["encoder"]["thresholds"]["0"][0], np.inf))),
        "a leaf's sample count": lambda d: d["tree"]["nodes"][nodes.index(leaf)][
            "decision"].update(samples=leaf["decision"]["samples"] + 2),
        "a node's margin": lambda d: d["tree"]["nodes"][0]["decision"].update(
            margin=nodes[0]["decision"]["margin"] + 1),
    }
    for name, edit in edits.items():
        edited = copy.deepcopy(document)
        edit(edited)
        assert edited != document, name
        # Forged, the edit is consistent: it loads (so only the digest can refuse it).
        Surrogate.from_json(forged(document, edit))
        refused(json.dumps(edited), r"^Surrogate.from_json: 'digest' does not match the "
                                    r"document's content: it was edited or corrupted after "
                                    r"Surrogate.to_json wrote it")


def test_every_single_value_edited_is_refused(document) -> None:
    """Each scalar of the document changed to another value of its type: never read."""
    def scalars(value, where=()):
        if isinstance(value, dict):
            for key, item in value.items():
                yield from scalars(item, (*where, key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                yield from scalars(item, (*where, i))
        else:
            yield where, value

    def other(value):
        if isinstance(value, bool):
            return not value
        if isinstance(value, (int, float)):
            return value + 1
        return 0 if value is None else value + "x"

    count = 0
    for where, value in scalars(document):
        if where == ("digest",):
            continue
        edited = copy.deepcopy(document)
        target = edited
        for step in where[:-1]:
            target = target[step]
        target[where[-1]] = other(value)
        refused(json.dumps(edited), r"^Surrogate.from_json: ")
        count += 1
    assert count > 300


def test_the_digest_itself_is_checked(document) -> None:
    for value in (None, 5, "sha256:" + "0" * 63, "md5:" + "0" * 64, "sha256:" + "A" * 64):
        edited = dict(document, digest=value)
        refused(json.dumps(edited), r"^Surrogate.from_json: 'digest' must be 'sha256:' and 64 "
                                    r"lowercase hex digits\.")
    edited = dict(document, digest="sha256:" + "0" * 64)
    refused(json.dumps(edited), r"'digest' does not match")
    missing = {key: value for key, value in document.items() if key != "digest"}
    refused(json.dumps(missing), r"^Surrogate.from_json: the document misses 'digest' \(keys: ")


# -- every field checked, each error naming its field ------------------------------------------

def _set(*where_and_value):
    *where, value = where_and_value

    def edit(d):
        for step in where[:-1]:
            d = d[step]
        d[where[-1]] = value
    return edit


def _delete(*where):
    def edit(d):
        for step in where[:-1]:
            d = d[step]
        del d[where[-1]]
    return edit


def _tree_n(n):
    def edit(d):
        d["tree"]["n"] = n
        d["tree"]["params"]["n"] = n
    return edit


def _swap_categories(d):
    d["encoder"]["categories"]["1"].reverse()


def _rename_condition(d):
    node = next(node for node in d["tree"]["nodes"] if node["kind"] == "node")
    node["conditions"][0] = node["conditions"][0] + " (edited)"


FIELD_CASES = {
    "seed of the tree": (_set("tree", "seed", 5),
                         r"^Surrogate.from_json: 'tree.seed' is 5, but 'seed' is 0; the tree"),
    "seed out of range": (_set("seed", 1 << 64), r"'seed' must be an int in \[0, "),
    "seed a float": (_set("seed", 0.0), r"'seed' must be an int in \[0, "),
    "queries negative": (_set("queries", -1), r"'queries' must be an int in \[0, "
                                              r"9223372036854775807\]"),
    "queries beyond int64": (_set("queries", 1 << 63), r"'queries' must be an int in \[0, "
                                                       r"9223372036854775807\]"),
    "tree n": (_tree_n(15), r"^Surrogate.from_json: 'tree.n' is 15, but the encoder makes 12 "
                            r"bits \(4 features of 3\)\.$"),
    "missing tree": (_delete("tree"), r"^Surrogate.from_json: the document misses 'tree'"),
    "encoder a number": (_set("encoder", 5), r"^Surrogate.from_json: 'encoder' must be an "
                                             r"object \(the fitted encoder's state\)\. Got 5"),
    "encoder kind": (_set("encoder", "kind", "Other"), r"'encoder.kind' must be "
                                                       r"'BinaryEncoder' or 'QuantileEncoder'"),
    "encoder key missing": (_delete("encoder", "home_bin"),
                            r"^Surrogate.from_json: 'encoder' misses 'home_bin'"),
    "bits": (_set("encoder", "bits", 17), r"'encoder.bits' must be an int in \[1, 16\]"),
    "classes equal": (_set("classes", [1, 1]), r"^Surrogate.from_json: 'classes' must be two "
                                               r"different labels of one type"),
    "classes null": (_set("classes", [None, 1]), r"'classes' must be two different labels"),
    "classes null itself": (_set("classes", None), r"'classes' must be two different labels"),
    "classes mixed": (_set("classes", ["default", 1]), r"'classes' must be two different"),
    "classes beyond int64": (_set("classes", [0, 1 << 63]),
                             r"'classes' must be two different labels of one type \(strings, "
                             r"numbers within int64"),
    "classes below int64": (_set("classes", [-(1 << 63) - 1, 0]),
                            r"'classes' must be two different labels of one type"),
    "classes not ending in positive": (
        _set("classes", ["default", "other"]),
        r"'classes' \['default', 'other'\] must end with the positive class 'repaid'"),
    "class names": (_set("tree", "class_names", ["repaid", "default"]),
                    r"'tree.class_names' \['repaid', 'default'\] must be the 'classes'"),
    "positive a list": (_set("positive", [1]), r"'positive' must be null, a string"),
    "threshold a string": (_set("threshold", "0.5"), r"'threshold' must be null or a finite "
                                                     r"number"),
    "depth": (_set("depth", 31), r"'depth' must be an int in \[0, 30\]"),
    "model": (_set("model", "Other"), r"'tree.oracle' is 'Pipeline', but 'model' is 'Other'"),
    "home bin out of range": (_set("encoder", "home_bin", "1", [0, 3, 8]),
                              r"'encoder.home_bin.1' must be 3 bins in \[0, 8\) in increasing"),
    "home bin not first": (_set("encoder", "home_bin", "1", [0, 1, 5]),
                           r"'encoder.home_bin.1' must send category 'medium' to its first "
                           r"bin"),
    "categories swapped": (_swap_categories, r"'encoder.categories.1' must be a strictly "
                                             r"increasing list"),
    "cuts not increasing": (_set("encoder", "thresholds", "0", [1.0] * 7),
                            r"'encoder.thresholds.0' must be strictly increasing cuts"),
    "cut outside its bin": (_set("encoder", "thresholds", "0", [float(k) for k in range(7)]),
                            r"'encoder.table\[0\]' must hold a value inside each bin"),
    "cuts short": (_set("encoder", "thresholds", "0", [1.0, 2.0]),
                   r"'encoder.thresholds.0' must be a list of 7 finite numbers"),
    "a feature both real and categorical": (
        _set("encoder", "thresholds", "1", [float(k) for k in range(7)]),
        r"every feature in exactly one of them\. Got feature 1 in both"),
    "feature key": (_set("encoder", "categories", "01", ["a", "b"]),
                    r"'encoder.categories' has the key '01'; its keys are feature numbers"),
    "bin mass": (_set("encoder", "bin_mass", 0, [0.5] * 8),
                 r"'encoder.bin_mass\[0\]' must be shares in \[0, 1\] that sum to 1"),
    "table category out of range": (_set("encoder", "table", 1, [0.0] * 4 + [5.0] * 4),
                                    r"'encoder.table\[1\]' must be category numbers in "
                                    r"\[0, 3\)"),
    "pandas categories": (_set("encoder", "categorical_dtypes", "2", "categories",
                               ["east", "north"]),
                          r"'encoder.categorical_dtypes.2.categories' lacks the category "
                          r"'south' of 'encoder.categories.2'"),
    "feature names": (_set("encoder", "feature_names", ["a", "b"]),
                      r"'encoder.columns' must be null or 2 different column labels"),
    "feature_names_in": (_set("feature_names_in", ["income", "size", "region", "age"]),
                         r"'feature_names_in' must be the names of the encoder's columns"),
    "conditions": (_rename_condition, r"^Surrogate.from_json: 'tree' node \(\) has the "
                                      r"conditions .* but its encoder reads x\d+ as"),
    "features": (_set("tree", "features", {}), r"'tree.features' must name each split "
                                               r"variable's feature"),
    "tree params": (_set("tree", "params", "leaf_samples", -1),
                    r"^Surrogate.from_json: 'tree' is not an exported tree: |'tree.params'"),
    "a tree leaf label": (lambda d: d["tree"]["nodes"][-1]["decision"].update(label=5),
                          r"'tree' is not an exported tree: .*a leaf's label must be -1 or \+1"),
    "unknown key": (_set("comment", "hi"), r"the document has unknown 'comment'"),
    "ordered a real feature": (_set("encoder", "ordered", [0]),
                               r"^Surrogate.from_json: 'encoder.ordered' must be an increasing "
                               r"list of features whose categories are numbers \(here among "
                               r"\[\]\)\. Got \[0\] instead\.$"),
    "ordered strings": (_set("encoder", "ordered", [1]), r"'encoder.ordered' must be an"),
    "ordered not a list": (_set("encoder", "ordered", "1"), r"'encoder.ordered' must be an"),
}


@pytest.mark.parametrize("case", sorted(FIELD_CASES))
def test_a_forged_document_is_refused_naming_the_field(document, case) -> None:
    edit, match = FIELD_CASES[case]
    refused(forged(document, edit), match)


def test_a_binary_encoder_has_one_bit_a_feature(saved) -> None:
    document = json.loads(saved["bits"][0].to_json())
    assert document["encoder"]["bits"] == 1
    for bits in (0, 2):
        refused(forged(document, _set("encoder", "bits", bits)),
                r"^Surrogate.from_json: 'encoder.bits' must be an int in \[1, 1\]")


def test_a_multiclass_tree_s_classes_are_int64_labels() -> None:
    """The int64 bounds of a K-class document, one past each end refused by name."""
    from sklearn.datasets import load_iris
    iris = load_iris()
    model = LogisticRegression(max_iter=1000).fit(iris.data, iris.target)
    document = json.loads(Surrogate(model, depth=2).fit(iris.data).to_json())
    assert document["classes"] == [0, 1, 2]
    for wrong in ([0, 1, 1 << 63], [-(1 << 63) - 1, 0, 1]):
        refused(forged(document, _set("classes", wrong)),
                r"^Surrogate.from_json: 'classes' must be different labels of one type "
                r"\(strings, numbers within int64, or bools\), one per class")


@pytest.mark.parametrize("text, match", [
    ('"seed": 1e400', r"^Surrogate.from_json: 'seed' is '1e400'; numbers in a saved Surrogate "
                      r"are finite"),
    ('"seed": NaN', r"'seed' is 'NaN'"),
    ('"seed": -Infinity', r"'seed' is '-Infinity'"),
    ('"seed": ' + "9" * 5000, r"'seed' is '9999.*'; numbers in a saved Surrogate are finite, "
                              r"with at most 40 digits"),
    ('"seed": 0, "classes": ["default", "repaid"]',
     r"^Surrogate.from_json: the document gives the key 'classes' more than once\.$"),
    ('"seed": ' + "[" * 20 + "]" * 20, r"'seed\[0\]\[0\].*' is nested 16 levels deep"),
    ('"seed": ' + "[" * 100_000 + "]" * 100_000, r"the JSON is nested too deeply"),
])
def test_numbers_keys_and_nesting_json_allows_are_refused_by_name(document, text,
                                                                  match) -> None:
    body = json.dumps({key: value for key, value in document.items() if key != "seed"})
    refused("{" + text + ", " + body[1:], match)


def test_text_that_is_not_a_saved_surrogate(document) -> None:
    refused(b"\xff\xfe\x00", r"^Surrogate.from_json: not valid JSON")
    refused(json.dumps(document)[:-5], r"^Surrogate.from_json: not valid JSON")
    refused("[1, 2]", r"not a saved Surrogate \(expected \"format\": 'lca.models.Surrogate'\)")
    refused(json.dumps(document["tree"]), r"not a saved Surrogate")
    for version in (4, 0, "3", 3.0, None):
        refused(json.dumps(dict(document, version=version)),
                r"format version .* is not supported \(this lca reads version 3, and versions "
                r"1 and 2 on request\)")
    with pytest.raises(TypeError, match=r"The 'text' parameter of Surrogate.from_json"):
        Surrogate.from_json(document)


def test_forged_edits_anywhere_never_raise_anything_but_value_error(saved, document) -> None:
    """Each value at each place (digest recomputed): refused by name, or a working surrogate."""
    X = saved["frame"][1]
    wrong = [None, "x", -1, 1 << 64, 0.5, True, [], {}, [0, 1]]

    def places(value, where=()):
        yield where
        items = value.items() if isinstance(value, dict) else (
            enumerate(value[:2]) if isinstance(value, list) else ())  # two of each list
        for key, item in items:
            yield from places(item, (*where, key))

    loaded = 0
    for where in places(document):
        if not where or where == ("digest",):
            continue
        for value in wrong:
            try:
                back = Surrogate.from_json(forged(document, _set(*where, value)))
            except ValueError as error:
                assert type(error) is ValueError and "\n" not in str(error), (where, value)
                continue
            loaded += 1
            assert back.predict(X).shape == (len(X),), (where, value)
    assert loaded > 0  # some values are harmless (a count, an unused flag): they load


# -- documents of earlier formats ------------------------------------------------------------------

def test_version_1_documents_are_read_only_on_request(saved, document) -> None:
    surrogate, X, _ = saved["frame"]
    old = {key: value for key, value in document.items() if key not in ("digest", "queries")}
    old["version"] = 1
    text = json.dumps(old)
    refused(text, r"^Surrogate.from_json: this is a format version 1 document, written by an "
                  r"earlier lca without an integrity digest, so an edit to it cannot be "
                  r"detected\. If you trust the file, read it with Surrogate.from_json\(text, "
                  r"allow_old_version=True\) \(every field is still checked\)\.$")
    back = Surrogate.from_json(text, allow_old_version=True)
    np.testing.assert_array_equal(back.predict(X), surrogate.predict(X))
    assert back.queries_ is None  # not recorded then
    # Saved again: this version, with the digest, and queries not recorded.
    again = json.loads(back.to_json())
    assert again["version"] == 3 and again["queries"] is None
    assert {k: v for k, v in again.items() if k not in ("digest", "queries")} == \
        {k: v for k, v in document.items() if k not in ("digest", "queries")}
    # Its fields are checked all the same.
    old["classes"] = [1, 1]
    with pytest.raises(ValueError, match=r"'classes' must be two different labels"):
        Surrogate.from_json(json.dumps(old), allow_old_version=True)
    with pytest.raises(ValueError, match=r"the document has unknown 'digest'"):
        Surrogate.from_json(json.dumps({k: v for k, v in document.items() if k != "queries"}
                                       | {"version": 1}), allow_old_version=True)
    with pytest.raises(TypeError, match=r"The 'allow_old_version' parameter of "
                                        r"Surrogate.from_json must be a bool"):
        Surrogate.from_json(text, allow_old_version="yes")


DATA = Path(__file__).resolve().parent / "data"
# What the format 2 documents in tests/data (written by lca at e83c57b, the data-mode tree
# of its first node rule) answer on table(20, seed=1).
V2_DATA = [True, False, True, True, True, True, True, False, False, True, True, False, False,
           True, True, True, False, True, True, False]
V2_PRODUCT = [True, True, False, True, True, True, True, False, False, True, False, False,
              False, False, True, True, False, False, True, True]


@pytest.mark.parametrize("name, answers", [("data", V2_DATA), ("product", V2_PRODUCT)])
def test_version_2_documents_are_read_on_request_and_answer_as_written(name, answers):
    from rows_support import table

    text = (DATA / f"surrogate_v2_{name}.json").read_text()
    refused(text, r"^Surrogate.from_json: this is a format version 2 document, written by an "
                  r"earlier lca, which did not record the tree's builder or its queries\. If "
                  r"you trust the file, read it with Surrogate.from_json\(text, "
                  r"allow_old_version=True\)")
    back = Surrogate.from_json(text, allow_old_version=True)
    assert back.predict(table(20, seed=1)).tolist() == answers
    assert back.queries_ is None and back.distribution_ == name
    if name == "product":  # a real lca.Params: saved again in this format
        assert json.loads(back.to_json())["tree"] == json.loads(text)["tree"]
    else:  # grown by the first node rule, which format 3 cannot record
        assert back.tree_.builder == "rows" and back.shared_rows_ is None
        with pytest.raises(ValueError, match=r"^Surrogate.to_json: this surrogate was read "
                                             r"from a format 2 document, whose data-mode tree "
                                             r"was grown by an earlier rule"):
            back.to_json()


@pytest.mark.parametrize("product_rows, loads", [(0, False), (1, True), (128, False)])
def test_a_version_2_document_s_product_rows_are_written_only_when_set(product_rows, loads):
    """Format 2 wrote rows.product_rows only when not 0, below rows_per_node (128 here)."""
    document = json.loads((DATA / "surrogate_v2_data.json").read_text())
    text = forged(document, _set("rows", "product_rows", product_rows))
    if loads:
        assert Surrogate.from_json(text, allow_old_version=True).tree_.builder == "rows"
        return
    with pytest.raises(ValueError, match=r"'rows.product_rows' must be an int in \[1, 127\]"):
        Surrogate.from_json(text, allow_old_version=True)


def test_the_model_given_must_fit_the_document(saved) -> None:
    surrogate, X, model = saved["frame"]
    text = surrogate.to_json()
    assert Surrogate.from_json(text, model=model).fidelity(X, samples=50) == \
        surrogate.fidelity(X, samples=50)
    _, y = loans(300, categorical=True)
    y = np.where(np.arange(len(y)) % 10 == 0, "late", y)  # a third class
    other = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["size_class", "region"])],
                          remainder="passthrough"),
        LogisticRegression(max_iter=1000)).fit(X, y)
    with pytest.raises(ValueError, match=r"^Surrogate.from_json: the model 'Pipeline' answers "
                                         r"\['not repaid', 'repaid'\], but the saved "
                                         r"surrogate \['default', 'repaid'\]; pass the model "
                                         r"it was fitted with\.$"):
        Surrogate.from_json(text, model=other)


# -- lca serve --model ----------------------------------------------------------------------------

SERVE_CASES = {
    "the tree of another seed": (_set("tree", "seed", 5), "'tree.seed' is 5, but 'seed' is 0"),
    "a tree with more bits than the encoder": (_tree_n(15), "'tree.n' is 15, but the encoder "
                                                            "makes 12 bits"),
    "no tree": (_delete("tree"), "the document misses 'tree'"),
    "a garbage encoder": (_set("encoder", [1, 2]), "'encoder' must be an object"),
}


@pytest.mark.parametrize("case", sorted(SERVE_CASES))
def test_serve_refuses_an_inconsistent_model_file_in_one_line(document, tmp_path, capsys,
                                                              case) -> None:
    pytest.importorskip("uvicorn")
    edit, message = SERVE_CASES[case]
    path = tmp_path / "surrogate.json"
    path.write_text(forged(document, edit))
    assert main(["serve", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(f"lca serve: error: argument --model: {str(path)!r} is not "
                                   "a saved lca.models.Surrogate: Surrogate.from_json: ")
    assert message in captured.err


def test_serve_refuses_edited_and_undigested_files(document, tmp_path, capsys) -> None:
    pytest.importorskip("uvicorn")
    edited = copy.deepcopy(document)
    edited["classes"].reverse()
    edited["tree"]["class_names"].reverse()
    edited["positive"] = None
    old = {key: value for key, value in document.items() if key != "digest"}
    for text, message in ((json.dumps(edited), "'digest' does not match"),
                          (json.dumps(dict(old, version=1)), "format version 1 document"),
                          (b"\xff" + json.dumps(document).encode(), "not valid JSON")):
        path = tmp_path / "surrogate.json"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        assert main(["serve", "--model", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err


def test_describe_does_not_show_the_model_file_path(saved, tmp_path) -> None:
    pytest.importorskip("uvicorn")
    from serve_support import running

    path = tmp_path / "private-folder" / "surrogate.json"
    path.parent.mkdir()
    path.write_text(saved["bits"][0].to_json())
    with running("--model", str(path)) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            connection.request("GET", "/describe")
            body = connection.getresponse().read().decode()
        finally:
            connection.close()
    described = json.loads(body)
    assert described["oracle"]["source"] == "model" and described["oracle"]["spec"] is None
    assert described["seeds"] == [5]
    assert "private-folder" not in body and str(tmp_path) not in body


def test_serve_reads_only_regular_files(tmp_path, capsys) -> None:
    """A device or a pipe would be read forever or block: refused before reading."""
    pytest.importorskip("uvicorn")
    import os

    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)  # opening it to read would wait for a writer that never comes
    for path in [str(pipe), str(tmp_path)] + (["/dev/zero"] if os.path.exists("/dev/zero")
                                              else []):
        assert main(["serve", "--model", path]) == 2
        assert capsys.readouterr().err == (f"lca serve: error: argument --model: cannot read "
                                           f"{path!r}: not a regular file\n")

"""``lca distill``: a saved model and a CSV in, report, rules and files out."""

from __future__ import annotations

import json
from contextlib import nullcontext

import numpy as np
import pytest

import lca
from lca.cli import main
from lca.models import LowFidelityWarning, Surrogate

pd = pytest.importorskip("pandas")
joblib = pytest.importorskip("joblib")
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::lca.reconstruct.LowMarginWarning")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("distill")
    data = load_breast_cancer(as_frame=True)
    y = data.target.map({0: "malignant", 1: "benign"})
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    model.fit(data.data, y)
    joblib.dump(model, folder / "model.joblib")
    data.frame.assign(label=y).to_csv(folder / "rows.csv", index=False)  # extra columns
    return folder, model, data.data


def held_out(X, fraction: float, seed: int = 0):
    """The rows lca distill fits and holds out: the last floor(fraction * rows) rows in the
    order of derived keys (purpose "distill-holdout"), ties to the lower row, each part in
    file order."""
    rows = len(X)
    keys = lca.derive.raw_words(lca.derive.node_key(seed, "distill-holdout", ()), 0, 0, rows)
    ranked = sorted(range(rows), key=lambda i: (int(keys[i]), i))
    held = int(fraction * rows)
    return X.iloc[sorted(ranked[:rows - held])], X.iloc[sorted(ranked[rows - held:])]


@pytest.mark.parametrize("extension", [".json", ".txt", ".dot", ".png"])
def test_distill_prints_the_report_and_writes_the_tree(saved, extension, capsys) -> None:
    folder, model, X = saved
    out = folder / f"tree{extension}"
    code = main(["distill", str(folder / "model.joblib"), "--data", str(folder / "rows.csv"),
                 "--positive", "malignant", "--depth", "3", "--out", str(out), "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0 and out.exists()
    fitted, held = held_out(X, 0.25)
    expected = Surrogate(model, positive="malignant", depth=3).fit(fitted)
    tree = expected.tree()
    first, report = printed.split("\n", 1)
    assert first == ("held out: 142 of the 569 rows (25%, picked by seed 0); the tree is fitted "
                     "on the other 427, and the agreement below is on the held-out rows")
    with pytest.warns(LowFidelityWarning) if "warning:" in report else nullcontext():
        assert report.startswith(expected.report(held) + "\n")
    assert tree.to_text() in printed and f"wrote {out}" in printed
    if extension == ".json":
        back = Surrogate.from_json(out.read_text())
        np.testing.assert_array_equal(back.predict(X), expected.predict(X))
        assert json.loads(out.read_text())["encoder"]["feature_names"] == list(X.columns)
    elif extension == ".txt":
        assert out.read_text() == tree.to_text() + "\n"
    elif extension == ".dot":
        assert out.read_text() == tree.to_dot()
    else:
        from PIL import Image  # matplotlib's own dependency

        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        with Image.open(out) as image:  # drawn at 120 dpi, legible when printed
            assert [round(dots) for dots in image.info["dpi"]] == [120, 120]


def test_distill_of_a_multiclass_model_writes_one_tree_of_its_classes(tmp_path,
                                                                     capsys) -> None:
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier

    data = load_iris(as_frame=True)
    y = data.target.map(dict(enumerate(data.target_names)))
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(data.data, y)
    joblib.dump(model, tmp_path / "model.joblib")
    data.data.to_csv(tmp_path / "rows.csv", index=False)
    out = tmp_path / "tree.json"
    code = main(["distill", str(tmp_path / "model.joblib"), "--data", str(tmp_path / "rows.csv"),
                 "--depth", "3", "--out", str(out), "--quiet"])
    printed = capsys.readouterr().out
    expected = Surrogate(model, depth=3).fit(held_out(data.data, 0.25)[0])
    assert code == 0 and printed.split("\n", 1)[1].startswith(
        "Surrogate of DecisionTreeClassifier: one tree over its 3 classes ['setosa', "
        "'versicolor', 'virginica']\n")
    assert expected.tree().to_text() in printed
    assert out.read_text() == expected.to_json(indent=1) + "\n"


@pytest.mark.parametrize("extra, message", [
    (["--positive", "healthy"], "The 'positive' parameter must be one of the model's classes "
                                "['benign', 'malignant']. Got 'healthy'."),
    (["--out", "tree.svg"], "argument --out: 'tree.svg' must end in one of"),
    (["--drop", "nope"], "The 'drop' parameter names column(s) ['nope']"),
])
def test_distill_refuses_bad_arguments(saved, extra, message, capsys) -> None:
    folder, _, _ = saved
    code = main(["distill", str(folder / "model.joblib"), "--data", str(folder / "rows.csv"),
                 "--quiet", *extra])
    assert code == 2 and message in capsys.readouterr().err


def test_distill_says_that_loading_runs_code(saved, capsys) -> None:
    folder, _, _ = saved
    with pytest.raises(SystemExit):
        main(["distill", "--help"])
    assert "loading a pickle or joblib file runs code" in " ".join(capsys.readouterr().out.split())
    code = main(["distill", str(folder / "missing.joblib"), "--data",
                 str(folder / "rows.csv")])
    assert code == 2 and "argument MODEL: cannot load" in capsys.readouterr().err


@pytest.mark.parametrize("content", [
    b"\x80\x04garbage that is not a pickle",
    b"hello",
    b"",
    b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a",  # a truncated pickle
])
def test_distill_refuses_a_garbage_model_file_in_one_line(saved, tmp_path, capsys,
                                                          content) -> None:
    folder, _, _ = saved
    path = tmp_path / "model.joblib"
    path.write_bytes(content)
    code = main(["distill", str(path), "--data", str(folder / "rows.csv"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"lca distill: error: argument MODEL: cannot load {str(path)!r}: ")


@pytest.mark.parametrize("raised, shown", [
    (ValueError("bad\n  header,\tsee above"), "ValueError: bad header, see above"),
    (EOFError(), "EOFError: (no message)"),
])
def test_a_load_error_is_folded_onto_one_line(saved, tmp_path, capsys, monkeypatch, raised,
                                              shown) -> None:
    import lca.models.cli as cli

    def fail(path):
        raise raised

    monkeypatch.setattr(cli, "_load", fail)
    folder, _, _ = saved
    code = main(["distill", str(tmp_path / "model.joblib"), "--data",
                 str(folder / "rows.csv"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.endswith(f": {shown}\n") and err.count("\n") == 1


def _unwritable_folder(tmp_path):
    """A folder no file can be made in, or None where this user can write anywhere."""
    import os
    import tempfile

    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    for candidate in (str(folder), "/sys", "/proc"):  # root writes in the first: try others
        if not os.path.isdir(candidate):
            continue
        try:
            with tempfile.NamedTemporaryFile(dir=candidate):
                pass
        except OSError:
            return candidate
    return None


def test_distill_refuses_an_unwritable_out_before_any_work(saved, tmp_path, capsys) -> None:
    folder, _, _ = saved
    missing = str(tmp_path / "no-such-model.joblib")  # loading it would fail: never tried
    directory = tmp_path / "tree.json"
    directory.mkdir()
    code = main(["distill", missing, "--data", str(folder / "rows.csv"), "--out",
                 str(directory)])
    err = capsys.readouterr().err
    assert code == 2 and err == (f"lca distill: error: argument --out: cannot write "
                                 f"{str(directory)!r}: it is a directory\n")
    unwritable = _unwritable_folder(tmp_path)
    if unwritable is None:
        pytest.skip("every folder is writable for this user")
    out = f"{unwritable}/tree.json"
    code = main(["distill", missing, "--data", str(folder / "rows.csv"), "--out", out])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"lca distill: error: argument --out: cannot write "
                                        f"{out!r}: ") and "MODEL" not in err


def test_distill_with_no_option_prints_a_short_tree_and_a_held_out_agreement(saved, capsys):
    folder, model, X = saved
    code = main(["distill", str(folder / "model.joblib"), "--data", str(folder / "rows.csv"),
                 "--quiet"])
    printed = capsys.readouterr().out
    fitted, held = held_out(X, 0.25)
    expected = Surrogate(model).fit(fitted)
    assert code == 0 and expected.depth == 4
    text = expected.tree().to_text()
    assert printed.endswith("\n\n" + text + "\n") and len(text.splitlines()) <= 40
    agreement = expected.fidelity(held).data
    assert agreement.rows == len(held) == 142
    assert f"  agreement on the rows given: {agreement}" in printed


def test_distill_without_a_holdout_says_the_agreement_flatters(saved, capsys) -> None:
    folder, model, X = saved
    code = main(["distill", str(folder / "model.joblib"), "--data", str(folder / "rows.csv"),
                 "--quiet", "--holdout", "0", "--depth", "2"])
    printed = capsys.readouterr().out
    assert code == 0 and printed.startswith(
        "no rows held out (--holdout 0): the agreement below is on the 569 fitted rows, "
        "which flatters the tree\n")
    assert Surrogate(model, depth=2).fit(X).tree().to_text() in printed


@pytest.mark.parametrize("holdout", ["1", "-0.1", "x"])
def test_distill_refuses_a_holdout_outside_zero_to_one(saved, holdout, capsys) -> None:
    folder, _, _ = saved
    with pytest.raises(SystemExit):
        main(["distill", str(folder / "model.joblib"), "--data", str(folder / "rows.csv"),
              "--holdout", holdout])
    assert f"must be a number in [0, 1), got {holdout!r}" in capsys.readouterr().err


@pytest.mark.parametrize("rows, holdout, fits", [(1, "0", False), (2, "0", True),
                                                 (2, "0.25", False), (3, "0.5", True),
                                                 (4, "0.25", True)])
def test_distill_needs_two_fitted_rows_and_one_held_out(saved, tmp_path, rows, holdout,
                                                        fits, capsys) -> None:
    folder, _, X = saved
    X.iloc[:rows].to_csv(tmp_path / "few.csv", index=False)
    code = main(["distill", str(folder / "model.joblib"), "--data", str(tmp_path / "few.csv"),
                 "--quiet", "--holdout", holdout, "--depth", "1"])
    err = capsys.readouterr().err
    if fits:
        assert code == 0 and err == ""
    else:
        assert code == 2 and err.startswith(
            f"lca distill: error: argument --data: {str(tmp_path / 'few.csv')!r} has {rows} "
            "row(s): a tree needs at least 2 fitted rows")


def test_distill_refuses_a_csv_that_names_a_column_twice(saved, tmp_path, capsys) -> None:
    folder, _, X = saved
    (tmp_path / "twice.csv").write_text("a,b,a\n1,2,3\n4,5,6\n")
    code = main(["distill", str(folder / "model.joblib"), "--data", str(tmp_path / "twice.csv")])
    assert code == 2 and capsys.readouterr().err == (
        f"lca distill: error: argument --data: {str(tmp_path / 'twice.csv')!r} names the "
        "column(s) ['a'] more than once; a column must be named once to be taken by name.\n")


def test_distill_on_a_full_device_writes_nothing_and_says_so(saved, tmp_path, monkeypatch,
                                                             capsys) -> None:
    import os
    import tempfile

    folder, _, _ = saved
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    made = []

    def full(dir, prefix, suffix):  # noqa: A002 - tempfile's own parameter name
        path = os.path.join(dir, prefix + "full" + suffix)
        open(path, "w").close()
        made.append(path)
        return os.open("/dev/full", os.O_WRONLY), path

    monkeypatch.setattr(tempfile, "mkstemp", full)
    out = tmp_path / "tree.json"
    code = main(["distill", str(folder / "model.joblib"), "--data", str(folder / "rows.csv"),
                 "--quiet", "--depth", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err == (f"lca distill: error: argument --out: cannot write "
                                 f"{str(out)!r}: No space left on device; nothing was "
                                 "written\n")
    assert not out.exists() and made and not any(os.path.exists(path) for path in made)

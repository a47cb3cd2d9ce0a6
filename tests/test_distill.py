"""``lca distill``: a saved model and a CSV in, report, rules and files out."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lca.cli import main
from lca.models import Surrogate

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


@pytest.mark.parametrize("extension", [".json", ".txt", ".dot", ".png"])
def test_distill_prints_the_report_and_writes_the_tree(saved, extension, capsys) -> None:
    folder, model, X = saved
    out = folder / f"tree{extension}"
    code = main(["distill", str(folder / "model.joblib"), "--data", str(folder / "rows.csv"),
                 "--positive", "malignant", "--depth", "3", "--out", str(out), "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0 and out.exists()
    expected = Surrogate(model, positive="malignant", depth=3).fit(X)
    tree = expected.tree()
    assert printed.startswith("Surrogate of GradientBoostingClassifier: 'malignant' vs "
                              "'benign'\n")
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
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


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
    expected = Surrogate(model, depth=3).fit(data.data)
    assert code == 0 and printed.startswith(
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

"""Write tests/data/rows_answers.json: known answers of a data-mode Surrogate.

Run it only to make a deliberate compatibility break of docs/randomness.md
§10 (data-mode nodes):

    python scripts/make_rows_answers.py

The file holds synthetic rows (drawn once from ``numpy.random.default_rng(SEED)``
and stored, so a change in numpy's generators cannot move them), the
parameters, the rows' digest, a handful of rows with the surrogate's answer
and path, every decision of the whole tree, and its text. The model is
:func:`model`, a plain function, and is part of the case.
``tests/test_rows_answers.py`` recomputes :func:`compute` on the stored rows
and compares exactly.

    python scripts/make_rows_answers.py --multiclass

writes tests/data/rows_multiclass_answers.json instead: the same rows and
parameters, the multi-class tree (leaves answer a class) of
:class:`ThreeClasses`; ``tests/test_rows_multiclass.py`` recomputes
:func:`compute_multiclass`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "rows_answers.json"
OUT_MULTICLASS = OUT.parent / "rows_multiclass_answers.json"
SEED = 20261125
COLUMNS = ["a", "b", "colour"]
PARAMETERS = {"depth": 5, "seed": 3, "rows_per_node": 32, "min_rows": 4, "cuts": 16}
EXPLAINED = 8  # rows whose answer and path are stored


def model(frame: pd.DataFrame) -> np.ndarray:
    """The case's model: 0/1 labels of a fixed rule over the three columns."""
    a, b = frame["a"].to_numpy(float), frame["b"].to_numpy(float)
    red = (frame["colour"] == "red").to_numpy()
    return (((a + 0.3 * b > 1.0) & ~red) | (red & (a < 0.5))).astype(int)


def model_row(row: list) -> int:
    """:func:`model` of one row ``[a, b, colour]``, as ``+1`` / ``-1`` (for the reference)."""
    a, b, colour = float(row[0]), float(row[1]), row[2]
    red = colour == "red"
    return 1 if ((a + 0.3 * b > 1.0) and not red) or (red and a < 0.5) else -1


class ThreeClasses:
    """The multi-class case's model: three classes of a fixed rule. ``classes_`` is not in
    sorted order, so that ties (to the lowest index) follow ``classes_``, not the labels."""

    classes_ = np.array(["low", "mid", "high"])

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        a, b = frame["a"].to_numpy(float), frame["b"].to_numpy(float)
        red = (frame["colour"] == "red").to_numpy()
        score = a + 0.3 * b
        out = np.where(score > 1.5, "high", np.where(score > 0.5, "mid", "low"))
        return np.where(red & (a < 0.5), "high", out)


def class_row(row: list) -> int:
    """:class:`ThreeClasses` of one row ``[a, b, colour]``, as its index in ``classes_``."""
    a, b, colour = float(row[0]), float(row[1]), row[2]
    if colour == "red" and a < 0.5:
        return 2
    score = a + 0.3 * b
    return 2 if score > 1.5 else 1 if score > 0.5 else 0


def make_rows() -> list[list]:
    rng = np.random.default_rng(SEED)
    rows = 240
    a = rng.normal(0.5, 1.0, rows).round(2)
    b = rng.integers(0, 8, rows)
    colour = rng.choice(["blue", "green", "red"], rows, p=[0.4, 0.35, 0.25])
    return [[float(x), int(y), str(z)] for x, y, z in zip(a, b, colour, strict=True)]


def frame_of(rows: list[list]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


def _frozen(rows: list[list], surrogate: Any, answer_of: Any) -> dict:
    """What both files freeze of the data-mode surrogates ``surrogate()`` fitted on ``rows``:
    the explained rows (one fresh surrogate), then every decision of the whole tree (another)."""
    X = frame_of(rows)
    explained = surrogate().fit(X)
    answers = []
    for i in range(EXPLAINED):
        rules = explained.explain(X.iloc[i])
        answers.append({"row": rows[i], "answer": answer_of(rules.prediction),
                        "path": [list(step) for step in rules.path]})
    local_queries = explained.queries_
    whole = surrogate().fit(X)
    tree = whole.tree()
    decisions = [{"path": [list(step) for step in path], "kind": type(node).__name__,
                  "decision": dataclasses.asdict(node),
                  "rows": None if path not in tree.leaves else
                  dataclasses.asdict(whole.tree_.leaf_rows(path))}
                 for path, node in tree.walk()]
    return {"rows": rows, "rows_digest": whole.rows_digest_,
            "answers": answers, "queries_for_answers": local_queries,
            "queries_whole_tree": whole.queries_,
            "decisions": decisions, "text": tree.to_text()}


def _surrogate(model: Any, **kwargs: Any) -> Any:
    """A factory of the case's data-mode surrogate of ``model`` (PARAMETERS)."""
    from lca.models import Surrogate, ThresholdEncoder

    params = dict(PARAMETERS)
    cuts = params.pop("cuts")
    return lambda: Surrogate(model, distribution="data", encoder=ThresholdEncoder(cuts=cuts),
                             **kwargs, **params)


def compute(rows: list[list]) -> dict:
    """Everything the file freezes, computed by the library from ``rows``."""
    return {
        "description": "Known answers of lca.models.Surrogate(distribution='data') "
                       "(docs/randomness.md section 10); model: scripts/make_rows_answers.py "
                       "model().",
        "columns": COLUMNS, "parameters": PARAMETERS,
        **_frozen(rows, _surrogate(model, positive=1), int),
    }


def compute_multiclass(rows: list[list]) -> dict:
    """Everything the multi-class file freezes, computed by the library from ``rows``."""
    return {
        "description": "Known answers of a multi-class lca.models.Surrogate(distribution="
                       "'data') (docs/randomness.md section 10, multi-class trees); model: "
                       "scripts/make_rows_answers.py ThreeClasses.",
        "columns": COLUMNS, "parameters": PARAMETERS,
        "classes": ThreeClasses.classes_.tolist(),
        **_frozen(rows, _surrogate(ThreeClasses()), lambda prediction: prediction),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--multiclass", action="store_true",
                        help="write tests/data/rows_multiclass_answers.json instead")
    if parser.parse_args().multiclass:
        OUT_MULTICLASS.write_text(json.dumps(compute_multiclass(make_rows()), indent=1) + "\n")
        print(f"wrote {OUT_MULTICLASS}")
        return
    OUT.write_text(json.dumps(compute(make_rows()), indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

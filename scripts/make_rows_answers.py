"""Write tests/data/rows_answers.json: known answers of data-mode Surrogates.

Run it only to make a deliberate compatibility break of docs/randomness.md
§10 (data-mode nodes):

    python scripts/make_rows_answers.py

The file holds synthetic rows (drawn once from ``numpy.random.default_rng(SEED)``
and stored, so a change in numpy's generators cannot move them: a float, an
integer, a string and a bool column), their digest, and cases: a yes/no tree
of :func:`model` (``positive=1``) and a multi-class tree of
:class:`ThreeClasses`, each under two sets of parameters (one where the first
``shared_rows`` rows decide the top of the tree, one of small nodes where
neighbouring cuts tie and drawn rows fill most nodes). Each case stores the
parameters, a handful of rows with the surrogate's answer and path, every
decision of the whole tree with each leaf's fitted rows, the queries spent,
and the tree's text. ``tests/test_rows_answers.py`` recomputes :func:`compute`
on the stored rows and compares exactly; ``tests/rows_reference.py`` (written
from §10 alone) decides every stored node.
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
SEED = 20261128
COLUMNS = ["a", "b", "colour", "flag"]
CATEGORICAL = [2]  # the string column; the bool column is ordered (0 and 1)
PARAMETERS = {
    "shared": {"depth": 5, "seed": 3, "rows_per_node": 32, "shared_rows": 64, "min_rows": 4,
               "cuts": 16},
    "small nodes": {"depth": 6, "seed": 4, "rows_per_node": 8, "shared_rows": 0,
                    "min_rows": 2, "cuts": 64},
}
EXPLAINED = 8  # rows whose answer and path are stored


def model(frame: pd.DataFrame) -> np.ndarray:
    """The yes/no case's model: 0/1 labels of a fixed rule over the four columns."""
    a, b = frame["a"].to_numpy(float), frame["b"].to_numpy(float)
    red = (frame["colour"] == "red").to_numpy()
    flag = frame["flag"].to_numpy(float) > 0.5
    return ((((a + 0.3 * b > 1.0) & ~red) | (red & (a < 0.5))) ^ (flag & (b >= 6))).astype(int)


def model_row(row: list) -> int:
    """:func:`model` of one row ``[a, b, colour, flag]`` as ``+1`` / ``-1`` (for the reference)."""
    a, b, colour, flag = float(row[0]), float(row[1]), row[2], float(row[3]) > 0.5
    red = colour == "red"
    yes = ((a + 0.3 * b > 1.0) and not red) or (red and a < 0.5)
    return 1 if yes != (flag and b >= 6) else -1


class ThreeClasses:
    """The multi-class case's model: three classes of a fixed rule. ``classes_`` is not in
    sorted order, so that ties (to the lowest index) follow ``classes_``, not the labels."""

    classes_ = np.array(["low", "mid", "high"])

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        a, b = frame["a"].to_numpy(float), frame["b"].to_numpy(float)
        red = (frame["colour"] == "red").to_numpy()
        flag = frame["flag"].to_numpy(float) > 0.5
        score = a + 0.3 * b + 0.4 * flag
        out = np.where(score > 1.5, "high", np.where(score > 0.5, "mid", "low"))
        return np.where(red & (a < 0.5), "high", out)


def class_row(row: list) -> int:
    """:class:`ThreeClasses` of one row ``[a, b, colour, flag]``, as its index in ``classes_``."""
    a, b, colour, flag = float(row[0]), float(row[1]), row[2], float(row[3]) > 0.5
    if colour == "red" and a < 0.5:
        return 2
    score = a + 0.3 * b + 0.4 * flag
    return 2 if score > 1.5 else 1 if score > 0.5 else 0


def make_rows() -> list[list]:
    rng = np.random.default_rng(SEED)
    rows = 240
    a = rng.normal(0.5, 1.0, rows).round(2)
    b = rng.integers(0, 8, rows)
    colour = rng.choice(["blue", "green", "red"], rows, p=[0.4, 0.35, 0.25])
    flag = rng.random(rows) < 0.3
    return [[float(x), int(y), str(z), bool(w)]
            for x, y, z, w in zip(a, b, colour, flag, strict=True)]


def frame_of(rows: list[list]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


def _case(rows: list[list], name: str, kind: str) -> dict:
    """One case: the data-mode surrogates of the case's model fitted on ``rows`` (a fresh one
    for the explained rows, another for the whole tree)."""
    from lca.models import Surrogate, ThresholdEncoder

    parameters = dict(PARAMETERS[name])
    cuts = parameters.pop("cuts")
    mapping = {"positive": 1} if kind == "yes/no" else {}
    fitted = model if kind == "yes/no" else ThreeClasses()

    def surrogate() -> Any:
        return Surrogate(fitted, distribution="data", encoder=ThresholdEncoder(cuts=cuts),
                         **mapping, **parameters).fit(frame_of(rows))

    explained = surrogate()
    answers = []
    for i in range(EXPLAINED):
        rules = explained.explain(frame_of(rows).iloc[[i]])
        answers.append({"row": rows[i], "answer": rules.prediction if kind != "yes/no"
                        else int(rules.prediction),
                        "path": [list(step) for step in rules.path]})
    whole = surrogate()
    tree = whole.tree()
    decisions = [{"path": [list(step) for step in path], "kind": type(node).__name__,
                  "decision": dataclasses.asdict(node),
                  "rows": None if path not in tree.leaves else
                  dataclasses.asdict(whole.tree_.leaf_rows(path))}
                 for path, node in tree.walk()]
    return {"name": f"{kind}, {name}", "kind": kind, "parameters": PARAMETERS[name],
            **({"classes": ThreeClasses.classes_.tolist()} if kind == "classes" else {}),
            "answers": answers, "queries_for_answers": explained.queries_,
            "queries_whole_tree": whole.queries_, "decisions": decisions,
            "text": tree.to_text()}


def compute(rows: list[list]) -> dict:
    """Everything the file freezes, computed by the library from ``rows``."""
    from lca.models import ThresholdEncoder

    digest = ThresholdEncoder().fit(frame_of(rows)).rows_digest_
    return {
        "description": "Known answers of lca.models.Surrogate(distribution='data') "
                       "(docs/randomness.md section 10). Labels: the yes/no cases map "
                       "scripts/make_rows_answers.py model()'s 0/1 to -1/+1 (positive=1, +1 "
                       "where it answers 1); the multi-class cases label a row with the index "
                       "of ThreeClasses().predict's class in 'classes'.",
        "columns": COLUMNS, "categorical": CATEGORICAL, "rows": rows, "rows_digest": digest,
        "cases": [_case(rows, name, kind) for kind in ("yes/no", "classes")
                  for name in PARAMETERS],
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    OUT.write_text(json.dumps(compute(make_rows()), indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

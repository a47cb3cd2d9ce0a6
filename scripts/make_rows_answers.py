"""Write tests/data/rows_answers.json: known answers of data-mode Surrogates.

Run it only to make a deliberate compatibility break of docs/randomness.md
§10 (data-mode nodes):

    python scripts/make_rows_answers.py

The file holds data sets and cases. The main data set is synthetic rows
(drawn once from ``numpy.random.default_rng(SEED)`` and stored, so a change in
numpy's generators cannot move them: a float, an integer, a string and a bool
column); the others are a few rows made by hand to reach one rule each (values
so far apart that a midpoint overflows, ties of every kind, a cut equal to a
fitted value, ``-0.0``, categorical numbers, non-ASCII text, missing values stored
as ``null``). Each case is one
model on one data set under one set of parameters: a yes/no tree (the model's
class 1 is ``+1``, ``positive=1``) or a multi-class tree (:data:`CLASSES`, in
an unsorted order so that ties follow ``classes_``). It stores a handful of
rows with the surrogate's answer and path, every decision of the whole tree
with each leaf's fitted rows, the queries spent, and the tree's text.
``tests/test_rows_answers.py`` recomputes :func:`compute` and compares
exactly; ``tests/rows_reference.py`` (written from §10 alone) decides every
stored node, and ``tests/test_rows_mutants.py`` checks that these vectors
alone tell every one-rule mutant of it apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "rows_answers.json"
SEED = 20261128
CLASSES = ["low", "mid", "high"]  # a multi-class model's classes_, deliberately unsorted
EXPLAINED = 8  # rows of a data set whose answer and path are stored (all of a smaller one)
B = 1.0000000000000002  # the double after 1.0: mid(1.0, B) is not above 1.0, so the cut is B


def model_row(row: list) -> int:
    """The main yes/no model of one row ``[a, b, colour, flag]``: class 1 or 0."""
    a, b, colour, flag = float(row[0]), float(row[1]), row[2], float(row[3]) > 0.5
    red = colour == "red"
    yes = ((a + 0.3 * b > 1.0) and not red) or (red and a < 0.5)
    return int(yes != (flag and b >= 6))


def class_row(row: list) -> int:
    """The main multi-class model of one row ``[a, b, colour, flag]``: its class index."""
    a, b, colour, flag = float(row[0]), float(row[1]), row[2], float(row[3]) > 0.5
    if colour == "red" and a < 0.5:
        return 2
    score = a + 0.3 * b + 0.4 * flag
    return 2 if score > 1.5 else 1 if score > 0.5 else 0


def xor(row: list) -> int:
    """Every candidate splits both classes evenly: no positive gain, a 2-2 tie."""
    return int((row[0] >= 0.5) != (row[1] >= 0.5))


def mirror(row: list) -> int:
    """Two cuts whose gains tie at the same distance from the gap's middle in the reals."""
    return int(row[0] >= 1.0 or row[1] >= 0.5)


def sign(row: list) -> int:
    return int(row[0] >= 0)


def corner(row: list) -> int:
    return int(row[0] >= 0.5 and row[1] < 0.5)


def edge_yes_no(row: list) -> int:
    x, y, k, name, _ = row
    return int(((y >= B) != (k == 10)) != (x >= 0.22 and name == "\u00e9"))


def edge_classes(row: list) -> int:
    x, y, k, _, flag = row
    return (int(y >= B) + int(x >= 0.22) + int(k == 10 and flag)) % 3


def number(cell: Any) -> float:
    """A cell of an ordered column as a double: a missing one (``None`` as stored, NaN in a
    frame) as NaN."""
    return float("nan") if cell is None else float(cell)


def gap(row: list) -> int:
    """A missing ``x`` reads ``y``; a present one is compared."""
    x, y = number(row[0]), number(row[1])
    return int(y >= 1.0) if x != x else int(x >= 0.6)


def gap_classes(row: list) -> int:
    x, y = number(row[0]), number(row[1])
    return (2 if y >= 2.0 else 0) if x != x else int(x >= 0.6)


def missing_rules(row: list) -> int:
    """Rows on which "is missing" ties with a cut, and a node whose rows below a cut are all
    missing."""
    x, y = number(row[0]), number(row[1])
    if x != x:
        return int(y < 0.5)
    return int(x == 0 or (x == 3 and y < 0.5))


def make_rows() -> list[list]:
    rng = np.random.default_rng(SEED)
    rows = 240
    a = rng.normal(0.5, 1.0, rows).round(2)
    b = rng.integers(0, 8, rows)
    colour = rng.choice(["blue", "green", "red"], rows, p=[0.4, 0.35, 0.25])
    flag = rng.random(rows) < 0.3
    return [[float(x), int(y), str(z), bool(w)]
            for x, y, z, w in zip(a, b, colour, flag, strict=True)]


# name -> (columns, categorical columns, rows)
DATASETS: dict[str, tuple[list[str], list[int], list[list]]] = {
    "stored": (["a", "b", "colour", "flag"], [2], make_rows()),
    # a column whose two values are so far apart that b - a overflows
    "huge": (["x"], [], [[-1.5e308], [1.5e308]]),
    # a first model call of 3 fitted rows and 5 drawn ones
    "three rows": (["x", "y"], [], [[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]),
    "xor": (["x", "y"], [], [[0.0, False], [0.0, True], [1.0, False], [1.0, True]]),
    "mirror": (["x", "y", "z"], [], [[-0.82, 0.0, False], [-0.82, 0.0, False],
                                     [1.26, 0.0, False], [1.26, 0.0, False],
                                     [0.22, 0.0, True], [0.22, 1.0, True]]),
    # -0.0; a cut equal to a fitted value (B); categorical numbers and a bool (k); a
    # non-ASCII category
    "edge values": (["x", "y", "k", "name", "flag"], [2, 3], [
        [-0.82, B, 10, "\u00e9", True], [-0.0, 0.5, True, "z", True], [0.22, B, 1.5, "z", True],
        [-1.5, 1.0, 1.5, "\u00e9", False], [0.5, 0.0, 1.5, "e", False],
        [0.5, 1.0, 2, "e", True], [-0.82, 0.5, 10, "z", False],
        [-0.82, 0.0, 1.5, "e", False], [-1.5, 0.0, True, "e", False],
        [0.22, 0.0, 10, "e", True], [-0.82, 1.0, 10, "e", False],
        [0.22, 0.5, 2, "\u00e9", True]]),
    # missing values (None): some of x (more distinct present values than cuts), all of gone
    "missing": (["x", "y", "gone"], [], [
        [0.1, 0.0, None], [None, 1.0, None], [0.7, 2.0, None], [1.2, 0.0, None],
        [None, 1.0, None], [-0.3, 2.0, None], [0.7, 0.0, None], [None, 2.0, None],
        [2.0, 2.0, None], [0.4, 0.0, None], [None, 0.0, None], [1.5, 1.0, None],
        [0.9, 1.0, None], [None, 2.0, None]]),
    "missing rules": (["x", "y"], [], [
        [None, 0.0], [None, 1.0], [3.0, 0.0], [2.0, 0.0], [0.0, 1.0], [3.0, 1.0], [3.0, 1.0],
        [None, 1.0]]),
}

# name -> (data set, {kind: row model}, parameters); every case is grown as a yes/no tree
# and as a multi-class one.
CASES: dict[str, tuple[str, dict[str, Callable[[list], int]], dict[str, int]]] = {
    # the first shared_rows rows decide the top of the tree
    "shared": ("stored", {"yes/no": model_row, "classes": class_row}, {
        "depth": 5, "seed": 3, "rows_per_node": 32, "shared_rows": 64, "min_rows": 4,
        "cuts": 16}),
    # small nodes: neighbouring cuts tie, drawn rows fill most nodes
    "small nodes": ("stored", {"yes/no": model_row, "classes": class_row}, {
        "depth": 6, "seed": 4, "rows_per_node": 8, "shared_rows": 0, "min_rows": 2,
        "cuts": 64}),
    # rows_per_node < min_rows; cuts = 7 = D - 1 for column b; leaves of more than R rows
    "small R": ("stored", {"yes/no": model_row, "classes": class_row}, {
        "depth": 5, "seed": 12, "rows_per_node": 4, "shared_rows": 16, "min_rows": 8,
        "cuts": 7}),
    # a leaf with r = min_rows; a run next to drawn rows
    "shared 64 of 16": ("stored", {"yes/no": model_row, "classes": class_row}, {
        "depth": 6, "seed": 8, "rows_per_node": 16, "shared_rows": 64, "min_rows": 3,
        "cuts": 16}),
    # runs whose cuts hold points between them yet tie (the same A / B, other A and B)
    "cuts 7": ("stored", {"yes/no": model_row, "classes": class_row}, {
        "depth": 6, "seed": 40, "rows_per_node": 16, "shared_rows": 0, "min_rows": 2,
        "cuts": 7}),
    # a first model call of fewer than 4 rows
    "R = 2": ("stored", {"yes/no": model_row, "classes": class_row}, {
        "depth": 3, "seed": 5, "rows_per_node": 2, "shared_rows": 0, "min_rows": 1,
        "cuts": 16}),
    "huge": ("huge", {"yes/no": sign, "classes": sign}, {
        "depth": 1, "seed": 1, "rows_per_node": 2, "shared_rows": 0, "min_rows": 1,
        "cuts": 64}),
    "three rows": ("three rows", {"yes/no": corner, "classes": corner}, {
        "depth": 2, "seed": 1, "rows_per_node": 8, "shared_rows": 0, "min_rows": 1,
        "cuts": 64}),
    "xor": ("xor", {"yes/no": xor, "classes": xor}, {
        "depth": 2, "seed": 1, "rows_per_node": 4, "shared_rows": 0, "min_rows": 1,
        "cuts": 64}),
    "mirror": ("mirror", {"yes/no": mirror, "classes": mirror}, {
        "depth": 1, "seed": 1, "rows_per_node": 6, "shared_rows": 0, "min_rows": 1,
        "cuts": 64}),
    "edge values": ("edge values", {"yes/no": edge_yes_no, "classes": edge_classes}, {
        "depth": 4, "seed": 62, "rows_per_node": 3, "shared_rows": 4, "min_rows": 3,
        "cuts": 64}),
    # cuts from the present values; "is missing" split on; drawn rows missing or not
    "missing": ("missing", {"yes/no": gap, "classes": gap_classes}, {
        "depth": 3, "seed": 7, "rows_per_node": 32, "shared_rows": 0, "min_rows": 2,
        "cuts": 3}),
    # a missing-only side leaves "is missing"; "is missing" ties with a cut yet ends its run
    "missing rules": ("missing rules", {"yes/no": missing_rules, "classes": missing_rules}, {
        "depth": 3, "seed": 1, "rows_per_node": 2, "shared_rows": 8, "min_rows": 1,
        "cuts": 64}),
    # drawn rows below a cut whose fitted rows below it are all missing
    "missing rules, drawn": ("missing rules", {"yes/no": missing_rules, "classes": missing_rules},
                             {"depth": 3, "seed": 1, "rows_per_node": 8, "shared_rows": 0,
                              "min_rows": 1, "cuts": 64}),
    # a leaf allowing missing values: its drawn rows' labels show where missing values go
    "missing leaf": ("missing", {"yes/no": gap, "classes": gap_classes}, {
        "depth": 1, "seed": 7, "rows_per_node": 32, "shared_rows": 0, "min_rows": 2,
        "cuts": 3}),
}


class RowModel:
    """A model over a data set's frame from a row model: ``classes_`` ``[0, 1]`` for a
    yes/no tree (``positive=1``), :data:`CLASSES` for a multi-class one."""

    def __init__(self, row: Callable[[list], int], classes: list[Any]) -> None:
        self.row, self.classes_ = row, np.array(classes)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.classes_[[self.row(list(values)) for values in
                              frame.itertuples(index=False)]]


def frame_of(name: str) -> pd.DataFrame:
    columns, _, rows = DATASETS[name]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({column: object for j, column in enumerate(columns)
                         if j in DATASETS[name][1]})


def _case(name: str, kind: str) -> dict:
    """One case: the data-mode surrogates of its model fitted on its data set (a fresh one
    for the explained rows, another for the whole tree)."""
    from lca.models import Surrogate, ThresholdEncoder

    dataset, models, parameters = CASES[name]
    columns, categorical, rows = DATASETS[dataset]
    parameters = dict(parameters)
    cuts = parameters.pop("cuts")
    yes_no = kind == "yes/no"
    model = RowModel(models[kind], [0, 1] if yes_no else CLASSES)

    def surrogate() -> Any:
        return Surrogate(model, **({"positive": 1} if yes_no else {}),
                         encoder=ThresholdEncoder(cuts=cuts, categorical=categorical),
                         **parameters).fit(frame_of(dataset))

    explained = surrogate()
    answers = []
    for i in range(min(EXPLAINED, len(rows))):
        rules = explained.explain(frame_of(dataset).iloc[[i]])
        answers.append({"row": rows[i], "answer": int(rules.prediction) if yes_no
                        else rules.prediction, "path": [list(step) for step in rules.path]})
    whole = surrogate()
    tree = whole.tree()
    decisions = [{"path": [list(step) for step in path], "kind": type(node).__name__,
                  "decision": dataclasses.asdict(node),
                  "rows": None if path not in tree.leaves else
                  dataclasses.asdict(whole.tree_.leaf_rows(path))}
                 for path, node in tree.walk()]
    return {"name": f"{kind}, {name}", "dataset": dataset, "kind": kind,
            "model": models[kind].__name__, "parameters": CASES[name][2],
            **({} if yes_no else {"classes": CLASSES}),
            "answers": answers, "queries_for_answers": explained.queries_,
            "queries_whole_tree": whole.queries_, "decisions": decisions,
            "text": tree.to_text()}


def compute() -> dict:
    """Everything the file freezes, computed by the library."""
    from lca.models import ThresholdEncoder

    return {
        "description": "Known answers of lca.models.Surrogate(distribution='data') "
                       "(docs/randomness.md section 10). A case's model is the row function "
                       "of scripts/make_rows_answers.py it names: a yes/no case labels a row "
                       "+1 where it returns 1 and -1 where it returns 0 (positive=1); a "
                       "multi-class case labels it with the index it returns into 'classes'.",
        "datasets": {name: {"columns": columns, "categorical": categorical, "rows": rows,
                            "rows_digest": ThresholdEncoder(categorical=categorical).fit(
                                frame_of(name)).rows_digest_}
                     for name, (columns, categorical, rows) in DATASETS.items()},
        "cases": [_case(name, kind) for kind in ("yes/no", "classes") for name in CASES],
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    OUT.write_text(json.dumps(compute(), indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

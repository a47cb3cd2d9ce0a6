"""Rows and a model for the data-mode surrogate tests (a module, so spawned processes import it),
and the known answers' generating script."""

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def rows_script() -> ModuleType:
    """scripts/make_rows_answers.py as a module: the known answers' model, rows and compute."""
    spec = importlib.util.spec_from_file_location(
        "make_rows_answers", ROOT / "scripts" / "make_rows_answers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    """Two real columns, a small integer column and a string column."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "x": rng.normal(0, 1, rows).round(3),
        "y": rng.uniform(-2, 2, rows).round(3),
        "k": rng.integers(0, 6, rows),
        "colour": rng.choice(["blue", "green", "red"], rows, p=[0.5, 0.3, 0.2]),
    })


def rule(frame: pd.DataFrame) -> np.ndarray:
    """0/1 labels: a fixed rule that uses every column."""
    x, y, k = (frame[c].to_numpy(float) for c in ("x", "y", "k"))
    red = (frame["colour"] == "red").to_numpy()
    return (((x + 0.5 * y > 0.3) & ~red) | (red & (k >= 3))).astype(int)


def fitted_json(rows: int, seed: int) -> str:
    """The saved data-mode surrogate of :func:`table` (run in a spawned process too)."""
    from lca.models import Surrogate

    surrogate = Surrogate(rule, positive=1, distribution="data", depth=6, seed=seed)
    return surrogate.fit(table(rows)).to_json()


def check_stored_nodes(stored: dict, decide, leaf_kind: str) -> None:
    """A reference ``decide(path)`` gives every node stored in a known-answer file; its
    leaves are of kind ``leaf_kind`` (``"leaf"``, or ``"class"`` for a multi-class tree)."""
    assert len(stored["decisions"]) > 10
    for entry in stored["decisions"]:
        path = tuple(tuple(step) for step in entry["path"])
        mine = decide(path)
        decision = entry["decision"]
        if entry["kind"] == "NodeDecision":
            assert mine == {"kind": "node", "variable": decision["variable"],
                            "samples": decision["samples"]}, path
        else:
            assert mine == {"kind": leaf_kind, "label": decision["label"],
                            "samples": decision["samples"], "total": decision["total"],
                            "rows": entry["rows"]["rows"], "agree": entry["rows"]["agree"]}, path


def reference_path(decide, value, row: list, leaf_kind: str) -> tuple[list, dict]:
    """The path of ``row`` through a reference ``decide`` (``value(row, variable)`` its answer
    to a question), as stored (lists), and the leaf it ends at."""
    path: tuple = ()
    while True:
        decision = decide(path)
        if decision["kind"] == leaf_kind:
            return [list(step) for step in path], decision
        variable = decision["variable"]
        path += ((variable, value(row, variable)),)

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

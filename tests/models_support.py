"""A small loans table with string categories, shared by the surrogate tests."""

import numpy as np
import pandas as pd


def loans(rows: int = 400, *, categorical: bool = False):
    """Real columns, a string column and ``region`` (a pandas categorical with an unused
    level when ``categorical``); a fixed rule labels the rows "repaid" or "default"."""
    rng = np.random.default_rng(0)
    income = rng.normal(50, 15, rows).round(1)
    size_class = rng.choice(["small", "medium", "large"], rows, p=[0.4, 0.35, 0.25])
    region = rng.choice(["north", "south", "east"], rows)
    frame = pd.DataFrame({
        "income": income,
        "size_class": size_class,
        "region": pd.Categorical(region, categories=["east", "north", "south", "west"])
        if categorical else region,
        "age": rng.integers(18, 70, rows),
    })
    y = np.where((frame.income > 45) | (frame.size_class == "large"), "repaid", "default")
    return frame, y

"""Why data mode trails its equal-query peer on product points: which points, or the learner?

For every pair of ``scripts/bench_surrogates.py`` (depth 5), it grows the
data-mode surrogate while recording every row the model is asked about (the
fitted rows and the drawn top-up rows, with the model's labels), then trains
a scikit-learn ``DecisionTreeClassifier`` of the same depth on exactly those
rows. Three trees are compared on the held-out rows and on the product
distribution (the benchmark's 4,000 derived product points):

* *lca data*: the surrogate itself, each node deciding on its first
  ``rows_per_node`` (128) points;
* *sklearn on lca's points*: the same labelled points, every split chosen on
  all of them (a learner that sees every point below it);
* *equal-query peer*: the benchmark's careful peer, the training rows plus
  product points up to lca's number of queries.

If the second tree is level with lca data, the gap to the peer is in which
points were asked (the data distribution, topped up only where a region runs
short of rows); if it is level with the peer, the gap is in the learner.
Prints a markdown table and the medians (docs/surrogates.md)::

    flock /tmp/lca-bench.lock python scripts/diagnose_surrogate_gap.py   # about a minute
"""

from __future__ import annotations

import statistics
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_surrogates as bench  # noqa: E402

import lca  # noqa: E402
from lca.models import Surrogate, UnseenValueWarning  # noqa: E402
from lca.models.oracle import ModelOracle  # noqa: E402

DEPTH = 5
FIDELITY_SAMPLES = 4000  # as the benchmark's default


def recorded_surrogate(pair: bench.Pair) -> tuple[Surrogate, pd.DataFrame, np.ndarray]:
    """The data-mode surrogate's tree, and every row its model was asked with its label."""
    asked: list[tuple[list[np.ndarray], np.ndarray]] = []
    original = ModelOracle.label_columns

    def recording(self: ModelOracle, columns: list[np.ndarray]) -> np.ndarray:
        labels = original(self, columns)
        asked.append(([np.asarray(column) for column in columns], labels))
        return labels

    ModelOracle.label_columns = recording  # type: ignore[method-assign]
    try:
        surrogate = Surrogate(pair.model, positive=pair.positive, threshold=pair.threshold,
                              depth=DEPTH, distribution="data").fit(pair.X)
        surrogate.tree()
    finally:
        ModelOracle.label_columns = original  # type: ignore[method-assign]
    frame = pd.DataFrame({name: np.concatenate([columns[j] for columns, _ in asked])
                          for j, name in enumerate(pair.X.columns)})
    frame = frame.astype({c: pair.X[c].dtype for c in pair.X.columns
                          if pair.X[c].dtype != object})
    labels = np.concatenate([found for _, found in asked])
    if labels.size != surrogate.queries_:
        raise SystemExit(f"{pair.name}: recorded {labels.size} rows, the surrogate reports "
                         f"{surrogate.queries_} queries")
    return surrogate, frame, labels > 0


@dataclass
class Points:
    """The points every tree of one pair is measured on, with the model's side of each."""

    oracle: Any
    encoder: Any
    side: Callable[[pd.DataFrame], np.ndarray]
    on_held: np.ndarray
    held_coded: np.ndarray
    product: np.ndarray          # the benchmark's derived product points (bits)
    on_product: np.ndarray
    product_frame: pd.DataFrame
    product_coded: np.ndarray

    def of_tree(self, fitted: DecisionTreeClassifier) -> tuple[float, float]:
        """A tree on feature values: fidelity on the held-out rows and the product points."""
        return (float(np.mean(fitted.predict(self.held_coded) == self.on_held)),
                float(np.mean(fitted.predict(self.product_coded) == self.on_product)))

    def of_surrogate(self, surrogate: Surrogate, held_out: pd.DataFrame) -> tuple[float, float]:
        """A (one-question) surrogate, as the benchmark measures lca data."""
        positive = surrogate.classes_[1]
        return (float(np.mean((surrogate.predict(held_out) == positive) == self.on_held)),
                float(np.mean((surrogate.predict(self.product_frame) == positive)
                              == self.on_product)))


def points_of(pair: bench.Pair) -> Points:
    """The benchmark's product-mode encoder codes categories for the trees on feature
    values and draws the product points (the same seeds as the benchmark)."""
    product_mode = Surrogate(pair.model, positive=pair.positive, threshold=pair.threshold,
                             depth=DEPTH, distribution="product").fit(pair.X)
    oracle, encoder = product_mode.oracle_, product_mode.encoder_
    side = lambda frame: oracle.label_rows(frame) > 0  # noqa: E731
    product = bench.fidelity_points(oracle.n, FIDELITY_SAMPLES)
    product_frame = encoder.decode(product)
    return Points(oracle, encoder, side, side(pair.held_out),
                  bench.coded(encoder, pair.held_out), product, oracle.query(product) > 0,
                  product_frame, bench.coded(encoder, product_frame))


def peer(points: Points, train_rows: np.ndarray, train_labels: np.ndarray,
         queries: int) -> tuple[DecisionTreeClassifier, int]:
    """The equal-query peer, as the benchmark builds it, and the queries it spent."""
    features, labels = bench.augmented(points.encoder, points.oracle, train_rows, train_labels,
                                       queries)
    return DecisionTreeClassifier(max_depth=DEPTH, random_state=0).fit(features, labels), \
        labels.size


def measure(pair: bench.Pair) -> dict[str, Any]:
    surrogate, asked, labels = recorded_surrogate(pair)
    points = points_of(pair)
    same = DecisionTreeClassifier(max_depth=DEPTH, random_state=0).fit(
        bench.coded(points.encoder, asked), labels)
    careful, _ = peer(points, bench.coded(points.encoder, pair.X), points.side(pair.X),
                      surrogate.queries_)
    return {"pair": pair.name, "queries": surrogate.queries_, "rows": len(pair.X),
            "lca": points.of_surrogate(surrogate, pair.held_out),
            "same": points.of_tree(same), "peer": points.of_tree(careful)}


def several_classes(pair: bench.Pair) -> bool:
    """A multi-class classifier (the benchmark adds its one tree over all classes)."""
    return pair.threshold is None and getattr(pair.model, "classes_", np.zeros(0)).size > 2


def gap_report(results: list[dict[str, Any]]) -> None:
    print(f"Depth {DEPTH}; fidelity on the held-out rows / on {FIDELITY_SAMPLES:,} derived "
          "product points.\n")
    print("| pair | model queries (training rows) | lca data | sklearn on lca's points | "
          "equal-query peer |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        cells = [f"{held:.3f} / {product:.3f}" for held, product in
                 (r["lca"], r["same"], r["peer"])]
        print(f"| {r['pair']} | {r['queries']:,} ({r['rows']:,}) | " + " | ".join(cells) + " |")
    gap = [r["peer"][1] - r["lca"][1] for r in results]
    learner = [r["same"][1] - r["lca"][1] for r in results]
    print(f"\nOn the product distribution the peer leads lca data by a median "
          f"{statistics.median(gap):+.3f}; a tree fitted on lca's own points leads it by "
          f"{statistics.median(learner):+.3f} (the share of the gap the learner explains: "
          f"{statistics.median(learner) / statistics.median(gap):.2f} of the medians).")


def main() -> int:
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        warnings.simplefilter("ignore", UnseenValueWarning)
        for pair in bench.pairs():
            if several_classes(pair) and pair.positive is None:
                continue  # one-vs-rest pairs only: the benchmark's binary trees
            print(f"... {pair.name}", file=sys.stderr)
            results.append(measure(pair))
    gap_report(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

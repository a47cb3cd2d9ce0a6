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


def measure(pair: bench.Pair) -> dict[str, Any]:
    surrogate, asked, labels = recorded_surrogate(pair)
    # The benchmark's product-mode encoder codes categories for the trees on feature
    # values and draws the product points (the same seeds as the benchmark).
    product_mode = Surrogate(pair.model, positive=pair.positive, threshold=pair.threshold,
                             depth=DEPTH, distribution="product").fit(pair.X)
    oracle, encoder = product_mode.oracle_, product_mode.encoder_
    side = lambda frame: oracle.label_rows(frame) > 0  # noqa: E731
    on_held = side(pair.held_out)
    product = bench.fidelity_points(oracle.n, FIDELITY_SAMPLES)
    on_product = oracle.query(product) > 0
    product_frame = encoder.decode(product)
    held_coded, product_coded = bench.coded(encoder, pair.held_out), \
        bench.coded(encoder, product_frame)

    def fidelity_of(fitted: DecisionTreeClassifier) -> tuple[float, float]:
        return (float(np.mean(fitted.predict(held_coded) == on_held)),
                float(np.mean(fitted.predict(product_coded) == on_product)))

    positive = surrogate.classes_[1]
    lca_data = (float(np.mean((surrogate.predict(pair.held_out) == positive) == on_held)),
                float(np.mean((surrogate.predict(product_frame) == positive) == on_product)))
    same = DecisionTreeClassifier(max_depth=DEPTH, random_state=0).fit(
        bench.coded(encoder, asked), labels)
    # The equal-query peer, as the benchmark builds it.
    peer = DecisionTreeClassifier(max_depth=DEPTH, random_state=0).fit(*bench.augmented(
        encoder, oracle, bench.coded(encoder, pair.X), side(pair.X), surrogate.queries_))
    return {"pair": pair.name, "queries": surrogate.queries_, "rows": len(pair.X),
            "lca": lca_data, "same": fidelity_of(same), "peer": fidelity_of(peer)}


def main() -> int:
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        warnings.simplefilter("ignore", UnseenValueWarning)
        for pair in bench.pairs():
            if pair.threshold is None and getattr(pair.model, "classes_", np.zeros(0)).size > 2 \
                    and pair.positive is None:
                continue  # one-vs-rest pairs only: the benchmark's binary trees
            print(f"... {pair.name}", file=sys.stderr)
            results.append(measure(pair))
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Why data mode trails its equal-query peer on product points: which points, or the learner?

For every one-question pair of ``scripts/bench_surrogates.py`` (depth 5), it grows the
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
Prints a markdown table and the medians (docs/surrogates.md).

The second part (``--part rows``) asks whether ``rows_per_node`` moves the
gap: for every pair it grows data mode at ``rows_per_node`` in
``{64, 128, 256, 512}`` and measures each tree on the same points, beside
its equal-query peer (the benchmark's careful peer at that tree's queries)
and the tree on the rows alone (once per pair); on the multi-class pairs
also the one tree over all classes (the benchmark's ``all_classes``) at the
same settings. Per setting it counts the pairs where lca data is at least as
faithful on held-out rows as the rows-only tree, within 0.005 of its peer on
held-out rows and within 0.01 on the product points::

    flock /tmp/lca-bench.lock python scripts/diagnose_surrogate_gap.py        # both
    flock /tmp/lca-bench.lock python scripts/diagnose_surrogate_gap.py --part gap
    flock /tmp/lca-bench.lock python scripts/diagnose_surrogate_gap.py --part rows

(seconds for the first part, about half a minute for the second, on the
shared 2-core machine).

The third part (``--part splits``, not in ``all``) asks how much of the
benchmark's wins and losses is the one split it measures: every pair of the
benchmark (multi-class ones too) at depths 3, 5 and 8, on ``--splits``
random splits of its data (split 0 is the benchmark's, each model trained
again on each split's training rows), lca data against the rows tree and the
equal-query tree on held-out rows. Per split it counts wins, ties and losses
(a tie within 0.005, as the benchmark); per pair and depth the mean
difference over the splits and its standard error, and how many are behind
by more than 0.005 on average, and by more than two standard errors::

    flock /tmp/lca-bench.lock python scripts/diagnose_surrogate_gap.py --part splits --splits 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_surrogates as bench  # noqa: E402

import lca  # noqa: E402
from lca import derive  # noqa: E402
from lca.models import Surrogate, UnseenValueWarning  # noqa: E402
from lca.models.oracle import ModelLabels  # noqa: E402

DEPTH = 5
FIDELITY_SAMPLES = 4000  # as the benchmark's default when it measured product points
ROWS_PER_NODE = (64, 128, 256, 512)  # the second part's settings (128: the default)


def fidelity_points(n: int, samples: int) -> np.ndarray:
    """The product points every tree's fidelity is measured on (a seed none trains on)."""
    return derive.sample_points(99, "bench-surrogates-fidelity", n, samples)


def agreement(surrogate: Surrogate, held_out: pd.DataFrame, on_held: np.ndarray,
              product_frame: pd.DataFrame, on_product: np.ndarray) -> tuple[float, float]:
    """A one-question surrogate's agreement with the model's positive side on the
    held-out rows and on the (decoded) product points."""
    positive = surrogate.classes_[1]
    return (float(np.mean((surrogate.predict(held_out) == positive) == on_held)),
            float(np.mean((surrogate.predict(product_frame) == positive) == on_product)))


def recorded_surrogate(pair: bench.Pair) -> tuple[Surrogate, pd.DataFrame, np.ndarray]:
    """The data-mode surrogate's tree, and every row its model was asked with its label."""
    asked: list[tuple[list[np.ndarray], np.ndarray]] = []
    original = ModelLabels.label_columns

    def recording(self: ModelLabels, columns: list[np.ndarray]) -> np.ndarray:
        labels = original(self, columns)
        asked.append(([np.asarray(column) for column in columns], labels))
        return labels

    ModelLabels.label_columns = recording  # type: ignore[method-assign]
    try:
        surrogate = Surrogate(pair.model, positive=pair.positive, threshold=pair.threshold,
                              depth=DEPTH, distribution="data").fit(pair.X)
        surrogate.tree()
    finally:
        ModelLabels.label_columns = original  # type: ignore[method-assign]
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
        return agreement(surrogate, held_out, self.on_held, self.product_frame,
                         self.on_product)


def points_of(pair: bench.Pair) -> Points:
    """The benchmark's product-mode encoder codes categories for the trees on feature
    values and draws the product points (the same seeds as the benchmark)."""
    product_mode = Surrogate(pair.model, positive=pair.positive, threshold=pair.threshold,
                             depth=DEPTH, distribution="product").fit(pair.X)
    oracle, encoder = product_mode.oracle_, product_mode.encoder_
    side = lambda frame: oracle.label_rows(frame) > 0  # noqa: E731
    product = fidelity_points(oracle.n, FIDELITY_SAMPLES)
    product_frame = encoder.decode(product)
    return Points(oracle, encoder, side, side(pair.held_out),
                  bench.coded(encoder, pair.held_out), product, oracle.query(product) > 0,
                  product_frame, bench.coded(encoder, product_frame))


def peer(points: Points, train_rows: np.ndarray, train_labels: np.ndarray,
         queries: int) -> tuple[DecisionTreeClassifier, int]:
    """The equal-query peer, as the benchmark builds it, and the queries it spent."""
    features, labels = bench.augmented(points.encoder, points.side, train_rows, train_labels,
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


def sweep(pair: bench.Pair, settings: Sequence[int] = ROWS_PER_NODE) -> dict[str, Any]:
    """Data mode at every ``rows_per_node`` of ``settings``, each beside its equal-query
    peer; the rows-only tree once; on a multi-class pair the one tree over all classes."""
    points = points_of(pair)
    train_rows, train_labels = bench.coded(points.encoder, pair.X), points.side(pair.X)
    alone = DecisionTreeClassifier(max_depth=DEPTH, random_state=0).fit(train_rows,
                                                                         train_labels)
    out: dict[str, Any] = {"pair": pair.name, "rows": len(pair.X),
                           "alone": points.of_tree(alone), "settings": {}}
    for rows_per_node in settings:
        surrogate = Surrogate(pair.model, positive=pair.positive, threshold=pair.threshold,
                              depth=DEPTH, distribution="data",
                              rows_per_node=rows_per_node).fit(pair.X)
        tree = surrogate.tree()
        careful, spent = peer(points, train_rows, train_labels, surrogate.queries_)
        setting = {"lca": points.of_surrogate(surrogate, pair.held_out),
                   "leaves": len(tree.leaves), "queries": surrogate.queries_,
                   "peer": points.of_tree(careful), "peer_queries": spent,
                   "peer_leaves": int(careful.get_n_leaves())}
        if several_classes(pair):
            every = all_classes(pair, DEPTH, points.encoder, points.product, train_rows,
                                points.held_coded, points.product_coded,
                                rows_per_node=rows_per_node)
            setting |= {"class_baseline": every["class_baseline"], "all": every["all"],
                        "all_peer": every["all_peer"]}
        out["settings"][rows_per_node] = setting
    return out


def all_classes(pair: bench.Pair, depth: int, encoder, product: np.ndarray,
                train_rows: np.ndarray, held_coded: np.ndarray,
                product_rows: np.ndarray, **params: Any) -> dict[str, Any]:
    """A multi-class pair: lca data's one tree over every class, and its equal-query peer
    (``params``: further Surrogate parameters)."""
    every = Surrogate(pair.model, depth=depth, distribution="data", **params).fit(pair.X)
    every_tree = every.tree()
    classes = every.classes_
    model = lambda frame: classes[every.oracle_.class_rows(frame)]  # noqa: E731
    on_held = model(pair.held_out)
    product_frame = encoder.decode(product)
    on_product = model(product_frame)
    out: dict[str, Any] = {"class_baseline": float(
        np.unique(on_held, return_counts=True)[1].max() / on_held.size)}
    out["all"] = dict(held=float(np.mean(every.predict(pair.held_out) == on_held)),
                      product=float(np.mean(every.predict(product_frame) == on_product)),
                      leaves=len(every_tree.leaves), queries=every.queries_)
    features, labels = bench.augmented(encoder, model, train_rows, model(pair.X),
                                       every.queries_)
    fitted = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(features, labels)
    out["all_peer"] = dict(held=float(np.mean(fitted.predict(held_coded) == on_held)),
                           product=float(np.mean(fitted.predict(product_rows) == on_product)),
                           leaves=int(fitted.get_n_leaves()), queries=labels.size)
    return out


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


def pair_cell(pair: str) -> str:
    return pair.split(" (")[0]


def both(figures: tuple[float, float]) -> str:
    return f"{figures[0]:.3f} / {figures[1]:.3f}"


def rows_report(results: list[dict[str, Any]]) -> str:
    """The sweep's tables: every pair and setting, the counts per setting, the multi-class
    trees."""
    settings = list(results[0]["settings"])
    lines = [f"Depth {DEPTH}; data mode at rows_per_node in "
             f"{{{', '.join(map(str, settings))}}}; fidelity on the held-out rows / on "
             f"{FIDELITY_SAMPLES:,} derived product points. The equal-query peer is the "
             "benchmark's (the training rows plus product points up to lca's queries); the "
             "rows-only tree is the same for every setting.", "",
             "| pair (training rows) | rows_per_node | model queries | leaves | lca data | "
             "equal-query peer | rows alone |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        for k, (rows_per_node, c) in enumerate(r["settings"].items()):
            head = (f"{pair_cell(r['pair'])} ({r['rows']:,})", both(r["alone"])) if k == 0 \
                else ("", "")
            lines.append(f"| {head[0]} | {rows_per_node} | {c['queries']:,} | {c['leaves']} | "
                         f"{both(c['lca'])} | {both(c['peer'])} | {head[1]} |")
    count = len(results)
    lines += ["", f"Per setting, over the {count} pairs (gap: the peer's fidelity minus lca "
                  "data's):", "",
              "| rows_per_node | lca data >= rows alone (held-out) | within 0.005 of the peer "
              "(held-out) | within 0.01 of the peer (product) | median gap, held-out | "
              "median gap, product | largest gap, product | median model queries |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for rows_per_node in settings:
        cells = [r["settings"][rows_per_node] for r in results]
        held = [c["peer"][0] - c["lca"][0] for c in cells]
        product = [c["peer"][1] - c["lca"][1] for c in cells]
        alone = sum(c["lca"][0] >= r["alone"][0] for c, r in zip(cells, results, strict=True))
        lines.append(f"| {rows_per_node} | {alone} of {count} | "
                     f"{sum(gap <= 0.005 for gap in held)} of {count} | "
                     f"{sum(gap <= 0.01 for gap in product)} of {count} | "
                     f"{statistics.median(held):+.3f} | {statistics.median(product):+.3f} | "
                     f"{max(product):+.3f} | "
                     f"{statistics.median(c['queries'] for c in cells):,.0f} |")
    several = [r for r in results if "all" in r["settings"][settings[0]]]
    if several:
        lines += ["", "One tree over all classes (no positive=; agreement on the model's "
                      "class), beside its equal-query peer:", "",
                  "| pair (most common class) | rows_per_node | model queries | leaves | "
                  "lca data, all classes | equal-query peer (leaves) |",
                  "|---|---:|---:|---:|---:|---:|"]
        for r in several:
            for k, (rows_per_node, c) in enumerate(r["settings"].items()):
                name = f"{pair_cell(r['pair'])} ({c['class_baseline']:.3f})" if k == 0 else ""
                mine, theirs = c["all"], c["all_peer"]
                lines.append(f"| {name} | {rows_per_node} | {mine['queries']:,} | "
                             f"{mine['leaves']} | {mine['held']:.3f} / {mine['product']:.3f} | "
                             f"{theirs['held']:.3f} / {theirs['product']:.3f} "
                             f"({theirs['leaves']}) |")
    return "\n".join(lines)


def held_out(pair: bench.Pair, depth: int) -> dict[str, float]:
    """Held-out fidelity of lca data, the rows tree and the equal-query tree."""
    truth = pair.answers(pair.held_out)
    encoder = bench.product_encoder(pair.X)
    held = bench.coded(encoder, pair.held_out)
    surrogate = bench.grown(pair, depth)
    trees = {"rows": bench.peer_tree(pair, encoder, depth, 0),
             "equal": bench.peer_tree(pair, encoder, depth, surrogate.queries_)}
    out = {key: float(np.mean(tree.predict(held) == truth)) for key, tree in trees.items()}
    out["lca"] = float(np.mean(bench.surrogate_answers(surrogate, pair, pair.held_out) == truth))
    return out


def splits(count: int, depths: Sequence[int] = bench.DEPTHS) -> list[dict[str, Any]]:
    """One record per split, pair and depth."""
    records = []
    for seed in range(count):
        for pair in bench.pairs(seed=seed):
            for depth in depths:
                print(f"... split {seed}: {pair.name}, depth {depth}", file=sys.stderr)
                records.append({"split": seed, "pair": pair.name, "depth": depth,
                                "multiclass": pair.multiclass, "held": len(pair.held_out),
                                **held_out(pair, depth)})
    return records


def splits_report(records: list[dict[str, Any]]) -> str:
    """Wins/ties/losses per split, and per pair and depth the mean difference over splits."""
    count = 1 + max(r["split"] for r in records)
    lines = [f"Held-out fidelity over {count} random splits (split 0 is the benchmark's; the "
             "model trained again on each), lca data against each tree at depths "
             f"{', '.join(map(str, sorted({r['depth'] for r in records})))}.", "",
             "| split | kind | pair-depths | rows tree W/T/L | equal-query tree W/T/L |",
             "|---:|---|---:|---|---|"]
    for seed in range(count):
        for multiclass in (False, True):
            chosen = [r for r in records if r["split"] == seed and r["multiclass"] == multiclass]
            tallies = ["/".join(str(sum(bench.outcome(r["lca"], r[peer]) == kind
                                        for r in chosen)) for kind in ("win", "tie", "loss"))
                       for peer in ("rows", "equal")]
            lines.append(f"| {seed} | {'multi-class' if multiclass else 'one question'} | "
                         f"{len(chosen)} | {tallies[0]} | {tallies[1]} |")
    lines += ["", "Per pair and depth, over the splits: the mean of lca data's fidelity less "
              "the tree's and its standard error.", "",
              "| peer | kind | pair-depths | mean difference (all) | behind by > 0.005 on "
              "average | behind by > 2 standard errors |", "|---|---|---:|---:|---:|---:|"]
    found: list[str] = []
    for peer, name in (("rows", "rows tree"), ("equal", "equal-query tree")):
        for multiclass in (False, True):
            cells: dict[tuple[str, int], list[float]] = {}
            for r in records:
                if r["multiclass"] == multiclass:
                    cells.setdefault((r["pair"], r["depth"]), []).append(r["lca"] - r[peer])
            means = {key: statistics.mean(d) for key, d in cells.items()}
            errors = {key: statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else 0.0
                      for key, d in cells.items()}
            overall = statistics.mean(d for diffs in cells.values() for d in diffs)
            behind = [k for k in means if means[k] + 2 * errors[k] < 0]
            lines.append(f"| {name} | {'multi-class' if multiclass else 'one question'} | "
                         f"{len(cells)} | {overall:+.4f} | "
                         f"{sum(m < -0.005 for m in means.values())} | {len(behind)} |")
            found += [f"* {name}: {pair_cell(pair)}, depth {depth}: {means[pair, depth]:+.3f} "
                      f"± {errors[pair, depth]:.3f}" for pair, depth in behind]
    if found:
        lines += ["", "Behind by more than two standard errors:", "", *found]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("gap", "rows", "all", "splits"), default="all",
                        help="gap: which points or the learner; rows: the rows_per_node "
                             "sweep; all: both (default); splits: the variation across "
                             "random splits")
    parser.add_argument("--splits", type=int, default=5,
                        help="--part splits: how many splits (default %(default)s)")
    args = parser.parse_args(argv)
    if args.part == "splits":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the models' and encoders' notices
            print(splits_report(splits(args.splits)))
        return 0
    results, swept = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        warnings.simplefilter("ignore", UnseenValueWarning)
        for pair in bench.pairs():
            # One-question pairs only: both parts measure one class's tree (the rows part
            # adds the one tree over all classes of a multi-class model itself).
            if pair.multiclass:
                continue
            if args.part != "rows":
                print(f"... {pair.name}", file=sys.stderr)
                results.append(measure(pair))
            if args.part != "gap":
                print(f"... {pair.name}: rows_per_node", file=sys.stderr)
                swept.append(sweep(pair))
    if results:
        gap_report(results)
    if swept:
        print(("\n" if results else "") + rows_report(swept))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Surrogate trees side by side: lca.models.Surrogate, a scikit-learn tree, Trustee.

For each model x dataset pair (all data ship inside scikit-learn or are
generated here from a fixed seed; nothing is downloaded), the question is
the model's positive side (a class, one class of a multi-class model, or a
regressor's prediction >= a threshold), and three surrogates of depth
``--depth`` are built:

* **lca**: ``Surrogate(model, depth=D).fit(X).tree()``; it spends ``Q``
  model queries (``reconstructor_.stats.queries``).
* **sklearn tree (features)**: ``DecisionTreeClassifier(max_depth=D)``
  trained on ``Q`` points of the encoder's product distribution (derived
  from the seed, decoded to feature values; categorical columns as integer
  codes) labelled by the model: the same number of model queries.
* **sklearn tree (bits)**: the same ``Q`` points, but the tree sees the
  ``±1`` bits lca sees. It has lca's split vocabulary (one bit = one
  dyadic cut of one feature), so the gap between the two sklearn trees
  measures what threshold splits on feature values buy, and the gap between
  this one and lca what the learning rule buys.
* **Trustee** (``trustee`` from PyPI, when installed): ``ClassificationTrustee``
  with ``max_depth=D`` on the data rows (its design: it samples the data, not
  a product distribution), 10 x 5 iterations, half the training split per
  iteration; its model queries are counted by a wrapper.

Fidelity is agreement with the model's positive side: on **the data** (every
row of the dataset, raw rows for the model, each surrogate on the same rows)
and on **the product distribution** (``--fidelity-samples`` points derived
from a seed other than any training seed). Times are wall seconds of the
whole construction, including model calls, on a shared 2-core machine; run
under ``flock /tmp/lca-bench.lock`` so no other benchmark runs at once.

    flock /tmp/lca-bench.lock python scripts/bench_surrogates.py                # table
    flock /tmp/lca-bench.lock python scripts/bench_surrogates.py --output docs/surrogates.md
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import sklearn  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.datasets import (  # noqa: E402
    load_breast_cancer,
    load_diabetes,
    load_iris,
    load_wine,
)
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import lca  # noqa: E402
from lca import derive  # noqa: E402
from lca.models import Surrogate  # noqa: E402

try:
    import lightgbm
except ImportError:  # the pair falls back to scikit-learn's histogram boosting
    lightgbm = None
try:
    from trustee import ClassificationTrustee
except ImportError:
    ClassificationTrustee = None

START, END = "<!-- results:start -->", "<!-- results:end -->"


@dataclass
class Pair:
    name: str
    model: Any
    X: pd.DataFrame
    positive: Any = None
    threshold: float | None = None
    truth: Callable[[Any], np.ndarray] | None = None  # the model's positive side on raw rows


def loans(seed: int = 0, rows: int = 3000) -> tuple[pd.DataFrame, np.ndarray]:
    """A generated loan table with string categories; the label is a fixed rule plus noise."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "income": rng.lognormal(10.5, 0.5, rows).round(-2),
        "debt_ratio": rng.beta(2, 5, rows).round(3),
        "age": rng.integers(18, 75, rows),
        "size_class": rng.choice(["small", "medium", "large"], rows, p=[0.5, 0.3, 0.2]),
        "region": rng.choice(["north", "south", "east", "west"], rows),
        "purpose": rng.choice(["car", "home", "study", "other"], rows, p=[0.3, 0.3, 0.2, 0.2]),
    })
    score = (np.log(frame.income) - 10.5) * 2 - 4 * frame.debt_ratio \
        + (frame.size_class == "large") * 0.8 - (frame.purpose == "study") * 0.6 \
        + (frame.age > 30) * 0.5
    y = np.where(score + rng.normal(0, 0.5, rows) > -0.5, "repaid", "default")
    return frame, y


def pairs() -> list[Pair]:
    out = []
    data = load_breast_cancer(as_frame=True)
    X, y = data.data, data.target.map({0: "malignant", 1: "benign"}).to_numpy()
    out.append(Pair("gradient boosting x breast cancer",
                    GradientBoostingClassifier(random_state=0).fit(X, y), X, "malignant"))
    out.append(Pair("random forest x breast cancer",
                    RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y), X,
                    "malignant"))
    data = load_wine(as_frame=True)
    X, y = data.data, data.target.to_numpy()
    if lightgbm is not None:
        model = lightgbm.LGBMClassifier(n_estimators=100, verbose=-1, random_state=0)
        name = "LightGBM x wine (class 0 of 3)"
    else:
        model = HistGradientBoostingClassifier(random_state=0)
        name = "hist. gradient boosting x wine (class 0 of 3)"
    out.append(Pair(name, model.fit(X, y), X, 0))
    data = load_iris(as_frame=True)
    X, y = data.data, data.target.to_numpy()
    model = make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32,),
                                                          max_iter=2000, random_state=0))
    out.append(Pair("MLP pipeline x iris (virginica of 3)", model.fit(X, y), X, 2))
    data = load_diabetes(as_frame=True, scaled=False)
    X, y = data.data, data.target.to_numpy()
    X = X.assign(sex=X.sex.map({1.0: "F", 2.0: "M"}))  # a string category
    regressor = make_pipeline(
        ColumnTransformer([("sex", OneHotEncoder(), ["sex"])], remainder="passthrough"),
        GradientBoostingRegressor(random_state=0))
    out.append(Pair("gradient boosting regressor x diabetes (>= median)",
                    regressor.fit(X, y), X, threshold=float(np.median(y))))
    X, y = loans()
    model = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["size_class", "region", "purpose"])],
                          remainder=StandardScaler()),
        LogisticRegression(max_iter=1000))
    out.append(Pair("logistic regression pipeline x generated loans (strings)",
                    model.fit(X, y), X, "default"))
    return out


class Counting:
    """The model's positive side as a 0/1 classifier on coded rows; counts its rows."""

    def __init__(self, side: Callable[[pd.DataFrame], np.ndarray], decode) -> None:
        self.side, self.decode, self.rows = side, decode, 0

    def predict(self, X: Any) -> np.ndarray:
        frame = self.decode(np.asarray(X, dtype=np.float64))
        self.rows += len(frame)
        return self.side(frame).astype(int)


def coded(encoder, frame: pd.DataFrame) -> np.ndarray:
    """Feature values with categorical columns as their category index (for sklearn trees)."""
    out = np.empty(frame.shape, dtype=np.float64)
    for j, column in enumerate(frame.columns):
        values = frame[column].to_numpy()
        if j in encoder.categories_:
            position = {v: k for k, v in enumerate(encoder.categories_[j].tolist())}
            out[:, j] = [position[v] for v in values.tolist()]
        else:
            out[:, j] = values.astype(np.float64)
    return out


def uncoded(encoder, template: pd.DataFrame) -> Callable[[np.ndarray], pd.DataFrame]:
    def decode(values: np.ndarray) -> pd.DataFrame:
        columns = {}
        for j, column in enumerate(template.columns):
            if j in encoder.categories_:
                columns[column] = encoder.categories_[j][values[:, j].astype(np.intp)]
            else:
                columns[column] = values[:, j]
        return pd.DataFrame(columns).astype({c: template[c].dtype for c in template.columns
                                             if template[c].dtype != object})
    return decode


def run_pair(pair: Pair, depth: int, fidelity_samples: int) -> dict[str, Any]:
    row: dict[str, Any] = {"pair": pair.name, "rows": len(pair.X)}
    start = time.perf_counter()
    surrogate = Surrogate(pair.model, positive=pair.positive, threshold=pair.threshold,
                          depth=depth).fit(pair.X)
    tree = surrogate.tree()
    lca_time = time.perf_counter() - start
    oracle, encoder = surrogate.oracle_, surrogate.encoder_
    queries = surrogate.reconstructor_.stats.queries
    side = lambda frame: oracle.label_rows(frame) > 0  # noqa: E731
    on_data = side(pair.X)
    product = derive.sample_points(99, "bench-surrogates-fidelity", oracle.n, fidelity_samples)
    on_product = oracle.query(product) > 0
    product_rows = encoder.decode(product)
    row.update(bits=oracle.n, queries=queries)
    row["lca"] = dict(
        data=float(np.mean((surrogate.predict(pair.X) == surrogate.classes_[1]) == on_data)),
        product=float(np.mean((tree.query(product) > 0) == on_product)),
        time=lca_time, leaves=len(tree.leaves), queries=queries)

    # The peer at equal queries: Q labelled points of the product distribution.
    start = time.perf_counter()
    train = derive.sample_points(7, "bench-surrogates-peer", oracle.n, queries)
    labels = oracle.query(train) > 0
    features = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(
        coded(encoder, encoder.decode(train)), labels)
    peer_time = time.perf_counter() - start
    row["sklearn"] = dict(
        data=float(np.mean(features.predict(coded(encoder, pair.X)) == on_data)),
        product=float(np.mean(features.predict(coded(encoder, product_rows)) == on_product)),
        time=peer_time, leaves=int(features.get_n_leaves()), queries=queries)
    bits = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(train, labels)
    row["sklearn_bits"] = dict(
        data=float(np.mean(bits.predict(encoder.encode(pair.X)) == on_data)),
        product=float(np.mean(bits.predict(product) == on_product)),
        leaves=int(bits.get_n_leaves()), queries=queries)

    if ClassificationTrustee is not None:
        np.random.seed(0)  # Trustee draws from numpy's global generator
        expert = Counting(side, uncoded(encoder, pair.X))
        start = time.perf_counter()
        trustee = ClassificationTrustee(expert=expert)
        X_coded = coded(encoder, pair.X)
        trustee.fit(X_coded, on_data.astype(int), max_depth=depth, num_iter=10,
                    num_stability_iter=5, samples_size=0.5, verbose=False)
        student = trustee.explain()[0]
        trustee_time = time.perf_counter() - start
        row["trustee"] = dict(
            data=float(np.mean(student.predict(X_coded) == on_data)),
            product=float(np.mean(student.predict(coded(encoder, product_rows)) == on_product)),
            time=trustee_time, leaves=int(student.get_n_leaves()), queries=expert.rows)
    return row


def table(rows: list[dict[str, Any]], depth: int, samples: int) -> str:
    methods = [("lca", "lca Surrogate"), ("sklearn", "sklearn tree, features"),
               ("sklearn_bits", "sklearn tree, bits")]
    if any("trustee" in row for row in rows):
        methods.append(("trustee", "Trustee (data rows)"))
    lines = [f"Depth {depth}; product-distribution fidelity on {samples:,} derived points; "
             f"data fidelity on every row. lca {lca.__version__}, scikit-learn "
             f"{sklearn.__version__}, numpy {np.__version__}"
             + (f", LightGBM {lightgbm.__version__}" if lightgbm is not None else "")
             + (", trustee installed" if ClassificationTrustee is not None else
                ", trustee not installed")
             + f", Python {platform.python_version()}.", "",
             "| pair | surrogate | fidelity, product | fidelity, data | model queries "
             "| leaves | time (s) |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        for key, label in methods:
            if key not in row:
                continue
            r = row[key]
            time_text = f"{r['time']:.2f}" if "time" in r else "(same points)"
            lines.append(f"| {row['pair']} ({row['rows']} rows, {row['bits']} bits) | "
                         f"{label} | {r['product']:.3f} | {r['data']:.3f} | "
                         f"{r['queries']:,} | {r['leaves']} | {time_text} |")
    wins = sum(row["lca"]["product"] >= row["sklearn"]["product"] for row in rows)
    bit_wins = sum(row["lca"]["product"] >= row["sklearn_bits"]["product"] for row in rows)
    slower = statistics.median(row["lca"]["time"] / row["sklearn"]["time"] for row in rows)
    lines += ["", f"lca's product-distribution fidelity >= the sklearn tree's (features, "
                  f"equal queries) on {wins} of {len(rows)} pairs; >= the sklearn tree on "
                  f"bits on {bit_wins} of {len(rows)}. Median ratio of lca's time to the "
                  f"peer's (both including model calls): {slower:.1f}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--fidelity-samples", type=int, default=4000)
    parser.add_argument("--output", help="markdown file whose results block is replaced")
    args = parser.parse_args(argv)
    rows = []
    with warnings.catch_warnings():
        # The efficient preset's low-margin notice is about node margins, reported
        # in the library's own stats; this benchmark measures agreement instead.
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        for pair in pairs():
            print(f"... {pair.name}", file=sys.stderr)
            rows.append(run_pair(pair, args.depth, args.fidelity_samples))
    text = table(rows, args.depth, args.fidelity_samples)
    print(text)
    if args.output:
        with open(args.output, encoding="utf-8") as handle:
            document = handle.read()
        block = f"{START}\n{text}\n{END}"
        document, count = re.subn(re.escape(START) + ".*?" + re.escape(END),
                                  lambda _: block, document, flags=re.S)
        if count != 1:
            raise SystemExit(f"{args.output} has no {START} ... {END} block")
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(document)
    return 0


if __name__ == "__main__":
    sys.exit(main())

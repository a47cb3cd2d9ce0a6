"""Is lca's default surrogate at least as faithful on held-out rows as what a data scientist builds?

For each model x dataset pair (all data ship inside scikit-learn or are
generated here from a fixed seed; nothing is downloaded), the rows are split
into training rows and held-out rows (stratified for classifiers,
``random_state=0``). The model is trained on the training rows; the question
is its positive side (a class, one class of a multi-class model, or a
regressor's prediction >= a threshold) or, for a multi-class pair, its class.
At every depth ``D`` of ``--depths`` each surrogate is built from the
training rows and the model only:

* **lca data**: ``Surrogate(model, depth=D, positive=..., threshold=...)
  .fit(X_train).tree()``, every other parameter at its default (data mode);
  it spends ``Q`` model queries (``queries_``). A multi-class pair passes no
  ``positive=``: one tree whose leaves answer a class.
* **rows tree**: ``DecisionTreeClassifier(max_depth=D, random_state=0)`` on
  the model's answers for the training rows.
* **equal-query tree**: the same on the training rows plus ``Q - rows``
  model-labelled rows drawn from the product of the fitted marginals (a
  ``QuantileEncoder``'s, from a derived seed): ``Q`` model queries, as lca.
* **FIGS** (imodels, when importable): ``FIGSClassifier(max_rules=2**D - 1)``,
  the split budget of a full depth-``D`` tree, on the rows tree's rows.
* **Trustee** (when importable): ``ClassificationTrustee`` with
  ``max_depth=D`` on the training rows, 10 x 5 iterations, the model as its
  expert.

Trees on feature values see unordered categorical columns as category codes
and every other column as its numbers. Fidelity is agreement with the model
on the held-out rows (rows none of the surrogates saw). Beside it: lca's
``Q``; the median model queries of ``explain(row)`` on a fresh surrogate
(one ``Surrogate(...).fit(X_train)`` per row) for the first ``--explain-rows``
held-out rows; and the wall time of lca's fit + ``tree()`` over the
equal-query tree's (labelling the rows, drawing and labelling the extra rows,
fitting), both including model calls, on a shared 2-core machine: run under
``flock /tmp/lca-bench.lock`` so no other benchmark runs at once.

    flock /tmp/lca-bench.lock python scripts/bench_surrogates.py                # tables
    flock /tmp/lca-bench.lock python scripts/bench_surrogates.py --output docs/surrogates.md
    python scripts/bench_surrogates.py --quick                                   # seconds
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.datasets import (  # noqa: E402
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from lca import derive  # noqa: E402
from lca.models import QuantileEncoder, Surrogate, UnseenValueWarning  # noqa: E402

try:
    import lightgbm
except ImportError:  # the wine pairs fall back to scikit-learn's histogram boosting
    lightgbm = None
# The peers are optional (the surrogates extra): a missing or broken one is a
# column saying why, not a failed run. imodels 3.0.4, for one, imports six
# without declaring it.
try:
    from trustee import ClassificationTrustee
    TRUSTEE_MISSING = ""
except ImportError as error:
    ClassificationTrustee, TRUSTEE_MISSING = None, str(error)
try:
    from imodels import FIGSClassifier
    FIGS_MISSING = ""
except ImportError as error:
    FIGSClassifier, FIGS_MISSING = None, str(error)

START, END = "<!-- results:start -->", "<!-- results:end -->"
TIE = 0.005  # fidelities this close count as a tie (a few rows of the larger held-out sets)
DEPTHS = (3, 5, 8)
EXPLAIN_ROWS = 20
CHART = Path("img") / "surrogates_fidelity.png"  # beside the output document
# The surrogates compared, in table order: result key and column name.
SURROGATES = (("lca", "lca data"), ("rows", "rows tree"), ("equal", "equal-query tree"),
              ("figs", "FIGS"), ("trustee", "Trustee"))
PEERS = SURROGATES[1:]


@dataclass
class Pair:
    name: str
    model: Any             # trained on X
    X: pd.DataFrame        # the training rows
    held_out: pd.DataFrame
    positive: Any = None
    threshold: float | None = None
    label: str = ""        # a short name for the chart

    @property
    def multiclass(self) -> bool:
        """No positive side named: the question is the model's class."""
        return self.positive is None and self.threshold is None

    def answers(self, frame: pd.DataFrame) -> np.ndarray:
        """The model's answers as integers: 0/1 for its positive side, else its class's
        index in ``classes_`` (every peer learns these codes)."""
        predicted = self.model.predict(frame)
        if self.threshold is not None:
            return (predicted >= self.threshold).astype(int)
        if self.positive is not None:
            return (predicted == self.positive).astype(int)
        return np.searchsorted(self.model.classes_, predicted)


def split(X: pd.DataFrame, y: np.ndarray, classifier: bool = True, test_size: float = 0.25,
          seed: int = 0):
    """Training rows and held-out rows; stratified for a classifier; fixed by ``seed``
    (``random_state``; the benchmark's split is seed 0)."""
    return train_test_split(X, y, test_size=test_size, random_state=seed,
                            stratify=y if classifier else None)


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


def payments(seed: int = 0, rows: int = 4000) -> tuple[pd.DataFrame, np.ndarray]:
    """Generated card payments: a 0/1 column with 1.6% ones and small integer columns."""
    rng = np.random.default_rng(seed)
    foreign = np.zeros(rows, dtype=int)
    foreign[rng.choice(rows, round(0.016 * rows), replace=False)] = 1
    frame = pd.DataFrame({
        "amount": rng.lognormal(3.5, 1.0, rows).round(2),
        "hour": rng.integers(0, 24, rows),
        "foreign": foreign,
        "card_age_days": rng.integers(0, 3000, rows),
        "declines_30d": rng.poisson(0.3, rows),
    })
    score = 0.6 * (np.log(frame.amount) - 3.5) + 2.5 * frame.foreign \
        + 1.0 * (frame.hour < 6) + 0.8 * frame.declines_30d - frame.card_age_days / 1500
    y = np.where(score + rng.normal(0, 0.5, rows) > 1.0, "fraud", "ok")
    return frame, y


# The splits, made once each (several pairs share one).
@functools.cache
def cancer(seed: int = 0):
    data = load_breast_cancer(as_frame=True)
    return split(data.data, data.target.map({0: "malignant", 1: "benign"}).to_numpy(),
                 seed=seed)


@functools.cache
def wine(test_size: float = 0.25, seed: int = 0):
    data = load_wine(as_frame=True)
    return split(data.data, data.target.to_numpy(), test_size=test_size, seed=seed)


@functools.cache
def iris(seed: int = 0):
    data = load_iris(as_frame=True)
    return split(data.data, data.target.to_numpy(), seed=seed)


@functools.cache
def digits(seed: int = 0):
    data = load_digits(as_frame=True)  # 64 integer pixels, 0..16; some nearly always 0
    return split(data.data, data.target.to_numpy(), seed=seed)


@functools.cache
def diabetes(seed: int = 0):
    data = load_diabetes(as_frame=True, scaled=False)
    X = data.data.assign(sex=data.data.sex.map({1.0: "F", 2.0: "M"}))  # a string category
    return split(X, data.target.to_numpy(), classifier=False, seed=seed)


@functools.cache
def generated(seed: int = 0):
    """A generic numeric table: 10 columns, 4 informative and 2 of their combinations."""
    X, y = make_classification(n_samples=2000, n_features=10, n_informative=4,
                               n_redundant=2, random_state=0)
    return split(pd.DataFrame(X, columns=[f"x{j}" for j in range(10)]), y, seed=seed)


def trained(name: str, label: str, data: Callable[..., Any], model: Any, seed: int = 0,
            **question: Any) -> Pair:
    """``model`` trained on the training rows of ``data``'s split ``seed``."""
    X, held_out, y, _ = data(seed=seed)
    return Pair(name, model.fit(X, y), X, held_out, label=label, **question)


def boosting() -> tuple[str, Any]:
    if lightgbm is not None:
        return "LightGBM", lightgbm.LGBMClassifier(n_estimators=100, verbose=-1, random_state=0)
    return "hist. gradient boosting", HistGradientBoostingClassifier(random_state=0)


def mlp() -> Any:
    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32,),
                                                         max_iter=2000, random_state=0))


def boosted_wine(question: str, label: str, seed: int, **positive: Any) -> Pair:
    kind, model = boosting()
    return trained(f"{kind} x wine ({question})", label, wine, model, seed, **positive)


def diabetes_regressor(seed: int) -> Pair:
    regressor = make_pipeline(
        ColumnTransformer([("sex", OneHotEncoder(), ["sex"])], remainder="passthrough"),
        GradientBoostingRegressor(random_state=0))
    return trained("gradient boosting regressor x diabetes (>= median)", "GB reg., diabetes",
                   diabetes, regressor, seed,
                   threshold=float(np.median(diabetes(seed=seed)[2])))


def loans_logistic(seed: int) -> Pair:
    model = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["size_class", "region", "purpose"])],
                          remainder=StandardScaler()),
        LogisticRegression(max_iter=1000))
    return trained("logistic regression pipeline x generated loans (strings)", "LR, loans",
                   functools.partial(split, *loans()), model, seed, positive="default")


# Every pair, built only when chosen (--pairs): the indices are stable, the
# multi-class pairs last.
PAIRS: tuple[Callable[[int], Pair], ...] = (
    lambda seed: trained("gradient boosting x breast cancer", "GB, cancer", cancer,
                         GradientBoostingClassifier(random_state=0), seed, positive="malignant"),
    lambda seed: trained("random forest x breast cancer", "RF, cancer", cancer,
                         RandomForestClassifier(n_estimators=100, random_state=0), seed,
                         positive="malignant"),
    lambda seed: boosted_wine("class 0 of 3", "GBM, wine 0", seed, positive=0),
    lambda seed: trained("MLP pipeline x iris (virginica of 3)", "MLP, iris 2", iris, mlp(),
                         seed, positive=2),
    diabetes_regressor,
    loans_logistic,
    lambda seed: trained("gradient boosting x generated payments (0/1 column with 1.6% ones)",
                         "GB, payments", functools.partial(split, *payments()),
                         GradientBoostingClassifier(random_state=0), seed, positive="fraud"),
    lambda seed: trained("random forest x digits (8 of 10; integer pixels)", "RF, digits 8",
                         digits, RandomForestClassifier(n_estimators=100, random_state=0), seed,
                         positive=8),
    # An RBF SVM whose labels differ sharply on and off the data: about half malignant on
    # the held-out rows, one class about 94% of the time on product points.
    lambda seed: trained("RBF SVM (gamma 0.3) x breast cancer (labels differ on and off the "
                         "data)", "SVM, cancer", cancer,
                         make_pipeline(StandardScaler(), SVC(gamma=0.3)), seed,
                         positive="malignant"),
    # Fewer than 200 rows and a kernel model: 124 training rows, 54 held out.
    lambda seed: trained("RBF SVM pipeline x wine (class 1 of 3; 124 training rows)",
                         "SVM, wine 1", functools.partial(wine, 0.3),
                         make_pipeline(StandardScaler(), SVC()), seed, positive=1),
    lambda seed: trained("MLP pipeline x generated classification (10 columns, 2 redundant)",
                         "MLP, generated", generated, mlp(), seed, positive=1),
    lambda seed: trained("logistic regression pipeline x breast cancer", "LR, cancer", cancer,
                         make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
                         seed, positive="malignant"),
    lambda seed: boosted_wine("all 3 classes", "GBM, wine, all", seed),
    lambda seed: trained("MLP pipeline x iris (all 3 classes)", "MLP, iris, all", iris, mlp(),
                         seed),
    lambda seed: trained("random forest x digits (all 10 classes)", "RF, digits, all", digits,
                         RandomForestClassifier(n_estimators=100, random_state=0), seed),
)
QUICK = (3, 13)  # --quick: iris, one class and all three, at depth 3


def pairs(indices: Sequence[int] | None = None, seed: int = 0) -> list[Pair]:
    """The pairs of ``indices`` (default: all), trained on split ``seed`` (the benchmark's
    is 0; others serve the variation across splits)."""
    chosen = range(len(PAIRS)) if indices is None else indices
    return [PAIRS[i](seed) for i in chosen]


def unordered(encoder) -> list[int]:
    """The columns a tree on feature values sees as category codes (no order to their values)."""
    return [j for j in encoder.categories_ if j not in encoder.ordered_]


def coded(encoder, frame: pd.DataFrame) -> np.ndarray:
    """Feature values, unordered categorical columns as their category index (-1: unseen)."""
    out = np.empty(frame.shape, dtype=np.float64)
    codes = unordered(encoder)
    for j, column in enumerate(frame.columns):
        values = frame[column].to_numpy()
        if j in codes:
            position = {v: k for k, v in enumerate(encoder.categories_[j].tolist())}
            out[:, j] = [position.get(v, -1) for v in values.tolist()]
        else:
            out[:, j] = values.astype(np.float64)
    return out


def uncoded(encoder, template: pd.DataFrame) -> Callable[[np.ndarray], pd.DataFrame]:
    codes = unordered(encoder)

    def decode(values: np.ndarray) -> pd.DataFrame:
        columns = {}
        for j, column in enumerate(template.columns):
            if j in codes:
                columns[column] = encoder.categories_[j][values[:, j].astype(np.intp)]
            else:
                columns[column] = values[:, j]
        return pd.DataFrame(columns).astype({c: template[c].dtype for c in template.columns
                                             if template[c].dtype != object})
    return decode


def product_encoder(X: pd.DataFrame) -> QuantileEncoder:
    """The encoder whose product of fitted marginals the equal-query tree draws from (and
    whose categories code the columns for every tree on feature values)."""
    return QuantileEncoder(bits=3, categorical="auto").fit(X)


def augmented(encoder, label: Callable[[pd.DataFrame], np.ndarray], train_rows: np.ndarray,
              train_labels: np.ndarray, spent: int) -> tuple[np.ndarray, np.ndarray]:
    """The training rows and their labels, plus ``spent - rows`` points drawn from the
    encoder's product distribution (a derived seed, decoded to feature values), labelled
    by ``label``: ``spent`` queries in all, the rows alone when fewer."""
    extra = max(spent - train_rows.shape[0], 0)
    if not extra:
        return train_rows, train_labels
    more = encoder.decode(derive.sample_points(8, "bench-surrogates-peer-extra",
                                               encoder.n_bits, extra))
    return (np.vstack([train_rows, coded(encoder, more)]),
            np.concatenate([train_labels, label(more)]))


def peer_tree(pair: Pair, encoder, depth: int, queries: int) -> DecisionTreeClassifier:
    """A scikit-learn tree on the model's answers for the training rows plus product points
    up to ``queries`` (the rows tree: ``queries=0``), built from scratch so it can be timed."""
    features, labels = augmented(encoder, pair.answers, coded(encoder, pair.X),
                                 pair.answers(pair.X), queries)
    return DecisionTreeClassifier(max_depth=depth, random_state=0).fit(features, labels)


class Expert:
    """The model's answers on coded rows, for Trustee (which samples coded training rows)."""

    def __init__(self, pair: Pair, encoder) -> None:
        self.answers, self.decode = pair.answers, uncoded(encoder, pair.X)

    def predict(self, X: Any) -> np.ndarray:
        return self.answers(self.decode(np.asarray(X, dtype=np.float64)))


def trustee_tree(pair: Pair, encoder, depth: int) -> Any:
    np.random.seed(0)  # Trustee draws from numpy's global generator
    trustee = ClassificationTrustee(expert=Expert(pair, encoder))
    trustee.fit(coded(encoder, pair.X), pair.answers(pair.X), max_depth=depth, num_iter=10,
                num_stability_iter=5, samples_size=0.5, verbose=False)
    return trustee.explain()[0]


def figs(pair: Pair, encoder, depth: int) -> Any:
    return FIGSClassifier(max_rules=2 ** depth - 1, random_state=0).fit(
        coded(encoder, pair.X), pair.answers(pair.X))


def lca_surrogate(pair: Pair, depth: int) -> Surrogate:
    """lca data: every parameter but the depth and the question at its default."""
    return Surrogate(pair.model, depth=depth, positive=pair.positive, threshold=pair.threshold)


def grown(pair: Pair, depth: int) -> Surrogate:
    """lca data fitted and its whole tree built (what the benchmark times)."""
    surrogate = lca_surrogate(pair, depth).fit(pair.X)
    surrogate.tree()
    return surrogate


def surrogate_answers(surrogate: Surrogate, pair: Pair, frame: pd.DataFrame) -> np.ndarray:
    """The surrogate's answers in the codes of :meth:`Pair.answers`."""
    predicted = surrogate.predict(frame)
    if pair.multiclass:
        return np.searchsorted(pair.model.classes_, predicted)
    return (predicted == surrogate.classes_[1]).astype(int)


def timed(build: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    built = build()
    return built, time.perf_counter() - start


def explain_queries(pair: Pair, depth: int, rows: int) -> list[int]:
    """Model queries of ``explain(row)`` on a fresh surrogate, for the first ``rows``
    held-out rows (a fresh one each: nothing cached from another row)."""
    spent = []
    for k in range(min(rows, len(pair.held_out))):
        surrogate = lca_surrogate(pair, depth).fit(pair.X)
        surrogate.explain(pair.held_out.iloc[k])
        spent.append(surrogate.queries_)
    return spent


def measure(pair: Pair, depth: int, explain_rows: int = EXPLAIN_ROWS) -> dict[str, Any]:
    """Every surrogate of one pair at one depth: held-out fidelity, lca's queries, its
    explain median and its time over the equal-query tree's."""
    truth = pair.answers(pair.held_out)
    encoder = product_encoder(pair.X)
    held = coded(encoder, pair.held_out)
    surrogate, lca_time = timed(lambda: grown(pair, depth))
    queries = surrogate.queries_
    equal, equal_time = timed(lambda: peer_tree(pair, encoder, depth, queries))
    fitted = {"rows": peer_tree(pair, encoder, depth, 0), "equal": equal}
    if FIGSClassifier is not None:
        fitted["figs"] = figs(pair, encoder, depth)
    if ClassificationTrustee is not None:
        fitted["trustee"] = trustee_tree(pair, encoder, depth)
    fidelity = {key: float(np.mean(tree.predict(held) == truth)) for key, tree in fitted.items()}
    fidelity["lca"] = float(np.mean(surrogate_answers(surrogate, pair, pair.held_out) == truth))
    return {"pair": pair.name, "label": pair.label or pair.name, "multiclass": pair.multiclass,
            "rows": len(pair.X), "held": len(pair.held_out),
            "baseline": float(np.bincount(truth).max() / truth.size), "fidelity": fidelity,
            "queries": queries, "explain": statistics.median(
                explain_queries(pair, depth, explain_rows)),
            "time_ratio": lca_time / equal_time}


def outcome(mine: float, theirs: float) -> str:
    """'win', 'tie' or 'loss' of lca against a peer; a gap of at most TIE is a tie (rounded
    first, so 0.905 - 0.900 counts as the 0.005 it is, not its binary neighbour)."""
    gap = round(mine - theirs, 9)
    return "tie" if abs(gap) <= TIE else "win" if gap > 0 else "loss"


def tally(results: list[dict[str, Any]], peer: str) -> tuple[int, int, int]:
    """Wins, ties and losses of lca data against ``peer`` over the results that have it."""
    found = [outcome(r["fidelity"]["lca"], r["fidelity"][peer]) for r in results
             if peer in r["fidelity"]]
    return found.count("win"), found.count("tie"), found.count("loss")


def missing(peer: str) -> str:
    """Why a peer has no column ('' when it has one)."""
    return {"figs": FIGS_MISSING, "trustee": TRUSTEE_MISSING}.get(peer, "")


def cell(mine: float, theirs: float | None) -> str:
    """A peer's fidelity, marked ↑ where it is ahead of lca data by more than TIE (a loss
    for lca) and ↓ where it is behind by more (a win); unmarked, a tie."""
    if theirs is None:
        return "–"
    mark = {"win": " ↓", "tie": "", "loss": " ↑"}[outcome(mine, theirs)]
    return f"{theirs:.3f}{mark}"


def table(results: list[dict[str, Any]], depth: int) -> str:
    """One row per pair: every surrogate's held-out fidelity, lca's Q, explain median and
    time ratio."""
    lines = [f"#### Depth {depth}", "",
             "| pair (training + held-out rows) | majority | " +
             " | ".join(name for _, name in SURROGATES) +
             " | lca Q | explain Q (median) | lca time / equal-query time |",
             "|---|---:|" + "---:|" * len(SURROGATES) + "---:|---:|---:|"]
    for r in results:
        fidelity = r["fidelity"]
        peers = [cell(fidelity["lca"], fidelity.get(key)) for key, _ in PEERS]
        lines.append(f"| {r['pair']} ({r['rows']:,} + {r['held']:,}) | {r['baseline']:.3f} | "
                     f"**{fidelity['lca']:.3f}** | " + " | ".join(peers) +
                     f" | {r['queries']:,} | {r['explain']:,.0f} | {r['time_ratio']:.1f} |")
    return "\n".join(lines)


def summary(results: list[dict[str, Any]], depth: int) -> str:
    """The depth's wins/ties/losses of lca data against every peer, one-question pairs and
    multi-class pairs apart, and the medians of its explain queries and time ratio."""
    parts = []
    for multiclass, kind in ((False, "one-question"), (True, "multi-class")):
        group = [r for r in results if r["multiclass"] == multiclass]
        if not group:
            continue
        against = [f"{name} not importable" if missing(key) else
                   "{} {}/{}/{}".format(name, *tally(group, key)) for key, name in PEERS]
        parts.append(f"{kind} pairs ({len(group)}): " + ", ".join(against))
    ratios = [r["time_ratio"] for r in results]
    return (f"**Depth {depth}**, lca data's wins/ties/losses (a tie: within ±{TIE}) against "
            "each peer, " + "; ".join(parts) + ". Its explain(row) on a fresh surrogate: "
            f"median {statistics.median(r['explain'] for r in results):,.0f} model queries "
            f"(the whole tree: median {statistics.median(r['queries'] for r in results):,.0f})"
            f". Its fit + tree() time over the equal-query tree's: median "
            f"{statistics.median(ratios):.1f} ({min(ratios):.1f} to {max(ratios):.1f}).")


def versions() -> str:
    def version(name: str) -> str:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            return f"{name} not installed"
    names = ("lca", "scikit-learn", "numpy", "pandas", "lightgbm", "imodels", "trustee",
             "matplotlib")
    return ", ".join(map(version, names)) + f", Python {platform.python_version()}"


def header(argv: Sequence[str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    notes = [f"{name}: not importable ({missing(key)})" for key, name in PEERS if missing(key)]
    return "\n".join([
        f"Run {datetime.date.today().isoformat()} at commit {commit or 'unknown'}: "
        f"`python {shlex.join(['scripts/bench_surrogates.py', *argv])}`.", "",
        f"{versions()}." + ("" if not notes else " " + "; ".join(notes) + ".")])


def chart(by_depth: dict[int, list[dict[str, Any]]], path: Path) -> None:
    """Grouped bars of held-out fidelity: one panel per depth, pairs x surrogates."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(len(by_depth), 1, figsize=(14, 3.6 * len(by_depth)),
                                squeeze=False)
    width = 0.8 / len(SURROGATES)
    values = [f for results in by_depth.values() for r in results
              for f in r["fidelity"].values()]
    floor = max(0.0, np.floor(min(values) * 10) / 10 - 0.05)
    for axis, (depth, results) in zip(axes[:, 0], by_depth.items(), strict=True):
        x = np.arange(len(results))
        for k, (key, name) in enumerate(SURROGATES):
            heights = [r["fidelity"].get(key, np.nan) for r in results]
            axis.bar(x + (k - (len(SURROGATES) - 1) / 2) * width, heights, width, label=name)
        axis.set_xticks(x, [r["label"] for r in results], rotation=30, ha="right", fontsize=8)
        axis.set_ylim(floor, 1.0)
        axis.set_ylabel(f"held-out fidelity (from {floor:.2f})")
        axis.set_title(f"depth {depth}", fontsize=10)
        axis.grid(axis="y", alpha=0.3)
        multiclass = [k for k, r in enumerate(results) if r["multiclass"]]
        if multiclass:  # the multi-class pairs, last, apart
            axis.axvline(multiclass[0] - 0.5, color="grey", linewidth=0.8)
    # Above the panels, where no bar is hidden behind it.
    figure.legend(*axes[0, 0].get_legend_handles_labels(), ncol=len(SURROGATES),
                  loc="upper center", fontsize=9, frameon=False)
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def report(by_depth: dict[int, list[dict[str, Any]]], argv: Sequence[str],
           picture: Path | None) -> str:
    """The results block: header, the chart's link, per depth a table and its summary."""
    blocks = [header(argv)]
    if picture is not None:
        blocks.append(f"![Held-out fidelity per pair and surrogate, one panel per depth]"
                      f"({picture.as_posix()})")
    for depth, results in by_depth.items():
        blocks += [table(results, depth), summary(results, depth)]
    return "\n\n".join(blocks)


def replace_block(path: Path, text: str) -> None:
    document = path.read_text(encoding="utf-8")
    document, count = re.subn(re.escape(START) + ".*?" + re.escape(END),
                              lambda _: f"{START}\n{text}\n{END}", document, flags=re.S)
    if count != 1:
        raise SystemExit(f"{path} has no {START} ... {END} block")
    path.write_text(document, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default=",".join(map(str, DEPTHS)),
                        help="comma-separated depths (default: %(default)s)")
    parser.add_argument("--pairs", help="comma-separated indices of the pairs to run "
                                        "(default: all)")
    parser.add_argument("--explain-rows", type=int, default=EXPLAIN_ROWS,
                        help="held-out rows explained on fresh surrogates (default: "
                             "%(default)s)")
    parser.add_argument("--output", type=Path,
                        help="markdown file whose results block is replaced; the chart goes "
                             f"to {CHART} beside it")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: iris (pairs 3 and 13) at depth 3, 3 rows explained")
    args = parser.parse_args(argv)
    depths = [3] if args.quick else [int(d) for d in args.depths.split(",")]
    indices = [int(i) for i in args.pairs.split(",")] if args.pairs else \
        QUICK if args.quick else None
    explain_rows = 3 if args.quick else args.explain_rows
    chosen = pairs(indices)
    by_depth: dict[int, list[dict[str, Any]]] = {depth: [] for depth in depths}
    with warnings.catch_warnings():
        # Held-out digits hold pixel values fit never saw: they go to the nearest level.
        warnings.simplefilter("ignore", UnseenValueWarning)
        # The peers' own notices (an MLP stopping early, FIGS) are not what is measured.
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", FutureWarning)
        for pair in chosen:
            for depth in depths:
                print(f"... {pair.name}, depth {depth}", file=sys.stderr)
                by_depth[depth].append(measure(pair, depth, explain_rows))
    picture = None
    if args.output is not None:
        picture = CHART
        chart(by_depth, args.output.parent / CHART)
    text = report(by_depth, argv, picture)
    print(text)
    if args.output is not None:
        replace_block(args.output, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

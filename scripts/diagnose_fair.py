"""Early leaves on a gradient-boosting model of the *fair* data, in both modes.

The model: scikit-learn's ``GradientBoostingClassifier(n_estimators=50,
max_depth=3, random_state=1)`` (the suite's) trained on statsmodels' *fair*
data (6,366 marriages, 8 features; "had an affair", ``affairs > 0``),
queried through ``lca.models.QuantileEncoder(bits=4, categorical="auto")`` (every
feature has at most 7 values, so each is categorical): ``n = 32``. Both
modes at the suite's settings (efficient: ``Params.efficient`` defaults;
paper: ``Params.practical(noise_rate=0.1, score_samples=1000,
leaf_samples=500)``) at depth caps 10 and 12, reconstruction seed 7, error
against the model on 5,000 uniform points (purpose ``"bench/eval"``) with
95% Wilson intervals, and where the efficient mode's answers end: at early
leaves by rule (certified constant or "no structure") and how many of its
wrong answers each kind makes.

Needs statsmodels for the data (``pip install statsmodels``); not a
dependency of lca.

    python scripts/diagnose_fair.py        # about 2 minutes
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier

import lca
from lca import derive
from lca.models import QuantileEncoder, from_estimator
from lca.suite.stats import wilson_interval

POINTS, SEED = 5_000, 7


def main() -> None:
    import statsmodels.api as sm

    warnings.simplefilter("ignore", lca.LowMarginWarning)
    data = sm.datasets.fair.load_pandas().data
    X, y = data.drop(columns="affairs").to_numpy(), (data["affairs"] > 0).to_numpy()
    model = GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=1).fit(X, y)
    encoder = QuantileEncoder(bits=4, categorical="auto").fit(X)
    oracle = from_estimator(model, encoder, positive=True)
    points = derive.sample_points(0, "bench/eval", oracle.n, POINTS)
    truth = oracle(points)
    print(f"n = {oracle.n}; model's +1 share on uniform bits {np.mean(truth == 1):.3f}\n")
    print("| depth | mode | error vs f [95%] | answers at early leaves: certified / no "
          "structure | wrong answers there: certified / no structure |")
    print("|---:|---|---:|---:|---:|")
    for depth in (10, 12):
        modes = {"efficient": lca.Params.efficient(oracle.n, depth=depth),
                 "paper": lca.Params.practical(oracle.n, depth, 0.1, 1000, 500)}
        for name, params in modes.items():
            rec = lca.Reconstructor(oracle, params, record=True)
            answers = rec.answer_many(points, SEED)
            wrong = answers != truth
            low, high = wilson_interval(int(wrong.sum()), POINTS)
            at = {"constant": np.zeros(POINTS, dtype=bool),
                  "no structure": np.zeros(POINTS, dtype=bool)}
            for i, z in enumerate(points):
                path = rec.explain(z, SEED).path
                leaf = rec.decisions[(SEED, path)]
                if len(path) < params.path_length and name == "efficient":
                    at["constant" if leaf.certified else "no structure"][i] = True
            print(f"| {depth} | {name} | {wrong.mean():.4f} [{low:.4f}, {high:.4f}] | "
                  f"{at['constant'].sum()} / {at['no structure'].sum()} | "
                  f"{(wrong & at['constant']).sum()} / {(wrong & at['no structure']).sum()} |",
                  flush=True)


if __name__ == "__main__":
    main()

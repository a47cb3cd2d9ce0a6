"""``lca distill``: a saved model and a CSV of its rows in, a readable surrogate tree out."""

from __future__ import annotations

import argparse
import csv
import os
import pickle
import sys
import tempfile
import warnings
from typing import Any

import numpy as np

from lca._cli_options import SEED_HIGH, int_in
from lca.models.surrogate import DEFAULT_DEPTH

__all__ = ["add_distill_command"]

_OUTPUTS = (".json", ".txt", ".dot", ".png")

_DESCRIPTION = """\
Distil a trained model into one fixed decision tree (lca.models.Surrogate) and
print its report and rules. MODEL is a file written by joblib.dump or
pickle.dump. WARNING: loading a pickle or joblib file runs code from that
file; only distil models from sources you trust.

The CSV holds rows the model works on (a header row of column names). When
the model was fitted with feature names, exactly its columns are taken (so a
label column may stay in the file); otherwise every column not listed in
--drop is a feature, in file order.

A share of the rows (--holdout, a quarter by default, picked by the seed) is
held out: the tree is fitted on the others, and its agreement with the model
on the held-out rows comes first in the report, as agreement on rows a
surrogate was fitted on flatters it."""


def add_distill_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``lca distill`` on the ``add_subparsers()`` object of the ``lca`` parser."""
    parser = subparsers.add_parser(
        "distill", help="distil a saved model into a readable tree (unpickling runs code)",
        description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", metavar="MODEL",
                        help="joblib or pickle file of a fitted model (loading it runs code)")
    parser.add_argument("--data", required=True, metavar="CSV",
                        help="CSV of rows the model works on, with a header (needs pandas)")
    parser.add_argument("--positive", metavar="LABEL",
                        help="the class on the positive side (matched against the model's "
                             "classes as text; default: a binary model's second class; a "
                             "model of more than two classes without it: one tree whose leaves "
                             "answer its class, in data mode)")
    parser.add_argument("--threshold", type=float, metavar="T",
                        help="cut on scores: probability of --positive, or a regressor's "
                             "prediction (predict >= T is the positive side)")
    parser.add_argument("--depth", type=int_in(0, 30), default=DEFAULT_DEPTH,
                        help=f"depth cap of the tree (default {DEFAULT_DEPTH}: at most "
                             f"{2 ** DEFAULT_DEPTH} leaves, a tree to read)")
    parser.add_argument("--holdout", type=_fraction, default=0.25, metavar="FRACTION",
                        help="share of the CSV's rows held out of the fit to measure the "
                             "tree on, in [0, 1) (default 0.25; 0 fits every row and "
                             "reports agreement on the fitted rows, which flatters it)")
    parser.add_argument("--seed", type=int_in(0, SEED_HIGH), default=0,
                        help="selects the tree T_seed (default 0)")
    parser.add_argument("--distribution", choices=("data", "product"), default="data",
                        help="data: a tree grown from the CSV's rows (the default); product: "
                             "the reconstructor under the product of the columns' marginals")
    parser.add_argument("--drop", action="append", default=[], metavar="COLUMN",
                        help="a CSV column that is not a feature (repeatable)")
    parser.add_argument("--out", metavar="PATH",
                        help="also write the tree: .json (the Surrogate, encoder included), "
                             ".txt (rules), .dot (Graphviz) or .png (drawing of the top "
                             "levels, needs matplotlib)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=_distill)
    return parser


def _distill(args: argparse.Namespace) -> int:
    from lca.models._data import pandas
    from lca.models.quality import LowFidelityWarning
    from lca.models.surrogate import Surrogate

    if args.out is not None:
        problem = _unwritable(args.out)
        if problem is not None:
            return _fail(f"argument --out: {problem}")
    try:
        model = _load(args.model)
    except Exception as error:  # noqa: BLE001 - unpickling can raise anything
        # A garbage or truncated file fails inside pickle or joblib with whatever
        # they hit (KeyError, ValueError, EOFError...): one line, not a traceback.
        return _fail(f"argument MODEL: cannot load {args.model!r}: "
                     f"{type(error).__name__}: {_one_line(error)}")
    pd = pandas("lca distill")
    try:
        header = _header(args.data)
        frame = pd.read_csv(args.data)
    except (OSError, ValueError) as error:
        return _fail(f"argument --data: cannot read {args.data!r}: {error}")
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        return _fail(f"argument --data: {args.data!r} names the column(s) {repeated!r} more "
                     "than once; a column must be named once to be taken by name.")
    X = _features(model, frame, args.drop)
    fitted, held = _split(X, args.holdout, args.seed)
    if len(fitted) < 2 or (args.holdout > 0 and len(held) < 1):
        return _fail(f"argument --data: {args.data!r} has {len(X)} row(s): a tree needs at "
                     "least 2 fitted rows" + (f" and 1 held-out row (--holdout "
                                              f"{args.holdout:g})" if args.holdout else ""))
    surrogate = Surrogate(model, positive=_positive(model, args.positive),
                          threshold=args.threshold, depth=args.depth, seed=args.seed,
                          distribution=args.distribution).fit(fitted)
    tree = surrogate.tree(progress=not args.quiet)
    if args.holdout:
        print(f"held out: {len(held)} of the {len(X)} rows ({args.holdout:.0%}, picked by "
              f"seed {args.seed}); the tree is fitted on the other {len(fitted)}, and the "
              "agreement below is on the held-out rows")
    else:
        print(f"no rows held out (--holdout 0): the agreement below is on the {len(X)} "
              "fitted rows, which flatters the tree")
    with warnings.catch_warnings():  # the report prints each concern as a warning line
        warnings.simplefilter("ignore", LowFidelityWarning)
        print(surrogate.report(held if args.holdout else fitted))
    print()
    print(tree.to_text())
    if args.out is not None:
        try:
            _write(surrogate, tree, args.out)
        except OSError as error:
            return _fail(f"argument --out: cannot write {args.out!r}: "
                         f"{error.strerror or error}; nothing was written")
        print(f"\nwrote {args.out}")
    return 0


def _fraction(text: str) -> float:
    """A share in ``[0, 1)``, for ``--holdout``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}")
    return value


def _header(path: str) -> list[str]:
    """The CSV's header row as written (pandas renames a repeated name ``a.1``)."""
    with open(path, newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle), [])


def _split(X: Any, holdout: float, seed: int) -> tuple[Any, Any]:
    """The fitted and held-out rows: the last ``floor(holdout * rows)`` rows in the order of
    their derived keys (purpose ``"distill-holdout"``), each part in file order."""
    from lca import derive

    rows = len(X)
    keys = derive.raw_words(derive.node_key(seed, "distill-holdout", ()), 0, 0, rows)
    order = np.argsort(keys, kind="stable")
    held = int(holdout * rows)
    return X.iloc[np.sort(order[:rows - held])], X.iloc[np.sort(order[rows - held:])]


def _unwritable(path: str) -> str | None:
    """Why ``--out`` cannot be written, checked before any work; ``None`` when it can."""
    extension = os.path.splitext(path)[1].lower()
    folder = os.path.dirname(os.path.abspath(path))
    if extension not in _OUTPUTS:
        return f"{path!r} must end in one of {_OUTPUTS}"
    if not os.path.isdir(folder):
        return f"cannot write {path!r}: no directory {folder!r}"
    if os.path.isdir(path):
        return f"cannot write {path!r}: it is a directory"
    if os.path.exists(path) and not os.path.isfile(path):
        return f"cannot write {path!r}: not a regular file"
    try:  # the one sure test of a folder: make a file there (and remove it)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".lca-distill-"):
            pass
    except OSError as error:
        return f"cannot write {path!r}: {error.strerror or error}"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"cannot write {path!r}: permission denied"
    return None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or "(no message)"


def _fail(message: str) -> int:
    print(f"lca distill: error: {message}", file=sys.stderr)
    return 2


def _load(path: str) -> Any:
    try:
        import joblib
    except ImportError:  # pragma: no cover - scikit-learn brings joblib
        with open(path, "rb") as handle:
            return pickle.load(handle)
    return joblib.load(path)


def _features(model: Any, frame: Any, drop: list[str]) -> Any:
    missing = [column for column in drop if column not in frame.columns]
    if missing:
        raise ValueError(f"The 'drop' parameter names column(s) {missing!r}, which the CSV "
                         f"does not have; its columns are {list(frame.columns)!r}.")
    frame = frame.drop(columns=drop)
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return frame
    names = [str(name) for name in names]
    absent = [name for name in names if name not in frame.columns]
    if absent:
        raise ValueError(f"The 'data' parameter: the CSV lacks the model's column(s) "
                         f"{absent!r}.")
    return frame[names]


def _positive(model: Any, label: str | None) -> Any:
    """The model's class whose text is ``label`` (CSV and command line are text)."""
    if label is None:
        return None
    classes = getattr(model, "classes_", None)
    if classes is None:
        try:
            return int(label)
        except ValueError:
            raise ValueError(f"The 'positive' parameter must be 0, 1 or -1 for a model "
                             f"without classes_. Got {label!r}.") from None
    matches = [c for c in list(classes) if str(c) == label]
    if len(matches) != 1:
        raise ValueError(f"The 'positive' parameter must be one of the model's classes "
                         f"{[str(c) for c in classes]}. Got {label!r}.")
    return matches[0].item() if hasattr(matches[0], "item") else matches[0]


def _write(surrogate: Any, tree: Any, path: str) -> None:
    """Write the tree to ``path`` whole or not at all: to a temporary file beside it, then
    renamed over it (a full disk leaves no half-written file)."""
    extension = os.path.splitext(path)[1].lower()
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".lca-distill-", suffix=extension)
    try:
        with os.fdopen(handle, "wb") as out:
            if extension == ".png":
                import matplotlib

                matplotlib.use("Agg")
                ax = tree.draw(max_levels=max(len(path) for path in tree.decisions))
                ax.figure.savefig(out, format="png", dpi=120, bbox_inches="tight")
            else:
                text = {".json": lambda: surrogate.to_json(indent=1), ".txt": tree.to_text,
                        ".dot": tree.to_dot}[extension]()
                out.write((text if text.endswith("\n") else text + "\n").encode("utf-8"))
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise

"""A saved :class:`lca.models.Surrogate`: the document written whole, and read back checked whole.

:func:`write_document` turns a fitted surrogate's tree, encoder and plain
values into the text :meth:`~lca.models.Surrogate.to_json` returns;
:func:`read_document` reads one back into :class:`Saved` (which gives the
surrogate's constructor arguments and its tree source) and builds nothing
from it before every field has been checked: its type and range, and its
consistency with the encoder and the tree (the seed, ``n``, every node's
conditions and feature names, the classes). Any flaw is one ``ValueError``
that names the field. Last, the document's ``"digest"`` (SHA-256 of a
canonical serialization of everything else) must match, so an edit that
keeps the fields consistent (two classes swapped, a cut moved within its
bin) is refused too. The digest is an integrity check, not a signature: it
catches edits and corruption, not a forger who recomputes it.

The tree records the builder that made it in its ``"params"``: the fields of
:class:`lca.Params` (product mode, the reconstructor), or a data-mode
surrogate's rows builder (``"builder": "rows"`` and its parameters). A
data-mode document holds a :class:`ThresholdEncoder` (its cuts and
categories, checked) and ``"rows"``: the fitted rows' digest and count and
each leaf's fitted rows, checked against the tree's leaves. Only a
data-mode document may hold a multi-class tree: ``"classes"`` lists the
model's ``K > 2`` classes, ``"positive"`` is null, and the tree's leaves are
class leaves whose ``class_names`` are those classes as text (each leaf's
class index within them, checked by :mod:`lca._tree_json`). A one-vs-rest
tree of one class ``c`` of such a model writes its classes as
``[{"not": c}, c]`` (:class:`lca.models.Not`). ``"queries"`` is the number
of model queries the tree cost.

Documents of earlier formats are read on request (``allow_old_version``):
format 1 has no digest; format 2 records a data-mode tree's parameters in
``"rows"`` and ``"distribution": "data"`` (its tree was grown by the node
rule of that time, and a surrogate read from it can answer but not be
saved again), and neither records queries.

Floats go through Python's ``repr`` (what :mod:`json` writes), so every cut,
representative and mass reads back bit for bit, and a document read back
writes the same text again.

Why one module of this size: reading a saved surrogate back is one check of
one document, field by field against the encoder and the tree, and its
messages name the field; split, the checks would pass half-checked values on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from lca._json_check import bad, brief, int_in, is_int, is_real, is_scalar, keys, load
from lca._validate import SEED_LIMIT, check_real, show
from lca.decisions import LeafDecision, NodeDecision, RowsSplit, Split
from lca.derive import Path
from lca.export import ReconstructedTree
from lca.models._data import MAX_FEATURES, plain
from lca.models.encoders import MAX_BITS, BinaryEncoder, Encoder, QuantileEncoder
from lca.models.oracle import Not
from lca.models.questions import Questions, category_key
from lca.models.rows import MAX_ROWS_PER_NODE, LeafRows
from lca.models.sources import SavedTree
from lca.models.thresholds import MAX_CUTS, ThresholdEncoder
from lca.params import Params, TheoryConstants

__all__: list[str] = []

FORMAT = "lca.models.Surrogate"
FORMAT_VERSION = 3
"""Version 3 records the tree's builder and its queries; 2 added the ``"digest"``."""

OWNER = "Surrogate.from_json"
MAX_DEPTH = 30
_DIGEST = "sha256:"
# The deepest a saved Surrogate nests is 6 objects and lists (a node's path
# step inside 'tree'); anything deeper is not one, and is refused before any
# recursive serialization could run out of stack on it.
_MAX_NESTING = 16
_TOP_KEYS = ("format", "version", "digest", "model", "positive", "threshold", "depth", "seed",
             "classes", "feature_names_in", "encoder", "tree", "queries")
_ROWS_KEYS = ("digest", "count", "leaves")
_RECORD_KEYS = ("builder", "n", "depth", "rows_per_node", "min_rows", "shared_rows")
# Format 2: no queries; a data-mode document adds these, its tree's parameters in "rows".
_V2_DATA_KEYS = ("distribution", "rows")
_V2_ROWS_KEYS = ("digest", "count", "rows_per_node", "min_rows", "leaves")
_THRESHOLD_KEYS = ("kind", "feature_names", "columns", "categorical_dtypes", "cuts",
                   "thresholds", "categories")
_LAYOUT_KEYS = ("kind", "bits", "feature_names", "columns", "categorical_dtypes")
_QUANTILE_KEYS = ("table", "bin_mass", "thresholds", "categories", "home_bin",
                  "category_labels")
_MODEL_DTYPES = frozenset(np.dtype(kind + str(size)).name for kind in "iu"
                          for size in (1, 2, 4, 8)) | {"bool"}
# Written since features of levels could be ordered; a document without it (written
# earlier) has none, so a value its encoder did not see is refused as it was then.
_ORDERED_KEY = "ordered"
# Written only when some feature has bins for missing values ({feature: its first missing
# bin}, whose table entries are null: JSON has no NaN), so that the documents of encoders
# fitted without missing values are byte for byte what they were before such bins existed.
_MISSING_KEY = "missing_bin"

@dataclass(frozen=True)
class Saved:
    """The checked fields of a saved Surrogate, built into the objects they describe."""

    version: int
    model: str
    positive: Any
    threshold: float | None
    depth: int
    seed: int
    classes: np.ndarray
    feature_names_in: list[str] | None
    encoder: Questions
    tree: ReconstructedTree
    params: Params | None
    queries: int | None
    rows: SavedRows | None = None

    @property
    def distribution(self) -> str:
        """The surrogate's ``distribution``: ``"data"`` when the document holds ``"rows"``."""
        return "product" if self.rows is None else "data"

    def arguments(self) -> dict[str, Any]:
        """The Surrogate's constructor arguments the document records (all but the model;
        a format 2 data-mode document records no ``shared_rows``)."""
        found = {"positive": self.positive, "threshold": self.threshold, "depth": self.depth,
                 "seed": self.seed, "distribution": self.distribution}
        rows = self.rows
        if rows is not None:
            found |= {"rows_per_node": rows.rows_per_node, "min_rows": rows.min_rows}
            if rows.shared_rows is not None:
                found["shared_rows"] = rows.shared_rows
        return found

    def source(self) -> SavedTree:
        """The tree as the surrogate's one source, with the builder and queries recorded."""
        rows = self.rows
        return SavedTree(self.tree, "reconstructor" if rows is None else "rows", self.queries,
                         None if rows is None else dict(rows.leaves))


@dataclass(frozen=True)
class SavedRows:
    """A data-mode document's rows: the fitted rows' identity, the tree's parameters
    (``shared_rows`` is ``None`` in a format 2 document, whose rule had none) and each
    leaf's fitted rows."""

    digest: str
    count: int
    rows_per_node: int
    min_rows: int
    shared_rows: int | None
    leaves: dict[Any, LeafRows]


# -- writing -------------------------------------------------------------------------

def write_document(tree: ReconstructedTree, encoder: Questions, indent: int | None, *,
                   positive: Any, threshold: Any, depth: Any, seed: int, classes: np.ndarray,
                   feature_names_in: np.ndarray | None, queries: int | None,
                   leaf_rows: Callable[[Path], LeafRows] | None) -> str:
    """The JSON text of a saved Surrogate: its fields under a format tag, version and digest.

    The fields are the keys of :data:`_TOP_KEYS` after ``"digest"``, written
    from the whole ``tree``, the fitted ``encoder`` and the values given
    (``Not(c)`` classes as ``{"not": c}``), and for a data-mode surrogate
    (``leaf_rows`` given: each leaf's fitted rows) ``"rows"``, whose digest
    and count are the encoder's. The text is read back before it is
    returned: a surrogate whose document would not load (a column label or a
    category JSON cannot hold exactly, say) is refused here, naming the value.
    """
    owner = "Surrogate.to_json"
    if leaf_rows is not None and tree.params.get("builder") != "rows":
        raise ValueError(f"{owner}: this surrogate was read from a format 2 "
                         "document, whose data-mode tree was grown by an earlier rule that "
                         "format 3 does not record; keep the original file, or fit the "
                         "model again to save it in this format.")
    if threshold is not None:  # the number the oracle compares with
        threshold = check_real(owner, "threshold", threshold, -math.inf, math.inf)
    fields = {
        "model": tree.oracle, "positive": plain(positive), "threshold": threshold,
        "depth": plain(depth), "seed": seed,
        "classes": [{"not": c.label} if isinstance(c, Not) else plain(c) for c in classes],
        "feature_names_in": None if feature_names_in is None else feature_names_in.tolist(),
        "encoder": encoder_state(encoder),
        "tree": json.loads(tree.to_json()),
        "queries": queries,
    }
    if leaf_rows is not None:
        assert isinstance(encoder, ThresholdEncoder), "data mode's questions"
        fields["rows"] = {
            "digest": encoder.rows_digest_, "count": encoder.n_rows_,
            "leaves": [[[list(step) for step in path], found.rows, found.agree]
                       for path, node in tree.walk() if isinstance(node, LeafDecision)
                       for found in [leaf_rows(path)]]}
    content = {"format": FORMAT, "version": FORMAT_VERSION, **fields}
    try:
        text = json.dumps({"format": FORMAT, "version": FORMAT_VERSION,
                           "digest": digest(content), **fields}, indent=indent, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{owner}: the surrogate holds a value JSON cannot write "
                         f"exactly ({error}); column labels, categories and classes must be "
                         "strings, finite numbers or bools.") from None
    try:
        read_document(text)
    except ValueError as error:
        raise ValueError(f"{owner}: this surrogate would not read back: "
                         f"{str(error).removeprefix(OWNER + ': ')} Column labels, "
                         "categories and classes must be strings, finite numbers or bools "
                         "that JSON holds exactly.") from None
    return text


def digest(document: dict[str, Any]) -> str:
    """``"sha256:<hex>"`` of the document without its ``"digest"``, serialized canonically.

    Canonical: keys sorted, no spaces, ASCII only, floats as ``repr``; a
    document read back serializes to the same bytes, whatever its indent.
    """
    content = {key: value for key, value in document.items() if key != "digest"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return _DIGEST + hashlib.sha256(text.encode("ascii")).hexdigest()


def encoder_state(encoder: Questions) -> dict[str, Any]:
    """Everything a fitted encoder needs to decode, encode and describe."""
    state: dict[str, Any] = {"kind": type(encoder).__name__}
    if isinstance(encoder, Encoder):
        state["bits"] = encoder.bits
    state |= {
        "feature_names": list(encoder.feature_names),
        "columns": None if encoder.columns_ is None else [plain(c) for c in encoder.columns_],
        "categorical_dtypes": {str(j): {"categories": [plain(c) for c in dtype.categories],
                                        "ordered": bool(dtype.ordered)}
                               for j, dtype in encoder.categorical_dtypes_.items()},
    }
    if isinstance(encoder, ThresholdEncoder):
        state.update(
            cuts=encoder.cuts,
            thresholds={str(j): cuts.tolist() for j, cuts in encoder.cuts_.items()},
            categories={str(j): [plain(v) for v in values]
                        for j, values in encoder.categories_.items()},
            dtypes={str(j): dtype.name for j, dtype in sorted(encoder.model_dtypes_.items())},
            missing=sorted(encoder.missing_),
        )
    if isinstance(encoder, QuantileEncoder):
        table = encoder.table_.tolist()
        if encoder.missing_bin_:  # a missing bin decodes to NaN, which JSON writes as null
            table = [[None if value != value else value for value in row] for row in table]
        state.update(
            table=table,
            bin_mass=encoder.bin_mass_.tolist(),
            thresholds={str(j): cuts.tolist() for j, cuts in encoder.thresholds_.items()},
            categories={str(j): [plain(v) for v in values]
                        for j, values in encoder.categories_.items()},
            home_bin={str(j): homes.tolist() for j, homes in encoder.home_bin_.items()},
            category_labels={str(j): [[code, label] for code, label in labels.items()]
                             for j, labels in encoder.category_labels_.items()},
            ordered=sorted(encoder.ordered_),
        )
        if encoder.missing_bin_:
            state[_MISSING_KEY] = {str(j): k for j, k in sorted(encoder.missing_bin_.items())}
    return state


# -- reading: the fields -------------------------------------------------------------

def _parse(text: Any) -> dict[str, Any]:
    """The document as JSON values, every number finite, no key repeated, nesting bounded."""
    document = load(text, OWNER, "a saved Surrogate", _MAX_NESTING)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{OWNER}: not a saved Surrogate (expected \"format\": "
                         f"{FORMAT!r}).")
    return document


def _bad(field: str, expected: str, value: Any) -> ValueError:
    return bad(OWNER, field, expected, value)


def _keys(field: str, value: Any, required: tuple[str, ...],
          optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """``value``: an object with every ``required`` key, maybe ``optional`` ones, no other."""
    return keys(OWNER, "the document" if field == "" else repr(field), value, required,
                optional)


def _int_in(field: str, value: Any, low: int, high: int) -> int:
    return int_in(OWNER, field, value, low, high)


def _strings(field: str, value: Any, length: int | None = None) -> list[str]:
    size = "" if length is None else f"{length} "
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) \
            or (length is not None and len(value) != length):
        raise _bad(field, f"a list of {size}strings", value)
    return value


def _reals(field: str, value: Any, length: int) -> np.ndarray:
    if not isinstance(value, list) or len(value) != length \
            or not all(is_real(v) for v in value):
        raise _bad(field, f"a list of {length} finite numbers", value)
    return np.array(value, dtype=np.float64)


def _by_feature(field: str, value: Any, d: int) -> dict[int, Any]:
    """An object keyed by feature numbers ``"0"``, ``"1"``, ... (each below ``d``)."""
    if not isinstance(value, dict):
        raise _bad(field, "an object keyed by feature numbers", value)
    out = {}
    for key, item in value.items():
        if not (key.isdecimal() and key.isascii() and len(key) <= 10 and str(int(key)) == key
                and int(key) < d):
            raise ValueError(f"{OWNER}: {field!r} has the key {brief(key)}; its keys are "
                             f"feature numbers in [0, {d}), written as \"0\", \"1\", ...")
        out[int(key)] = item
    return out


def _distinct_sorted(field: str, values: Any, minimum: int) -> list[Any]:
    """At least ``minimum`` values of one kind (numbers, strings or bools), strictly increasing."""
    kinds = {bool: "bool", str: "str", int: "number", float: "number"}
    if not isinstance(values, list) or len(values) < minimum \
            or not all(is_scalar(v) for v in values) \
            or len({kinds[type(v)] for v in values}) > 1 \
            or any(not a < b for a, b in pairwise(values)):
        raise _bad(field, f"a strictly increasing list of at least {minimum} categories, all "
                          "numbers, all strings or all bools", values)
    return values


def read_document(text: Any, *, allow_old_version: bool = False) -> Saved:
    """The saved Surrogate in ``text``, every field checked, the digest last."""
    document = _parse(text)
    version = _version(document, allow_old_version)
    data = _keys_of(document, version)
    model = document["model"]
    if not isinstance(model, str):
        raise _bad("model", "a string (the model's name)", model)
    positive = document["positive"]
    if positive is not None and not is_scalar(positive):
        raise _bad("positive", "null, a string, a number or a bool", positive)
    threshold = document["threshold"]
    if threshold is not None and not is_real(threshold):
        raise _bad("threshold", "null or a finite number", threshold)
    depth = _int_in("depth", document["depth"], 0, MAX_DEPTH)
    seed = _int_in("seed", document["seed"], 0, SEED_LIMIT - 1)
    classes = _classes(document["classes"], positive, data)
    encoder = _encoder(document["encoder"])
    if data != isinstance(encoder, ThresholdEncoder):
        raise ValueError(f"{OWNER}: 'encoder.kind' is {type(encoder).__name__!r}, but a "
                         + ("data-mode document holds a ThresholdEncoder." if data else
                            "document of the reconstructor holds a QuantileEncoder or a "
                            "BinaryEncoder."))
    names = document["feature_names_in"]
    if encoder.columns_ is None:
        if names is not None:
            raise _bad("feature_names_in", "null, as the encoder was fitted on an array "
                                           "('encoder.columns' is null)", names)
    elif names != [str(c) for c in encoder.columns_]:
        raise _bad("feature_names_in", "the names of the encoder's columns "
                                       f"{[str(c) for c in encoder.columns_]}", names)
    tree = _tree(document["tree"], model, seed, encoder, classes, version == FORMAT_VERSION)
    params, rows = None, None
    if not data:
        params = _params(tree.params)
        _nodes_of(tree, NodeDecision, "node")
        if version == FORMAT_VERSION and params.depth != depth:
            raise _bad("depth", f"the depth of the tree's lca.Params, {params.depth}", depth)
    elif version == FORMAT_VERSION:
        rows = _rows_field(document["rows"], tree, _record(tree.params, tree.n, depth))
    else:
        rows = _v2_rows(document["rows"], tree, depth)
    if rows is not None:
        encoder.n_rows_ = rows.count  # type: ignore[attr-defined]
        encoder.rows_digest_ = rows.digest  # type: ignore[attr-defined]
    queries = None
    # null: a document converted from format 1 or 2, which did not record them.
    if version == FORMAT_VERSION and document["queries"] is not None:
        queries = _int_in("queries", document["queries"], 0, (1 << 63) - 1)
    if version > 1:
        _check_digest(document)
    return Saved(version, model, positive, None if threshold is None else float(threshold),
                 depth, seed, classes, names, encoder, tree, params, queries, rows)


def _version(document: dict[str, Any], allow_old_version: bool) -> int:
    """The document's format version: this one, or an earlier one read on request."""
    version = document.get("version")
    if not is_int(version) or version not in (1, 2, FORMAT_VERSION):
        raise ValueError(f"{OWNER}: format version {show(version)} is not supported (this lca "
                         f"reads version {FORMAT_VERSION}, and versions 1 and 2 on request).")
    if version < FORMAT_VERSION and not allow_old_version:
        raise ValueError(
            f"{OWNER}: this is a format version {version} document, written by an earlier lca"
            + (" without an integrity digest, so an edit to it cannot be detected"
               if version == 1 else ", which did not record the tree's builder or its "
                                    "queries") + ". If you trust the file, read it with "
            "Surrogate.from_json(text, allow_old_version=True) (every field is still "
            "checked).")
    return version


def _check_digest(document: dict[str, Any]) -> None:
    """The document's ``"digest"`` is the digest of the rest of it."""
    given = document["digest"]
    if not (isinstance(given, str) and given.startswith(_DIGEST)
            and len(given) == len(_DIGEST) + 64
            and all(c in "0123456789abcdef" for c in given[len(_DIGEST):])):
        raise _bad("digest", f"{_DIGEST!r} and 64 lowercase hex digits", given)
    if given != digest(document):
        raise ValueError(f"{OWNER}: 'digest' does not match the document's content: it "
                         "was edited or corrupted after Surrogate.to_json wrote it, and "
                         "is refused rather than answered from.")


def _keys_of(document: dict[str, Any], version: int) -> bool:
    """Check the document's keys for its version; whether it is a data-mode document."""
    if version == FORMAT_VERSION:
        tree = document.get("tree")
        params = tree.get("params") if isinstance(tree, dict) else None
        data = isinstance(params, dict) and params.get("builder") == "rows"
        _keys("", document, _TOP_KEYS + (("rows",) if data else ()))
        return data
    top = tuple(key for key in _TOP_KEYS if key != "queries")
    if version == 1:
        _keys("", document, tuple(key for key in top if key != "digest"))
        return False
    data = "distribution" in document
    _keys("", document, top + (_V2_DATA_KEYS if data else ()))
    if data and document["distribution"] != "data":
        raise _bad("distribution", "'data' (written only by a data-mode surrogate)",
                   document["distribution"])
    return data


def _nodes_of(tree: ReconstructedTree, kind: type, name: str) -> None:
    """Every internal node of the tree is of the builder's own ``kind`` (JSON kind ``name``)."""
    for path, decision in tree.internal_nodes.items():
        if not isinstance(decision, kind):
            raise ValueError(f"{OWNER}: 'tree' node {path} is of kind "
                             f"{type(decision).__name__}; the nodes of this builder's tree "
                             f"are of kind {name!r}.")


def _record(value: Any, n: int, depth: int) -> dict[str, int]:
    """A rows builder's parameters, as its tree records them in ``"params"``."""
    record = _keys("tree.params", value, _RECORD_KEYS)
    if record["n"] != n:
        raise _bad("tree.params.n", f"the tree's n, {n}", record["n"])
    if record["depth"] != depth:
        raise _bad("tree.params.depth", f"the surrogate's 'depth', {depth} (a data-mode tree's "
                                        "depth cap)", record["depth"])
    from lca.models.rows import MAX_SHARED_ROWS
    return {"rows_per_node": _int_in("tree.params.rows_per_node", record["rows_per_node"], 1,
                                     MAX_ROWS_PER_NODE),
            "min_rows": _int_in("tree.params.min_rows", record["min_rows"], 1,
                                MAX_ROWS_PER_NODE),
            "shared_rows": _int_in("tree.params.shared_rows", record["shared_rows"], 0,
                                   MAX_SHARED_ROWS)}


def _rows_field(value: Any, tree: ReconstructedTree, record: dict[str, int]) -> SavedRows:
    """The ``"rows"`` of a data-mode document, checked against its tree and its parameters.

    A node decides on ``points = max(rows, rows_per_node)`` points (its fitted rows, then
    drawn ones): every split's and leaf's counts must say so.
    """
    value = _keys("rows", value, _ROWS_KEYS)
    given, count = _rows_identity(value)
    _nodes_of(tree, RowsSplit, "split")
    per_node = record["rows_per_node"]
    for path, split in tree.internal_nodes.items():
        assert isinstance(split, RowsSplit)
        if not 1 <= split.rows <= count or split.points != max(split.rows, per_node):
            raise ValueError(f"{OWNER}: 'tree' node {path} decided on {split.points} points of "
                             f"which {split.rows} fitted rows; a node decides on its fitted "
                             f"rows (1 to {count}) and as many drawn rows as bring them to "
                             f"rows_per_node={per_node}.")
    leaves = _leaf_rows(value["leaves"], tree, lambda path: count,
                        lambda path, rows: max(rows, per_node))
    return SavedRows(given, count, per_node, record["min_rows"], record["shared_rows"], leaves)


def _v2_rows(value: Any, tree: ReconstructedTree, depth: int) -> SavedRows:
    """The ``"rows"`` of a format 2 data-mode document (its parameters inside)."""
    value = _keys("rows", value, _V2_ROWS_KEYS, ("product_rows",))
    given, count = _rows_identity(value)
    per_node = _int_in("rows.rows_per_node", value["rows_per_node"], 1, MAX_ROWS_PER_NODE)
    min_rows = _int_in("rows.min_rows", value["min_rows"], 1, (1 << 63) - 1)
    # Written only when not 0 (the default), so 0 itself is an edit.
    product_rows = _int_in("rows.product_rows", value["product_rows"], 1, per_node - 1) \
        if "product_rows" in value else 0
    if tree.params.get("depth") != depth:
        raise ValueError(f"{OWNER}: 'tree.params.depth' is {tree.params.get('depth')}, but "
                         f"'depth' is {depth}; a data-mode tree's depth cap is the "
                         "surrogate's.")
    leaves = _leaf_rows(value["leaves"], tree, lambda path: min(tree.leaves[path].samples,
                                                                per_node - product_rows),
                        lambda path, rows: tree.leaves[path].samples)
    return SavedRows(given, count, per_node, min_rows, None, leaves)


def _rows_identity(value: dict[str, Any]) -> tuple[str, int]:
    """The fitted rows' digest and count."""
    given = value["digest"]
    if not (isinstance(given, str) and given.startswith(_DIGEST)
            and len(given) == len(_DIGEST) + 64
            and all(c in "0123456789abcdef" for c in given[len(_DIGEST):])):
        raise _bad("rows.digest", f"{_DIGEST!r} and 64 lowercase hex digits (the fitted "
                                  "rows' SHA-256)", given)
    return given, _int_in("rows.count", value["count"], 1, (1 << 63) - 1)


def _leaf_rows(leaves: Any, tree: ReconstructedTree, most: Any, points: Any
               ) -> dict[Any, LeafRows]:
    """Each leaf's ``[path, rows, agree]``, one per leaf in the tree's order: ``rows`` from 1
    to ``most(path)``, ``agree`` from 0 to ``rows``, the leaf's points ``points(path,
    rows)``."""
    paths = [path for path, decision in tree.walk() if decision is not None
             and path in tree.leaves]
    if not isinstance(leaves, list) or len(leaves) != len(paths):
        raise _bad("rows.leaves", f"a list of {len(paths)} [path, rows, agree] entries, one "
                                  "per leaf of 'tree' in its order", leaves)
    found: dict[Any, LeafRows] = {}
    for k, (entry, path) in enumerate(zip(leaves, paths, strict=True)):
        field = f"rows.leaves[{k}]"
        top = most(path)
        if not (isinstance(entry, list) and len(entry) == 3
                and entry[0] == [list(step) for step in path]
                and is_int(entry[1]) and is_int(entry[2])
                and 0 <= entry[2] <= entry[1] and 1 <= entry[1] <= top):
            raise _bad(field, f"[{[list(step) for step in path]}, rows, agree]: the leaf's "
                              f"path, its fitted rows (1 to {top}) and "
                              "how many of them agree (0 to rows)", entry)
        if tree.leaves[path].samples != points(path, entry[1]):
            raise ValueError(f"{OWNER}: 'tree' leaf {path} has {tree.leaves[path].samples} "
                             f"points, but its {entry[1]} fitted rows ({field}) make "
                             f"{points(path, entry[1])} with its drawn rows.")
        found[path] = LeafRows(entry[1], entry[2])
    return found


def _classes(value: Any, positive: Any, data: bool) -> np.ndarray:
    """The two labels ``[negative, positive]``: a binary model's classes, or ``[false, true]``;
    a data-mode multi-class tree's: the model's ``K > 2`` classes, with no positive class."""
    if data and isinstance(value, list) and len(value) > 2:
        if not (all(is_scalar(c) and type(c) is type(value[0]) for c in value)
                and len({json.dumps(c) for c in value}) == len(value)
                and all(-(1 << 63) <= c < 1 << 63 for c in value if is_int(c))):
            raise _bad("classes", "different labels of one type (strings, numbers within "
                                  "int64, or bools), one per class", value)
        if positive is not None:
            raise _bad("positive", f"null: a tree over the {len(value)} 'classes' answers a "
                                   "class, with no positive one", positive)
        return np.array(value)
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], dict):
        # One class c of a multi-class model against the rest: [{"not": c}, c].
        if not (list(value[0]) == ["not"] and is_scalar(value[1]) and value[0]["not"] == value[1]
                and type(value[0]["not"]) is type(value[1]) and positive == value[1]
                and type(positive) is type(value[1])):
            raise _bad("classes", "[{\"not\": c}, c] with c the 'positive' class", value)
        return np.array([Not(value[1]), value[1]], dtype=object)
    if not (isinstance(value, list) and len(value) == 2 and all(is_scalar(c) for c in value)
            and type(value[0]) is type(value[1]) and value[0] != value[1]
            and all(-(1 << 63) <= c < 1 << 63 for c in value if is_int(c))):
        raise _bad("classes", "two different labels of one type (strings, numbers within "
                              "int64, or bools): [negative, positive]", value)
    # A binary model's own labels (not [false, true]): the second is the positive class.
    if (value != [False, True] or type(value[0]) is not bool) \
            and positive is not None and positive != value[1]:
        raise ValueError(f"{OWNER}: 'classes' {brief(value)} must end with the positive "
                         f"class {brief(positive)} ('positive').")
    return np.array(value)


# -- reading: the encoder ----------------------------------------------------------------

def _encoder(state: Any) -> Questions:
    """The encoder :func:`encoder_state` described, each field checked first."""
    if not isinstance(state, dict):
        raise _bad("encoder", "an object (the fitted encoder's state)", state)
    kind = state.get("kind")
    if kind not in ("BinaryEncoder", "QuantileEncoder", "ThresholdEncoder"):
        raise _bad("encoder.kind", "'BinaryEncoder' or 'QuantileEncoder' (or "
                                   "'ThresholdEncoder' in a data-mode document)", kind)
    if kind == "ThresholdEncoder":
        # Written since format 3: the dtypes integer and bool columns go to the model in,
        # and the ordered features with an "is missing" question.
        _keys("encoder", state, _THRESHOLD_KEYS, ("dtypes", "missing"))
        encoder: Questions = _threshold(state)
        encoder.categorical_dtypes_ = _categorical_dtypes(state["categorical_dtypes"], encoder)
        return encoder
    _keys("encoder", state, _LAYOUT_KEYS + (
        (_QUANTILE_KEYS + ((_ORDERED_KEY,) if _ORDERED_KEY in state else ()))
        if kind == "QuantileEncoder" else ()),
        (_MISSING_KEY,) if kind == "QuantileEncoder" else ())
    if kind == "BinaryEncoder":
        bits = _int_in("encoder.bits", state["bits"], 1, 1)
    else:
        bits = _int_in("encoder.bits", state["bits"], 1, MAX_BITS)
    names, columns = _layout(state)
    d = len(names)
    if kind == "BinaryEncoder":
        encoder = BinaryEncoder.of_width(OWNER, d, names)
    else:
        encoder = _quantile(state, bits, names)
    encoder.columns_ = None if columns is None else tuple(columns)
    encoder.categorical_dtypes_ = _categorical_dtypes(state["categorical_dtypes"], encoder)
    return encoder


def _layout(state: dict[str, Any]) -> tuple[list[str], list[Any] | None]:
    """The feature names and column labels of an encoder's state, checked."""
    names = state["feature_names"]
    if not isinstance(names, list) or not 1 <= len(names) <= MAX_FEATURES:
        raise _bad("encoder.feature_names", f"a list of 1 to {MAX_FEATURES} strings", names)
    names = _strings("encoder.feature_names", names)
    d = len(names)
    columns = state["columns"]
    if columns is not None and not (
            isinstance(columns, list) and len(columns) == d and all(is_scalar(c) for c in columns)
            and len({(type(c) is str, c) for c in columns}) == d):
        raise _bad("encoder.columns", f"null or {d} different column labels (strings or "
                                      "numbers), one per feature", columns)
    return names, columns


def _one_home_each(cuts: dict[int, Any], categories: dict[int, Any], d: int) -> None:
    """Every one of the ``d`` features is ordered (has cuts) or categorical, not both."""
    both = sorted(set(cuts) & set(categories))
    neither = sorted(set(range(d)) - set(cuts) - set(categories))
    if both or neither:
        raise ValueError(f"{OWNER}: 'encoder.thresholds' and 'encoder.categories' must "
                         "each list some features, every feature in exactly one of them. "
                         f"Got feature {(both or neither)[0]} in "
                         f"{'both' if both else 'neither'}.")


def _threshold(state: dict[str, Any]) -> ThresholdEncoder:
    """A :class:`ThresholdEncoder` from its state: cuts and categories, each checked."""
    names, columns = _layout(state)
    d = len(names)
    limit = _int_in("encoder.cuts", state["cuts"], 1, MAX_CUTS)
    cuts = _by_feature("encoder.thresholds", state["thresholds"], d)
    categories = _by_feature("encoder.categories", state["categories"], d)
    _one_home_each(cuts, categories, d)
    encoder = ThresholdEncoder(cuts=limit, categorical=sorted(categories), feature_names=names)
    missing = state.get("missing", [])
    if not (isinstance(missing, list) and all(is_int(j) and j in cuts for j in missing)
            and all(a < b for a, b in pairwise(missing))):
        raise _bad("encoder.missing", "an increasing list of ordered features (here among "
                                      f"{sorted(cuts)})", missing)
    encoder.missing_ = frozenset(missing)
    encoder.cuts_ = {}
    for j in sorted(cuts):
        field = f"encoder.thresholds.{j}"
        given = cuts[j]
        if not isinstance(given, list) or len(given) > limit:
            raise _bad(field, f"a list of at most {limit} cuts ('encoder.cuts')", given)
        edges = _reals(field, given, len(given))
        if not np.all(edges[1:] > edges[:-1]):
            raise _bad(field, "strictly increasing cuts", edges.tolist())
        encoder.cuts_[j] = edges
    encoder.categories_ = {j: _category_array(_distinct_sorted(f"encoder.categories.{j}",
                                                               categories[j], 1))
                           for j in sorted(categories)}
    widths = [encoder.cuts_[j].size + (j in encoder.missing_) if j in encoder.cuts_
              else encoder.categories_[j].size for j in range(d)]
    encoder.offsets_ = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    if encoder.offsets_[-1] < 1:
        raise _bad("encoder.thresholds", "at least one cut or category in all", state["thresholds"])
    encoder.columns_ = None if columns is None else tuple(columns)
    encoder.feature_names = tuple(names)
    encoder.n_features_in_ = d
    encoder.model_dtypes_ = _model_dtypes(state.get("dtypes", {}), d)
    return encoder


def _model_dtypes(value: Any, d: int) -> dict[int, np.dtype]:
    """The integer and bool dtypes columns go to the model in, by feature."""
    out = {}
    for j, name in sorted(_by_feature("encoder.dtypes", value, d).items()):
        if name not in _MODEL_DTYPES:
            raise _bad(f"encoder.dtypes.{j}", "the name of an integer or bool dtype "
                                              f"{sorted(_MODEL_DTYPES)}", name)
        out[j] = np.dtype(name)
    return out


def _quantile(state: dict[str, Any], bits: int, names: list[str]) -> QuantileEncoder:
    d, bins = len(names), 1 << bits
    missing = _missing_bins(state.get(_MISSING_KEY), d, bins)
    table = _rows("encoder.table", state["table"], d, bins, missing)
    mass = _rows("encoder.bin_mass", state["bin_mass"], d, bins)
    for j, row in enumerate(mass):
        if row.min() < 0 or row.max() > 1 or abs(row.sum() - 1) > 1e-9:
            raise _bad(f"encoder.bin_mass[{j}]", "shares in [0, 1] that sum to 1",
                       row.tolist())
    cuts = _by_feature("encoder.thresholds", state["thresholds"], d)
    categories = _by_feature("encoder.categories", state["categories"], d)
    homes = _by_feature("encoder.home_bin", state["home_bin"], d)
    labels = _by_feature("encoder.category_labels", state["category_labels"], d)
    _one_home_each(cuts, categories, d)
    if set(homes) != set(categories):
        raise ValueError(f"{OWNER}: 'encoder.home_bin' must list exactly the categorical "
                         f"features {sorted(categories)}. Got {sorted(homes)}.")
    encoder = QuantileEncoder(bits=bits, feature_names=names)
    encoder.thresholds_ = _thresholds(cuts, table, bins, missing)
    encoder.categories_, encoder.home_bin_ = _levels(categories, homes, table, bins, missing)
    encoder.category_labels_ = _category_labels(labels, categories)
    ordered = state.get(_ORDERED_KEY, [])
    numbers = [j for j in sorted(categories)
               if encoder.categories_[j].dtype == np.float64]
    if not (isinstance(ordered, list) and all(is_int(j) and j in numbers for j in ordered)
            and all(a < b for a, b in pairwise(ordered))):
        raise _bad("encoder.ordered", "an increasing list of features whose categories are "
                                      f"numbers (here among {numbers})", ordered)
    numeric = sorted(set(cuts) | set(ordered))
    if not set(missing) <= set(numeric):  # an unordered categorical feature has no missing bin
        raise _bad(f"encoder.{_MISSING_KEY}", "an object keyed by real or ordered "
                   f"features (here among {numeric})", state[_MISSING_KEY])
    encoder.missing_bin_ = missing
    encoder.table_ = table
    encoder.bin_mass_ = mass
    encoder.categorical_ = frozenset(encoder.categories_)
    encoder.ordered_ = frozenset(ordered)
    # Refitting declares the unordered ones; the ordered have too few values for bins.
    encoder.categorical = sorted(encoder.categorical_ - encoder.ordered_)
    encoder.feature_names = tuple(names)
    encoder.n_features_in_ = d
    return encoder


def _missing_bins(value: Any, d: int, bins: int) -> dict[int, int]:
    """The first missing bin of each feature that has some (none when the key is absent)."""
    if value is None:
        return {}
    field = f"encoder.{_MISSING_KEY}"
    missing = _by_feature(field, value, d)
    if not missing:  # written only when some feature has missing bins
        raise _bad(field, "an object naming at least one feature", value)
    return {j: _int_in(f"{field}.{j}", missing[j], 1, bins - 1) for j in sorted(missing)}


def _rows(field: str, value: Any, d: int, bins: int,
          missing: dict[int, int] | None = None) -> np.ndarray:
    """The ``(d, bins)`` array of a list of ``d`` rows of ``bins`` reals; in the row of a
    feature with missing bins (``missing``: its first one) those are nulls, read as NaN."""
    if not isinstance(value, list) or len(value) != d:
        raise _bad(field, f"a list of {d} rows of {bins} numbers", value)
    rows = []
    for j, row in enumerate(value):
        k = (missing or {}).get(j)
        if k is None:
            rows.append(_reals(f"{field}[{j}]", row, bins))
            continue
        if not (isinstance(row, list) and len(row) == bins and all(is_real(v) for v in row[:k])
                and all(v is None for v in row[k:])):
            raise _bad(f"{field}[{j}]", f"{k} finite numbers, then {bins - k} nulls (its "
                                        f"missing bins, 'encoder.{_MISSING_KEY}.{j}')", row)
        rows.append(np.array(row[:k] + [np.nan] * (bins - k), dtype=np.float64))
    return np.array(rows)


def _thresholds(cuts: dict[int, Any], table: np.ndarray, bins: int,
                missing: dict[int, int]) -> dict[int, np.ndarray]:
    """The cuts of each real feature (one fewer than its bins for present values), checked
    against its bins' representatives."""
    out = {}
    for j in sorted(cuts):
        field = f"encoder.thresholds.{j}"
        present = missing.get(j, bins)
        edges = _reals(field, cuts[j], present - 1)
        if not np.all(edges[1:] > edges[:-1]):
            raise _bad(field, "strictly increasing cuts", edges.tolist())
        # Each bin's representative lies in its bin: cuts[k-1] <= table[k] < cuts[k].
        inside = (table[j][1:present] >= edges) & (table[j][:present - 1] < edges)
        if not inside.all():
            k = int(np.flatnonzero(~inside)[0])
            raise ValueError(f"{OWNER}: 'encoder.table[{j}]' must hold a value inside each "
                             f"bin of 'encoder.thresholds.{j}'; the cut {edges[k]!r} does not "
                             f"separate {table[j][k]!r} and {table[j][k + 1]!r}.")
        out[j] = edges
    return out


def _levels(categories: dict[int, Any], homes: dict[int, Any], table: np.ndarray,
            bins: int, missing: dict[int, int]) -> tuple[dict[int, np.ndarray],
                                                         dict[int, np.ndarray]]:
    """The categories and home bins of each categorical feature, checked against its bins
    (those for present values: below its missing bins, if any)."""
    values_of, home_of = {}, {}
    for j in sorted(categories):
        values = _distinct_sorted(f"encoder.categories.{j}", categories[j], 1)
        count = len(values)
        present = missing.get(j, bins)
        chosen = table[j][:present]
        if not (np.all(chosen == np.round(chosen)) and chosen.min() >= 0
                and chosen.max() < count and np.all(chosen[1:] >= chosen[:-1])):
            raise _bad(f"encoder.table[{j}]", f"category numbers in [0, {count}) in "
                       "increasing order", chosen.tolist())
        home = homes[j]
        if not (isinstance(home, list) and len(home) == count
                and all(is_int(h) and 0 <= h < present for h in home)
                and all(a <= b for a, b in pairwise(home))):
            raise _bad(f"encoder.home_bin.{j}", f"{count} bins in [0, {present}) in increasing "
                       "order, one per category", home)
        first = {int(c): k for k, c in reversed(list(enumerate(chosen)))}
        for c, k in first.items():
            if home[c] != k:
                raise ValueError(f"{OWNER}: 'encoder.home_bin.{j}' must send category "
                                 f"{brief(values[c])} to its first bin {k}. Got {home[c]}.")
        values_of[j] = _category_array(values)
        home_of[j] = np.array(home, dtype=np.intp)
    return values_of, home_of


def _category_labels(labels: dict[int, Any], categories: dict[int, Any]) -> dict[int, dict]:
    """The ``{category: label}`` of each categorical feature given names."""
    out = {}
    for j in sorted(labels):
        field = f"encoder.category_labels.{j}"
        pairs = labels[j]
        if j not in categories or not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and is_scalar(p[0]) and isinstance(p[1], str)
                for p in pairs):
            raise _bad(field, "a list of [category, label] pairs of a categorical feature",
                       pairs)
        mapping = {category_key(code): label for code, label in pairs}
        if len(mapping) != len(pairs):
            raise _bad(field, "pairs of different categories", pairs)
        out[j] = mapping
    return out


def _category_array(values: list[Any]) -> np.ndarray:
    # Numbers were fitted as float64 codes; anything else (strings) as objects.
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.float64)
    return np.array(values, dtype=object)


def _categorical_dtypes(value: Any, encoder: Questions) -> dict[int, Any]:
    """The pandas categorical dtypes of the fitted DataFrame's columns, checked."""
    specs = _by_feature("encoder.categorical_dtypes", value, encoder.n_features_in_)
    if specs and encoder.columns_ is None:
        raise _bad("encoder.categorical_dtypes", "empty, as the encoder was fitted on an "
                                                 "array ('encoder.columns' is null)", value)
    checked = {}
    for j, spec in sorted(specs.items()):
        field = f"encoder.categorical_dtypes.{j}"
        spec = _keys(field, spec, ("categories", "ordered"))
        known = spec["categories"]
        if not (isinstance(known, list) and all(is_scalar(c) for c in known)
                and len({category_key(c) for c in known}) == len(known)):
            raise _bad(f"{field}.categories", "a list of different categories", known)
        if not isinstance(spec["ordered"], bool):
            raise _bad(f"{field}.ordered", "true or false", spec["ordered"])
        # Decoded categories are cast to this dtype: one it lacks would become NaN.
        keys = {category_key(c) for c in known}
        lacking = [plain(c) for c in encoder.categories_.get(j, ()) if category_key(c) not in keys]
        if lacking:
            raise ValueError(f"{OWNER}: {field + '.categories'!r} lacks the category "
                             f"{brief(lacking[0])} of 'encoder.categories.{j}'.")
        checked[j] = spec
    if not checked:
        return {}
    from lca.models._data import pandas

    pd = pandas("restoring a pandas categorical column")
    return {j: pd.CategoricalDtype(spec["categories"], ordered=spec["ordered"])
            for j, spec in checked.items()}


# -- reading: the tree ---------------------------------------------------------------------

def _tree(value: Any, model: str, seed: int, encoder: Questions, classes: np.ndarray,
          exact_text: bool) -> ReconstructedTree:
    """The saved tree, checked whole and against the document and its encoder. Its
    conditions are the encoder's words for its splits: checked (``exact_text``), or, in a
    document of an earlier format whose words have since changed, written anew."""
    try:
        tree = ReconstructedTree.from_json(json.dumps(value))
    except ValueError as error:
        raise ValueError(f"{OWNER}: 'tree' is not an exported tree: {error}") from None
    if not tree.complete:  # to_json writes whole trees; tree_ is whole or None
        raise ValueError(f"{OWNER}: the saved tree is incomplete (unexplored at "
                         f"{tree.unexplored[0]}); Surrogate.to_json writes whole trees.")
    if tree.seed != seed:
        raise ValueError(f"{OWNER}: 'tree.seed' is {tree.seed}, but 'seed' is {seed}; the "
                         "tree of a saved Surrogate is T_seed of its own seed.")
    if tree.oracle != model:
        raise ValueError(f"{OWNER}: 'tree.oracle' is {brief(tree.oracle)}, but 'model' is "
                         f"{brief(model)}.")
    if tree.n != encoder.n_bits:
        raise ValueError(f"{OWNER}: 'tree.n' is {tree.n}, but the encoder makes "
                         f"{encoder.n_bits} bits " + (
                             f"({encoder.n_features_in_} features of {encoder.bits})."
                             if isinstance(encoder, Encoder) else
                             "(one per threshold and category question)."))
    features = {}
    conditions = {}
    for path, decision in tree.decisions.items():
        if not isinstance(decision, Split):
            continue
        variable = decision.variable
        features[variable] = encoder.feature_of(variable)
        expected = (encoder.describe(variable, -1, path), encoder.describe(variable, 1, path))
        conditions[path] = expected
        if exact_text and tree.conditions[path] != expected:
            raise ValueError(f"{OWNER}: 'tree' node {path} has the conditions "
                             f"{brief(list(tree.conditions[path]))}, but its encoder reads "
                             f"x{variable} as {brief(list(expected))}.")
    if dict(tree.features) != features:
        raise ValueError(f"{OWNER}: 'tree.features' must name each split variable's "
                         f"feature as the encoder does: {brief(features)}. Got "
                         f"{brief(dict(tree.features))} instead.")
    values = classes.tolist()
    if tree.class_names is None:
        raise ValueError(f"{OWNER}: 'tree.class_names' is missing; a saved Surrogate's tree "
                         "names its two answers.")
    if not (values == [False, True] and classes.dtype == np.bool_) \
            and tree.class_names != tuple(str(value) for value in values):
        raise ValueError(f"{OWNER}: 'tree.class_names' {brief(list(tree.class_names))} "
                         f"must be the 'classes' {brief(values)} as text.")
    if exact_text:
        return tree
    return dataclasses.replace(tree, conditions={**tree.conditions, **conditions})


def _params(fields: Mapping[str, Any]) -> Params:
    """The tree's ``lca.Params``, which must write back exactly as saved."""
    given = dict(fields)
    try:
        if isinstance(given.get("constants"), dict):
            given["constants"] = TheoryConstants(**given["constants"])
        params = Params(**given)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{OWNER}: 'tree.params' are not lca.Params: {error}") from None
    if dataclasses.asdict(params) != dict(fields):
        raise ValueError(f"{OWNER}: 'tree.params' are not as lca.Params writes them "
                         f"(read back: {brief(dataclasses.asdict(params))}).")
    return params

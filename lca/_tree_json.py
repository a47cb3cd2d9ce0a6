"""Reading an exported tree's JSON back, checked node by node.

:meth:`lca.export.ReconstructedTree.from_json` builds nothing from a document
this module has not checked entirely, so a tree read back answers exactly as
the one written, or not at all: a label edited to 5, a duplicated entry, a
variable past ``n``, a missing key or a key given twice is a ``ValueError``
naming the node, never a tree that answers differently.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any

from lca._json_check import keys, load
from lca._validate import MAX_N, SEED_LIMIT, is_int, show
from lca.decisions import ClassLeafDecision, LeafDecision, NodeDecision, RowsSplit, Split, TreeNode
from lca.derive import Path, check_path

__all__ = ["FORMAT", "FORMAT_VERSION", "read_document"]

FORMAT = "lca.ReconstructedTree"
FORMAT_VERSION = 1

_OWNER = "ReconstructedTree.from_json"
_KINDS: dict[str, type] = {"node": NodeDecision, "split": RowsSplit, "leaf": LeafDecision,
                           "class": ClassLeafDecision}
_TOP_KEYS = ("format", "version", "seed", "n", "oracle", "params", "nodes")
_READABLE_KEYS = ("features", "class_names", "uniform_mass")


def read_document(text: Any) -> dict[str, Any]:
    """The fields of a :class:`~lca.export.ReconstructedTree` from its JSON, all checked."""
    document = _parse(text)
    seed, n, longest = _header(document)
    decisions, conditions = _entries(document["nodes"], n, longest)
    _one_tree(decisions)
    readable = _readable(document, n, _class_leaves(decisions))
    _class_labels(decisions, readable["class_names"])
    return dict(seed=seed, n=n, oracle=document["oracle"], params=dict(document["params"]),
                decisions=decisions, conditions=conditions, **readable)


# A tree's JSON nests 5 levels (a node's path step inside 'nodes'); anything deeper is
# not one, and is refused before any recursive serialization could run out of stack.
_MAX_NESTING = 8


def _parse(text: Any) -> dict[str, Any]:
    """The document, a JSON object of the right format and version."""
    document = load(text, _OWNER, "a tree", _MAX_NESTING)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{_OWNER}: not an exported lca tree (expected "
                         f"\"format\": {FORMAT!r}).")
    version = document.get("version")
    if type(version) is not int or version != FORMAT_VERSION:
        raise ValueError(f"{_OWNER}: format version {show(version)} is not supported (this "
                         f"lca reads version {FORMAT_VERSION}).")
    return _keys("the document", document, _TOP_KEYS, _READABLE_KEYS)


def _keys(where: str, value: Any, required: tuple[str, ...],
          optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """``value`` if it is an object with every required key and no other."""
    return dict(keys(_OWNER, where, value, required, optional))


def _header(document: dict[str, Any]) -> tuple[int, int, int]:
    """``seed``, ``n`` and the longest path ``min(depth, n)``, checked."""
    seed, n = document["seed"], document["n"]
    for name, value, low, high, text in (("seed", seed, 0, SEED_LIMIT - 1, "2**64)"),
                                         ("n", n, 1, MAX_N, "2**31 - 1]")):
        if not is_int(value) or not low <= value <= high:
            raise ValueError(f"{_OWNER}: {name!r} must be an int in the range [{low}, {text}."
                             f" Got {show(value)} instead.")
    if not isinstance(document["oracle"], str):
        raise ValueError(f"{_OWNER}: 'oracle' must be a string (the oracle's name). "
                         f"Got {show(document['oracle'])} instead.")
    params = document["params"]
    if not isinstance(params, dict) or not is_int(params.get("n")) or params["n"] != n \
            or not is_int(params.get("depth")) or params["depth"] < 0:
        raise ValueError(f"{_OWNER}: 'params' must be an object of lca.Params fields "
                         f"with 'n' equal to the tree's n={n} and an int 'depth' >= 0. "
                         f"Got {show(params)} instead.")
    return int(seed), int(n), min(int(params["depth"]), int(n))


def _readable(document: dict[str, Any], n: int, multiclass: bool) -> dict[str, Any]:
    """The optional display fields: feature names by variable, the labels' class names
    (one per class for a tree of class leaves), whether leaves have a share of the inputs."""
    features = document.get("features", {})
    if not isinstance(features, dict) or not all(
            _variable_key(key, n) and isinstance(name, str) for key, name in features.items()):
        raise ValueError(f"{_OWNER}: 'features' must map variable numbers in [0, {n}), written "
                         f"as to_json writes them (\"7\", not \"07\"), to names. "
                         f"Got {show(features)} instead.")
    names = document.get("class_names")
    if multiclass and not (isinstance(names, list) and len(names) > 2
                           and all(isinstance(name, str) for name in names)):
        raise ValueError(f"{_OWNER}: 'class_names' must be one string per class (at least "
                         "3) in a tree whose leaves answer a class ('kind': 'class'). "
                         f"Got {show(names)} instead.")
    if not multiclass and names is not None and not (
            isinstance(names, list) and len(names) == 2
            and all(isinstance(name, str) for name in names)):
        raise ValueError(f"{_OWNER}: 'class_names' must be two strings [minus, plus]. "
                         f"Got {show(names)} instead.")
    uniform = document.get("uniform_mass", True)
    # Written only as false (true is the default): anything else is an edit.
    if uniform is not False and "uniform_mass" in document:
        raise ValueError(f"{_OWNER}: 'uniform_mass' is written only as false. "
                         f"Got {show(uniform)} instead.")
    return {"features": {int(key): name for key, name in features.items()},
            "class_names": None if names is None else tuple(names), "uniform_mass": uniform}


def _class_leaves(decisions: dict[Path, TreeNode]) -> bool:
    """Are the leaves class leaves (a multi-class tree)? All or none of them."""
    kinds = {isinstance(d, ClassLeafDecision) for d in decisions.values()
             if isinstance(d, LeafDecision)}
    if len(kinds) > 1:
        raise ValueError(f"{_OWNER}: the leaves mix kinds 'leaf' (labels -1/+1) and 'class' "
                         "(a class index); a tree's leaves are all of one kind.")
    return kinds == {True}


def _class_labels(decisions: dict[Path, TreeNode], names: tuple[str, ...] | None) -> None:
    """Every class leaf names one of the tree's classes."""
    for path, decision in decisions.items():
        if isinstance(decision, ClassLeafDecision):
            assert names is not None, "_readable requires class names for class leaves"
            if not 0 <= decision.label < len(names):
                raise ValueError(f"{_OWNER}: node {path}: a class leaf's label must be a class "
                                 f"index in [0, {len(names)}). Got {show(decision.label)} "
                                 "instead.")


def _variable_key(key: str, n: int) -> bool:
    """Is ``key`` a variable in ``[0, n)`` in plain decimal? Not "07" (so that "7" and "07"
    cannot name one variable twice), not other scripts' digits (``isdigit`` takes "７" and
    "²"), and short enough for ``int`` to read."""
    return key.isascii() and key.isdigit() and len(key) <= len(str(n)) \
        and str(int(key)) == key and int(key) < n


def _entries(entries: Any, n: int, longest: int
             ) -> tuple[dict[Path, TreeNode], dict[Path, tuple[str, str]]]:
    """Every entry's path, decision and conditions, each checked on its own."""
    if not isinstance(entries, list):
        raise ValueError(f"{_OWNER}: 'nodes' must be a list. Got {show(entries)} instead.")
    decisions: dict[Path, TreeNode] = {}
    conditions: dict[Path, tuple[str, str]] = {}
    for index, entry in enumerate(entries):
        where = f"entry {index} of 'nodes'"
        entry = _keys(where, entry, ("path", "kind", "decision"), ("conditions",))
        path = _entry_path(entry["path"], where, n, longest)
        where = f"node {path} ({where})"
        if path in decisions:
            raise ValueError(f"{_OWNER}: {where} is listed twice")
        kind = _KINDS.get(entry["kind"]) if isinstance(entry["kind"], str) else None
        if kind is None:
            raise ValueError(f"{_OWNER}: {where}: unknown node kind {show(entry['kind'])}; "
                             "expected 'node', 'split', 'leaf' or 'class'.")
        decision = _decision(where, kind, entry["decision"])
        _counts(where, decision, n)
        if isinstance(decision, Split):
            conditions[path] = _node_conditions(where, entry, decision, path, n, longest)
        else:
            _check_leaf(where, entry, decision)
        decisions[path] = decision
    return decisions, conditions


def _counts(where: str, decision: TreeNode, n: int) -> None:
    """A decision's counts are counts: none negative, each within what it counts among (the
    disagreements among the pairs, the agreements and votes among the disagreements, a
    leaf's sample sum among its samples), a runner-up another variable."""
    if isinstance(decision, NodeDecision):
        bounds = [("samples", decision.samples, 0, None),
                  ("disagreements", decision.disagreements, 0, decision.samples),
                  ("agreements", decision.agreements, 0, decision.disagreements),
                  ("votes", decision.votes, 0, decision.disagreements),
                  ("margin", decision.margin, 0, None),
                  ("runner_up", decision.runner_up, 0, n - 1)]
    elif isinstance(decision, RowsSplit):
        bounds = [("rows", decision.rows, 1, None), ("points", decision.points,
                                                     decision.rows, None)]
    elif isinstance(decision, LeafDecision) and not isinstance(decision, ClassLeafDecision):
        bounds = [("samples", decision.samples, 0, None),
                  ("total", decision.total, -decision.samples, decision.samples)]
    else:
        return
    for name, value, low, high in bounds:
        if value is not None and not (low <= value and (high is None or value <= high)):
            raise ValueError(f"{_OWNER}: {where}: the decision's {name!r} must be in "
                             f"[{low}, {'inf' if high is None else high}]. Got {show(value)} "
                             "instead.")
    if isinstance(decision, NodeDecision) and decision.runner_up == decision.variable:
        raise ValueError(f"{_OWNER}: {where}: the runner-up must be another variable than "
                         f"the chosen one, {decision.variable}.")
    if isinstance(decision, LeafDecision) and (decision.samples + decision.total) % 2:
        raise ValueError(f"{_OWNER}: {where}: a leaf's 'total' (the sum of its samples' -1/+1 "
                         f"values) has the parity of its {decision.samples} samples. Got "
                         f"{show(decision.total)} instead.")


def _entry_path(raw: Any, where: str, n: int, longest: int) -> Path:
    """An entry's path, its JSON lists read as tuples, checked as every node path is."""
    if isinstance(raw, list) and all(isinstance(step, list) for step in raw):
        raw = tuple(tuple(step) for step in raw)
    try:
        return check_path(raw, n, f"{_OWNER}: {where}", max_length=longest)
    except (TypeError, ValueError) as error:  # wrong content of 'text': a ValueError
        raise ValueError(str(error)) from None


def _node_conditions(where: str, entry: dict[str, Any], decision: Split, path: Path,
                     n: int, longest: int) -> tuple[str, str]:
    """An internal node's two conditions, after checking its variable and depth."""
    if not 0 <= decision.variable < n or decision.variable in dict(path):
        raise ValueError(f"{_OWNER}: {where}: the variable must be in [0, {n}) and "
                         f"not on the node's path. Got {show(decision.variable)} "
                         "instead.")
    if len(path) == longest:
        raise ValueError(f"{_OWNER}: {where}: a node at depth {longest} = min(depth,"
                         " n) must be a leaf.")
    pair = entry.get("conditions")
    if not (isinstance(pair, list) and len(pair) == 2
            and all(isinstance(c, str) for c in pair)):
        raise ValueError(f"{_OWNER}: {where}: 'conditions' must be a list of two "
                         f"strings. Got {show(pair)} instead.")
    return pair[0], pair[1]


def _check_leaf(where: str, entry: dict[str, Any], decision: LeafDecision) -> None:
    """A leaf's label is -1 or +1 (a class leaf's: a class index, checked against the class
    names later, and its points of that class within its points) and it has no conditions."""
    if isinstance(decision, ClassLeafDecision):
        if not 0 <= decision.total <= decision.samples:
            raise ValueError(f"{_OWNER}: {where}: a class leaf's 'total' (its points of its "
                             f"class) must be in [0, samples={decision.samples}]. Got "
                             f"{show(decision.total)} instead.")
    elif decision.label not in (-1, 1):
        raise ValueError(f"{_OWNER}: {where}: a leaf's label must be -1 or +1. "
                         f"Got {show(decision.label)} instead.")
    if "conditions" in entry:
        raise ValueError(f"{_OWNER}: {where}: a leaf has no 'conditions'.")


def _one_tree(decisions: dict[Path, TreeNode]) -> None:
    """Every entry but the root hangs below a node that splits on its last variable."""
    for path in decisions:
        parent = decisions.get(path[:-1]) if path else None
        if path and not (isinstance(parent, Split)
                         and parent.variable == path[-1][0]):
            raise ValueError(f"{_OWNER}: node {path} is not in the tree: its parent "
                             f"{path[:-1]} is not listed as a node splitting on "
                             f"x{path[-1][0]}.")


@functools.cache
def _field_types(kind: type) -> dict[str, tuple[type, ...]]:
    """JSON types each field of a decision class may hold, from its annotations."""
    allowed: dict[str, tuple[type, ...]] = {}
    for name, hint in typing.get_type_hints(kind).items():
        members = typing.get_args(hint) if typing.get_origin(hint) in (
            types.UnionType, typing.Union) else (hint,)
        allowed[name] = tuple(typing.get_origin(m) or m for m in members)
    return allowed


def _of_type(value: Any, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool):  # bool is an int to Python, not to a decision
        return bool in allowed
    if isinstance(value, list):
        return tuple in allowed or list in allowed
    return isinstance(value, allowed)


def _decision(where: str, kind: type, fields: Any) -> TreeNode:
    """The decision of class ``kind`` from its fields, each of its annotated type."""
    allowed = _field_types(kind)
    required = tuple(f.name for f in dataclasses.fields(kind)
                     if f.default is dataclasses.MISSING)
    fields = _keys(f"{where}: 'decision'", fields, required,
                   tuple(name for name in allowed if name not in required))
    for name, value in fields.items():
        if not _of_type(value, allowed[name]):
            expected = " or ".join("null" if t is type(None) else t.__name__
                                   for t in allowed[name])
            raise ValueError(f"{_OWNER}: {where}: the decision's {name!r} must be {expected}."
                             f" Got {show(value)} instead.")
    return kind(**{name: _tuples(value) for name, value in fields.items()})


def _tuples(value: Any) -> Any:
    """JSON lists back to the tuples a decision field held."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value

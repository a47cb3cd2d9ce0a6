"""A second implementation of docs/randomness.md §10 (data-mode nodes), written from the text.

Plain Python loops over lists and ``fractions.Fraction``: no numpy, no import of :mod:`lca`.
Words and node keys come from ``tests/spec_reference.py`` (itself written from §2-§3, its own
Philox4x64-10). Rows are lists of cells (the known answers' rows: numbers, bools, strings);
the model is a function of one row in its fitted form (ordered cells as floats, categorical
ones as their values) returning a class index in ``[0, classes)``. A yes/no tree is the tree
of two classes, class ``1`` for ``+1`` and class ``0`` for ``-1`` (§10, "Labels").

Decisions are returned in the form ``tests/data/rows_answers.json`` stores them (``kind``,
``decision``, ``rows``) so that a test compares them whole. ``tests/test_rows_reference.py``
checks every stored case; ``tests/test_rows_mutants.py`` checks that the stored cases tell
this reference from small rule changes of it.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from dataclasses import dataclass
from fractions import Fraction

from spec_reference import Stream, node_key

TWO32 = 1 << 32
RECHECK = 1  # §10 "Asking the model": every node but the root asks its parent's first row again


# -- rows and questions (§10 "Rows", "Questions") -----------------------------------------------

def _is_number(cell) -> bool:
    return isinstance(cell, (bool, int, float))


def missing(cell) -> bool:
    """A missing cell (stored as ``null``, read as NaN)."""
    return cell is None or (isinstance(cell, float) and math.isnan(cell))


def read(cell, ordered: bool):
    """A cell in its fitted form: an ordered cell as a double (bools 0.0 / 1.0, a missing one
    NaN), a categorical number or bool as a double, any other categorical cell as itself."""
    if ordered and missing(cell):
        return math.nan
    if ordered or _is_number(cell):
        return float(cell)
    return cell


def mid(a: float, b: float) -> float:
    """§10 ``mid``: the double halfway, ``b`` when it is not above ``a``."""
    middle = a + (b - a) / 2 if not math.isinf(b - a) else a / 2 + b / 2
    return middle if middle > a else b


def ordered_cuts(column: list[float], cuts: int) -> list[float]:
    distinct = sorted(set(column))
    if len(distinct) - 1 <= cuts:
        chosen = list(range(1, len(distinct)))
    else:
        values, m = sorted(column), len(column)
        found = {distinct.index(values[k * m // (cuts + 1)]) for k in range(1, cuts + 1)}
        chosen = sorted(i for i in found if i > 0)
    return [mid(distinct[i - 1], distinct[i]) for i in chosen]


class Questions:
    """The variables of §10 over fitted ``rows`` (fitted form); ``categorical`` names columns."""

    def __init__(self, rows: list[list], categorical: set[int], cuts: int) -> None:
        self.d = len(rows[0])
        self.ordered = [j not in categorical for j in range(self.d)]
        self.columns = [[row[j] for row in rows] for j in range(self.d)]
        # an ordered feature's present values, sorted, and how many are missing
        self.sorted = [sorted(x for x in column if not missing(x)) for column in self.columns]
        self.absent = [sum(1 for x in column if missing(x)) for column in self.columns]
        # per feature: its cuts (ordered) or its sorted categories (categorical)
        self.values = [ordered_cuts(present, cuts) if ordered else sorted(set(column))
                       for column, present, ordered in
                       zip(self.columns, self.sorted, self.ordered, strict=True)]
        # an ordered feature with some, not all, values missing also asks "x is missing"
        self.asks_missing = [ordered and 0 < absent < len(rows) for ordered, absent in
                             zip(self.ordered, self.absent, strict=True)]
        self.owner: list[tuple[int, int]] = []  # variable -> (feature, index within it)
        for j, values in enumerate(self.values):
            self.owner += [(j, t) for t in range(len(values) + self.asks_missing[j])]
        self.n = len(self.owner)

    def is_cut(self, variable: int) -> bool:
        j, t = self.owner[variable]
        return self.ordered[j] and t < len(self.values[j])

    def value(self, row: list, variable: int) -> int:
        """A row's value (fitted form) of a variable: +1 when its question holds."""
        j, t = self.owner[variable]
        if self.ordered[j]:
            if t == len(self.values[j]):  # "x is missing"
                return 1 if missing(row[j]) else -1
            return 1 if not missing(row[j]) and row[j] >= self.values[j][t] else -1
        return 1 if row[j] == self.values[j][t] else -1

    def cut(self, variable: int) -> float:
        j, t = self.owner[variable]
        return self.values[j][t]

    def draw(self, j: int, path, u: int):
        """Feature ``j``'s value drawn with ``u`` (32 bits) among those path ``path`` allows."""
        steps = [(self.owner[v][1], b) for v, b in path if self.owner[v][0] == j]
        if self.ordered[j]:
            values = self.values[j]
            cuts = [(t, b) for t, b in steps if t < len(values)]
            asked = [b for t, b in steps if t == len(values)]
            if asked == [1]:
                return math.nan  # the region requires a missing value
            lo = max((values[t] for t, b in cuts if b == 1), default=-math.inf)
            hi = min((values[t] for t, b in cuts if b == -1), default=math.inf)
            s = self.sorted[j]
            a = sum(1 for x in s if x < lo)
            b = sum(1 for x in s if x < hi)
            # missing values are allowed unless "is missing" is -1 or a cut is +1 on the path
            e = 0 if asked == [-1] or any(b == 1 for _, b in cuts) else self.absent[j]
            slot = u * (b - a + e) // TWO32
            return s[a + slot] if slot < b - a else math.nan
        categories = self.values[j]
        named = [t for t, b in steps if b == 1]
        allowed = named if named else [t for t in range(len(categories)) if (t, -1) not in steps]
        slots = []
        for t in sorted(allowed):
            slots += [categories[t]] * self.columns[j].count(categories[t])
        return slots[u * len(slots) // TWO32]


def rows_digest(rows: list[list], categorical: set[int]) -> str:
    """§10's ``rows_digest`` of the fitted rows (cells as given)."""
    def frame(data: bytes) -> bytes:
        return struct.pack("<Q", len(data)) + data

    data = frame(b"lca/rows/v1") + struct.pack("<QQ", len(rows), len(rows[0]))
    for j in range(len(rows[0])):
        if j in categorical:
            data += b"c" + b"".join(
                frame(json.dumps(read(row[j], False), ensure_ascii=True).encode("ascii"))
                for row in rows)
        else:
            data += b"f" + b"".join(
                struct.pack("<Q", 0x7FF8000000000000) if missing(row[j]) else
                struct.pack("<d", float(row[j]) + 0.0) for row in rows)
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- nodes (§10 "Region and order" ... "Leaf") ---------------------------------------------------

@dataclass
class Node:
    """What a node holds: its region (rank order), fitted rows, drawn rows and their classes."""

    path: tuple
    region: list[int]
    fitted: list[int]  # row indices, rank order
    points: list[list]  # fitted rows then drawn rows (fitted form)
    classes: list[int]  # the class of every point
    r: int
    t: int

    def weight(self, k: int) -> int:
        """Point ``k``'s weight (§10 "Weights"): a fitted row ``t`` (1 when none is drawn), a
        drawn row ``min(r, t)``."""
        if not self.t:
            return 1
        return self.t if k < self.r else min(self.r, self.t)

    def weights(self, count: int) -> list[int]:
        """``W_c`` of every class."""
        out = [0] * count
        for k, c in enumerate(self.classes):
            out[c] += self.weight(k)
        return out


class Reference:
    """The data-mode tree of §10 over ``rows``, node by node.

    ``model(row)`` is a class index in ``[0, classes)``; ``yes_no`` makes leaves
    ``LeafDecision`` (class 1 is ``+1``) rather than ``ClassLeafDecision``."""

    def __init__(self, rows: list[list], categorical: set[int], model, classes: int, *,
                 seed: int, depth: int, rows_per_node: int, shared_rows: int, min_rows: int,
                 cuts: int, yes_no: bool) -> None:
        self.categorical = set(categorical)
        self.rows = [self.fitted_form(row) for row in rows]
        self.model, self.classes, self.yes_no = model, classes, yes_no
        self.seed, self.depth, self.min_rows = seed, depth, min_rows
        self.per_node, self.shared = rows_per_node, shared_rows
        self.q = Questions(self.rows, self.categorical, cuts)
        keys = Stream(node_key(seed, "surrogate-rows", ()), 0)
        self.order = sorted(range(len(rows)), key=lambda i: (keys.word(i), i))
        self.rank = {row: place for place, row in enumerate(self.order)}
        self.labels: dict[int, int] = {}  # fitted row -> class, asked once
        self.nodes: dict[tuple, Node] = {}

    def fitted_form(self, row: list) -> list:
        return [read(cell, j not in self.categorical) for j, cell in enumerate(row)]

    # -- a node's rows ----------------------------------------------------------------------

    def in_region(self, row: list, path) -> bool:
        return all(self.q.value(row, v) == b for v, b in path)

    def take(self, region: list[int]) -> int:
        """``r``: the rows of a region (rank order) a node takes."""
        s = sum(1 for i in region if self.rank[i] < self.shared)
        return max(s, min(self.per_node, len(region)))

    def drawn(self, path, fitted: list[int], t: int) -> list[list]:
        key = node_key(self.seed, "surrogate-topup", path)
        coins, bases = Stream(key, 0), Stream(key, 1)
        r, d = len(fitted), self.q.d
        out = []
        for k in range(t):
            base = self.rows[fitted[(bases.word(k) >> 32) * r // TWO32]]
            row = []
            for j in range(d):
                w = coins.word(k * d + j)
                row.append(base[j] if w & 1 == 0 else self.q.draw(j, path, w >> 32))
            out.append(row)
        return out

    def node(self, path) -> Node:
        """Node ``path``'s rows (computed once: a node is a function of its path)."""
        path = tuple(tuple(step) for step in path)
        if path not in self.nodes:
            self.nodes[path] = self.rows_of(path)
        return self.nodes[path]

    def rows_of(self, path: tuple) -> Node:
        region = [i for i in self.order if self.in_region(self.rows[i], path)]
        r = self.take(region)
        fitted = region[:r]
        t = max(self.per_node - r, 0)
        drawn = self.drawn(path, fitted, t)
        classes = [self.label(i) for i in fitted] + [self.model(row) for row in drawn]
        return Node(path, region, fitted, [self.rows[i] for i in fitted] + drawn, classes, r, t)

    def label(self, i: int) -> int:
        if i not in self.labels:
            self.labels[i] = self.model(self.rows[i])
        return self.labels[i]

    # -- the split ----------------------------------------------------------------------------

    def candidates(self, node: Node) -> list[int]:
        return [v for v in range(self.q.n)
                if len({self.q.value(self.rows[i], v) for i in node.fitted}) == 2]

    def gain(self, node: Node, v: int) -> tuple[int, int]:
        """``(A_v, B_v)``."""
        sides = {-1: [0] * self.classes, 1: [0] * self.classes}
        for k, (point, c) in enumerate(zip(node.points, node.classes, strict=True)):
            sides[self.q.value(point, v)][c] += node.weight(k)
        minus, plus = sides[-1], sides[1]
        n_minus, n_plus = sum(minus), sum(plus)
        a = sum(x * x for x in minus) * n_plus + sum(x * x for x in plus) * n_minus
        return a, n_minus * n_plus

    def split(self, node: Node) -> int | None:
        """The split variable, or None when no candidate has positive gain."""
        weights = self.weights(node)
        total, squares = sum(weights), sum(w * w for w in weights)
        gains = {v: self.gain(node, v) for v in self.candidates(node)}
        best = None
        for v, (a, b) in gains.items():  # ascending variables: a tie keeps the lowest
            if a * total <= squares * b:
                continue  # no positive gain
            if best is None or a * gains[best][1] > gains[best][0] * b:
                best = v
        if best is None:
            return None
        return self.run_split(node, best, gains)

    def run_split(self, node: Node, best: int, gains: dict) -> int:
        """The tie rule for a run of neighbouring cuts of one ordered feature."""
        j = self.q.owner[best][0]
        if not self.q.is_cut(best):
            return best
        values = [point[j] for point in node.points]
        if not any(x < self.q.cut(best) for x in values):  # below it: missing values only
            return next(v for v in range(self.q.n)
                        if self.q.owner[v] == (j, len(self.q.values[j])))
        a, b = gains[best]
        run = [best]
        while (run[-1] + 1 < self.q.n and self.q.owner[run[-1] + 1][0] == j
               and self.q.is_cut(run[-1] + 1) and run[-1] + 1 in gains
               and gains[run[-1] + 1][0] * b == a * gains[run[-1] + 1][1]):
            run.append(run[-1] + 1)
        if len(run) == 1:
            return best
        first, last = self.q.cut(run[0]), self.q.cut(run[-1])
        lo = Fraction(max(x for x in values if x < first))
        hi = Fraction(min(x for x in values if x >= last))
        return min(run, key=lambda v: (abs(2 * Fraction(self.q.cut(v)) - lo - hi), v))

    # -- the leaf -----------------------------------------------------------------------------

    def weights(self, node: Node) -> list[int]:
        return node.weights(self.classes)

    def leaf_class(self, node: Node) -> int:
        weights = self.weights(node)
        if node.r >= self.min_rows:
            counts = [0] * self.classes
            for c in node.classes[:node.r]:
                counts[c] += 1
            keys = [(counts[c], weights[c]) for c in range(self.classes)]
        else:
            keys = [(weights[c],) for c in range(self.classes)]
        tied = [c for c in range(self.classes) if keys[c] == max(keys)]
        if self.yes_no and 1 in tied:
            return 1
        return min(tied)

    def leaf(self, node: Node) -> dict:
        c = self.leaf_class(node)
        count = node.classes.count
        if self.yes_no:
            kind, label, total = "LeafDecision", 1 if c == 1 else -1, count(1) - count(0)
        else:
            kind, label, total = "ClassLeafDecision", c, count(c)
        agree = sum(1 for k in range(node.r) if node.classes[k] == c)
        # `certified` is not a field §10 defines: leaves of data mode store it as null
        return {"kind": kind,
                "decision": {"label": label, "samples": node.r + node.t, "total": total,
                             "certified": None},
                "rows": {"rows": node.r, "agree": agree}}

    # -- a node's decision --------------------------------------------------------------------

    def is_leaf(self, node: Node) -> bool:
        positive = sum(1 for w in self.weights(node) if w > 0)
        return (len(node.path) >= self.depth or len(node.region) < self.min_rows
                or positive <= 1)

    def decide(self, path) -> dict:
        """Node ``path``'s decision, in the known answers' form."""
        node = self.node(path)
        variable = None if self.is_leaf(node) else self.split(node)
        if variable is None:
            return self.leaf(node)
        return {"kind": "RowsSplit",
                "decision": {"variable": variable, "points": node.r + node.t, "rows": node.r},
                "rows": None}

    def walk(self, path=()):
        """Every node under ``path`` and its decision, the node first, its ``-1`` child's
        subtree, then its ``+1`` child's."""
        path = tuple(tuple(step) for step in path)
        decision = self.decide(path)
        yield path, decision
        if decision["kind"] == "RowsSplit":
            v = decision["decision"]["variable"]
            for b in (-1, 1):
                yield from self.walk(path + ((v, b),))

    def explain(self, row: list) -> tuple[tuple, dict]:
        """A row's path (cells as given) and the leaf it ends at."""
        row = self.fitted_form(row)
        path: tuple = ()
        while True:
            decision = self.decide(path)
            if decision["kind"] != "RowsSplit":
                return path, decision
            v = decision["decision"]["variable"]
            path += ((v, self.q.value(row, v)),)

    # -- model queries (§10 "Asking the model") ------------------------------------------------

    def queries(self, calls: list[list[tuple]]) -> int:
        """Rows asked when the nodes of ``calls[0]`` are decided in one model call, then those
        of ``calls[1]`` in the next, ...: every fitted row once, every drawn row, and for
        every node but the root its parent's first fitted row again."""
        asked: set[int] = set()
        total = 0
        for paths in calls:
            nodes = [self.node(path) for path in paths]
            new = {i for node in nodes for i in node.fitted} - asked
            asked |= new
            total += len(new) + sum(node.t for node in nodes)
            total += RECHECK * sum(1 for path in paths if path)
        return total

    def tree_calls(self) -> list[list[tuple]]:
        """The whole tree, a call per level."""
        levels: list[list[tuple]] = []
        for path, _ in self.walk():
            levels += [[] for _ in range(len(path) + 1 - len(levels))]
            levels[len(path)].append(path)
        return levels

    def explain_calls(self, rows: list[list]) -> list[list[tuple]]:
        """``rows`` explained one after the other: a call per node not decided before."""
        calls: list[list[tuple]] = []
        decided: set[tuple] = set()
        for row in rows:
            path, _ = self.explain(row)
            for length in range(len(path) + 1):
                if path[:length] not in decided:
                    decided.add(path[:length])
                    calls.append([path[:length]])
        return calls

"""A second implementation of docs/randomness.md §10 (data-mode nodes), written from the text.

Plain Python loops over lists: no numpy, no import of :mod:`lca`. Words and
node keys come from ``tests/spec_reference.py`` (itself written from §2-§3,
its own Philox4x64-10). Rows are lists of values (ordered features as
floats, categorical ones as strings); the model is a function of one such
row returning ``+1`` or ``-1``. ``tests/test_rows_reference.py`` checks that
it decides nodes as the library does.
"""

from __future__ import annotations

from fractions import Fraction

from spec_reference import Stream, node_key


def _mid(a: float, b: float) -> float:
    middle = a + (b - a) / 2
    return middle if middle > a else b


class Questions:
    """The variables of §10 fitted on ``rows``; ``categorical`` lists categorical columns."""

    def __init__(self, rows: list[list], categorical: set[int], cuts: int = 64) -> None:
        self.d = len(rows[0])
        self.features: list[tuple[str, list]] = []  # ("cut", cuts) or ("cat", categories)
        m = len(rows)
        for j in range(self.d):
            column = [row[j] for row in rows]
            if j in categorical:
                self.features.append(("cat", sorted(set(column))))
                continue
            distinct = sorted(set(column))
            if len(distinct) - 1 <= cuts:
                found = [_mid(distinct[i - 1], distinct[i]) for i in range(1, len(distinct))]
            else:
                ordered = sorted(column)
                chosen = sorted({distinct.index(ordered[k * m // (cuts + 1)])
                                 for k in range(1, cuts + 1)} - {0})
                found = [_mid(distinct[i - 1], distinct[i]) for i in chosen]
            self.features.append(("cut", found))
        self.owner: list[tuple[int, int]] = []  # variable -> (feature, index within it)
        for j, (_, values) in enumerate(self.features):
            self.owner += [(j, t) for t in range(len(values))]

    def value(self, row: list, variable: int) -> int:
        j, t = self.owner[variable]
        kind, values = self.features[j]
        holds = row[j] >= values[t] if kind == "cut" else row[j] == values[t]
        return 1 if holds else -1


class Reference:
    """Nodes of the data-mode tree of ``seed`` over ``rows`` and ``model``, one at a time."""

    def __init__(self, rows: list[list], categorical: set[int], model, seed: int,
                 depth: int, rows_per_node: int, min_rows: int, cuts: int = 64,
                 product_rows: int = 0) -> None:
        self.rows, self.model, self.seed = rows, model, seed
        self.depth, self.per_node, self.min_rows = depth, rows_per_node, min_rows
        self.product_rows = product_rows  # D: at most R - D fitted rows a node
        self.q = Questions(rows, categorical, cuts)
        stream = Stream(node_key(seed, "surrogate-rows", ()), 0)
        keys = [stream.word(i) for i in range(len(rows))]
        self.order = sorted(range(len(rows)), key=lambda i: (keys[i], i))

    def in_region(self, row: list, path) -> bool:
        return all(self.q.value(row, v) == b for v, b in path)

    def drawn(self, path, count: int) -> list[list]:
        stream = Stream(node_key(self.seed, "surrogate-topup", tuple(path)), 0)
        out = []
        for k in range(count):
            row = []
            for j, (kind, values) in enumerate(self.q.features):
                u = stream.word(k * self.q.d + j) >> 32
                steps = [(self.q.owner[v][1], b) for v, b in path if self.q.owner[v][0] == j]
                fitted = [r[j] for r in self.rows]
                if kind == "cut":
                    lo = max([values[t] for t, b in steps if b == 1], default=float("-inf"))
                    hi = min([values[t] for t, b in steps if b == -1], default=float("inf"))
                    s = sorted(fitted)
                    a = sum(1 for x in s if x < lo)
                    b = sum(1 for x in s if x < hi)
                    row.append(s[a + (u * (b - a) >> 32)])
                else:
                    named = [t for t, b in steps if b == 1]
                    allowed = named if named else \
                        [t for t in range(len(values)) if (t, -1) not in steps]
                    slots = []
                    for t in sorted(allowed):
                        slots += [values[t]] * fitted.count(values[t])
                    row.append(slots[u * len(slots) >> 32])
            out.append(row)
        return out

    def decide(self, path) -> dict:
        """The node's decision as a dict (kind, variable or label, samples, total, rows, agree)."""
        region = [i for i in self.order if self.in_region(self.rows[i], path)]
        mine = region[:self.per_node - self.product_rows]
        points = [self.rows[i] for i in mine]
        points += self.drawn(path, self.per_node - len(mine))
        labels = [self.model(row) for row in points]
        n, p = len(points), labels.count(1)
        q = n - p
        r = len(mine)
        leaf = {"kind": "leaf", "label": 1 if p >= q else -1, "samples": n, "total": p - q}
        leaf["rows"] = r
        leaf["agree"] = sum(1 for lab in labels[:r] if lab == leaf["label"])
        if len(path) >= self.depth or len(region) < self.min_rows or p == 0 or q == 0:
            return leaf
        best, best_score = None, None
        for v in range(len(self.q.owner)):
            own = {self.q.value(self.rows[i], v) for i in mine}
            if own != {-1, 1}:
                continue
            counts = {-1: [0, 0], 1: [0, 0]}  # side -> [points, labelled +1]
            for row, lab in zip(points, labels, strict=True):
                side = counts[self.q.value(row, v)]
                side[0] += 1
                side[1] += lab == 1
            (n1, p1), (n2, p2) = counts[-1], counts[1]
            q1, q2 = n1 - p1, n2 - p2
            score = Fraction((p1 * p1 + q1 * q1) * n2 + (p2 * p2 + q2 * q2) * n1, n1 * n2)
            if score <= Fraction(p * p + q * q, n):
                continue  # no positive gain
            if best_score is None or score > best_score:
                best, best_score = v, score
        if best is None:
            return leaf
        return {"kind": "node", "variable": best, "samples": n}


def rows_digest(rows: list[list], categorical: set[int]) -> str:
    """§10's digest of the fitted rows, from the text."""
    import hashlib
    import json
    import struct

    def frame(data: bytes) -> bytes:
        return struct.pack("<Q", len(data)) + data

    data = frame(b"lca/rows/v1") + struct.pack("<QQ", len(rows), len(rows[0]))
    for j in range(len(rows[0])):
        if j in categorical:
            data += b"c"
            for row in rows:
                value = row[j]
                if isinstance(value, (bool, int, float)):
                    value = float(value)
                data += frame(json.dumps(value, ensure_ascii=True).encode("ascii"))
        else:
            data += b"f" + b"".join(struct.pack("<d", float(row[j]) + 0.0) for row in rows)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def decide_classes(reference: Reference, path, classes: int) -> dict:
    """A node of the multi-class tree of §10 (``reference.model`` returns a class index in
    ``[0, classes)``), as a dict (kind, variable or label, samples, total, rows, agree)."""
    ref = reference
    region = [i for i in ref.order if ref.in_region(ref.rows[i], path)]
    mine = region[:ref.per_node - ref.product_rows]
    points = [ref.rows[i] for i in mine]
    points += ref.drawn(path, ref.per_node - len(mine))
    labels = [ref.model(row) for row in points]
    n = len(points)
    counts = [labels.count(c) for c in range(classes)]
    label = max(range(classes), key=lambda c: (counts[c], -c))  # ties: the lowest index
    r = len(mine)
    leaf = {"kind": "class", "label": label, "samples": n, "total": counts[label], "rows": r,
            "agree": sum(1 for lab in labels[:r] if lab == label)}
    if len(path) >= ref.depth or len(region) < ref.min_rows or counts[label] == n:
        return leaf
    parent = Fraction(sum(c * c for c in counts), n)
    best, best_score = None, None
    for v in range(len(ref.q.owner)):
        if {ref.q.value(ref.rows[i], v) for i in mine} != {-1, 1}:
            continue
        sides = {-1: [0] * classes, 1: [0] * classes}  # side -> points of each class
        for row, lab in zip(points, labels, strict=True):
            sides[ref.q.value(row, v)][lab] += 1
        score = sum(Fraction(sum(c * c for c in side), sum(side)) for side in sides.values())
        if score > parent and (best_score is None or score > best_score):
            best, best_score = v, score
    if best is None:
        return leaf
    return {"kind": "node", "variable": best, "samples": n}

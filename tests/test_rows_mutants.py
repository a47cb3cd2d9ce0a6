"""The known answers of tests/data/rows_answers.json pin docs/randomness.md §10, rule by rule.

Each mutant below is tests/rows_reference.py with one small rule changed, as a careless second
implementation of §10 might change it, loaded as a fresh module (text substitution). A mutant
the stored vectors do not tell from the reference is a rule a wrong implementation could get
away with: the vectors, not the reference, are then what is missing. Such a mutant is listed
in ``GAP`` with a case of ``PROPOSED`` that tells it apart (checked here against the
reference; the library's answers for that case are what the generator would store), and its
test is a strict expected failure: once a new case pins it, the mark fails and is removed.
Emptying ``GAP`` makes every surviving mutant a plain failure.

Mutants no vector can tell from the reference are not counted: ``EQUIVALENT`` (with a proof)
and ``UNPINNABLE`` (with why no case of practical size can), each checked only to reproduce
the vectors (if one did not, its argument would be wrong).
"""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path

import pytest
import rows_reference
from rows_support import case_reference, first_mismatch, rows_answers

import spec_reference

SOURCE = (Path(__file__).resolve().parent / "rows_reference.py").read_text()

# name -> (old, new) replacements, each old text found exactly once in the reference
MUTANTS: dict[str, list[tuple[str, str]]] = {
    # -- rows, questions, digest ---------------------------------------------------------------
    "bool columns read as categorical": [(
        "self.categorical = set(categorical)",
        "self.categorical = set(categorical) | {j for j, c in enumerate(rows[0])"
        " if isinstance(c, bool)}")],
    "categories in order of first appearance": [(
        "ordered_cuts(column, cuts) if ordered else sorted(set(column))",
        "ordered_cuts(column, cuts) if ordered else list(dict.fromkeys(column))")],
    "quantile index rounded up": [(
        "values[k * m // (cuts + 1)]", "values[-(-k * m // (cuts + 1))]")],
    "quantiles over the distinct values": [(
        "values, m = sorted(column), len(column)", "values, m = distinct, len(distinct)")],
    "every midpoint only when D - 1 < cuts": [(
        "if len(distinct) - 1 <= cuts:", "if len(distinct) - 1 < cuts:")],
    "mid: no overflow branch": [(
        "middle = a + (b - a) / 2 if not math.isinf(b - a) else a / 2 + b / 2",
        "middle = a + (b - a) / 2")],
    "midpoint as (a + b) / 2": [(
        "middle = a + (b - a) / 2 if", "middle = (a + b) / 2 if")],
    "an ordered variable asks x > cut": [(
        "return 1 if row[j] >= self.values[j][t] else -1",
        "return 1 if row[j] > self.values[j][t] else -1")],
    "digest: the tag unframed": [(
        'data = frame(b"lca/rows/v1")', 'data = (b"lca/rows/v1")')],
    "digest: categories unframed": [(
        'frame(json.dumps(read(row[j], False), ensure_ascii=True).encode("ascii"))',
        'json.dumps(read(row[j], False), ensure_ascii=True).encode("ascii")')],
    "digest: -0.0 kept": [("float(row[j]) + 0.0", "float(row[j])")],
    "digest: non-ASCII not escaped": [(
        'ensure_ascii=True).encode("ascii")', 'ensure_ascii=False).encode("utf-8")')],
    "digest: categorical numbers as written": [(
        'frame(json.dumps(read(row[j], False), ensure_ascii=True).encode("ascii"))',
        'frame(json.dumps(row[j], ensure_ascii=True).encode("ascii"))')],
    "categorical numbers sorted as text": [(
        "ordered_cuts(column, cuts) if ordered else sorted(set(column))",
        "ordered_cuts(column, cuts) if ordered else sorted(set(column), key=str)")],
    "digest: a bool column as categorical": [(
        "if j in categorical:", "if j in categorical or isinstance(rows[0][j], bool):")],
    "digest: row by row": [(
        'data += b"f" + b"".join(struct.pack("<d", float(row[j]) + 0.0) for row in rows)',
        'data += b"f" + b"".join(struct.pack("<d", float(row[j]) + 0.0) for row in rows[::-1])')],
    "digest: big-endian doubles": [('struct.pack("<d"', 'struct.pack(">d"')],
    # -- order and a node's rows --------------------------------------------------------------
    "rank keys from stream 1": [(
        'Stream(node_key(seed, "surrogate-rows", ()), 0)',
        'Stream(node_key(seed, "surrogate-rows", ()), 1)')],
    "rank keys descending": [(
        "key=lambda i: (keys.word(i), i))", "key=lambda i: (-keys.word(i), i))")],
    "shared rows counted with rank <= S": [(
        "self.rank[i] < self.shared", "self.rank[i] <= self.shared")],
    "ranks counted from 1": [("self.rank[i] < self.shared", "self.rank[i] + 1 < self.shared")],
    "shared rows: the region's first S": [(
        "s = sum(1 for i in region if self.rank[i] < self.shared)",
        "s = min(self.shared, len(region))")],
    "shared rows ignored": [(
        "return max(s, min(self.per_node, len(region)))",
        "return min(self.per_node, len(region))")],
    "shared rows and R more": [(
        "return max(s, min(self.per_node, len(region)))",
        "return s + min(self.per_node, len(region) - s)")],
    "one drawn row fewer": [(
        "t = max(self.per_node - r, 0)", "t = max(self.per_node - r - 1, 0)")],
    "one drawn row more": [(
        "t = max(self.per_node - r, 0)", "t = self.per_node - r + 1 if r < self.per_node else 0")],
    # -- drawn rows ---------------------------------------------------------------------------
    "base row as v mod r": [(
        "fitted[(bases.word(k) >> 32) * r // TWO32]", "fitted[(bases.word(k) >> 32) % r]")],
    "base row from the low 32 bits": [(
        "fitted[(bases.word(k) >> 32) * r // TWO32]",
        "fitted[(bases.word(k) & 0xFFFFFFFF) * r // TWO32]")],
    "base word from stream 0": [(
        "coins, bases = Stream(key, 0), Stream(key, 1)",
        "coins, bases = Stream(key, 0), Stream(key, 0)")],
    "coin and base streams swapped": [(
        "coins, bases = Stream(key, 0), Stream(key, 1)",
        "coins, bases = Stream(key, 1), Stream(key, 0)")],
    "coin: the top bit": [("if w & 1 == 0 else", "if w >> 63 == 0 else")],
    "coin: the lowest bit of u": [("if w & 1 == 0 else", "if (w >> 32) & 1 == 0 else")],
    "coin: 1 keeps": [("if w & 1 == 0 else", "if w & 1 == 1 else")],
    "u from the low 32 bits": [(
        "self.q.draw(j, path, w >> 32)", "self.q.draw(j, path, w & 0xFFFFFFFF)")],
    "coin words feature by feature": [("coins.word(k * d + j)", "coins.word(j * t + k)")],
    "drawn rows keyed by the root": [(
        'node_key(self.seed, "surrogate-topup", path)',
        'node_key(self.seed, "surrogate-topup", ())')],
    "ordered draw over distinct values": [(
        "s = self.sorted[j]", "s = sorted(set(self.sorted[j]))")],
    "ordered draw from the region's rows": [(
        "s = self.sorted[j]",
        "s = sorted(r[j] for r in zip(*self.columns)"
        " if all(self.value(r, v) == b for v, b in path))")],
    "categorical draw: slots from the region's rows": [(
        "slots += [categories[t]] * self.columns[j].count(categories[t])",
        "slots += [categories[t]] * sum(1 for r in zip(*self.columns)"
        " if r[j] == categories[t] and all(self.value(r, v) == b for v, b in path))")],
    "ordered draw: a counts values <= lo": [(
        "a = sum(1 for x in s if x < lo)", "a = sum(1 for x in s if x <= lo)")],
    "ordered draw: hi the largest -1 cut": [(
        "hi = min((values[t] for t, b in steps if b == -1), default=math.inf)",
        "hi = max((values[t] for t, b in steps if b == -1), default=math.inf)")],
    "ordered draw never the last value": [(
        "return s[a + u * (b - a) // TWO32]", "return s[a + u * (b - a - 1) // TWO32]")],
    "categorical draw: a slot per category": [(
        "slots += [categories[t]] * self.columns[j].count(categories[t])",
        "slots += [categories[t]]")],
    "categorical draw: a named category ignored": [(
        "allowed = named if named else [", "allowed = [")],
    "categorical draw: slots in decreasing order": [(
        "for t in sorted(allowed):", "for t in sorted(allowed, reverse=True):")],
    # -- weights --------------------------------------------------------------------------------
    "weights swapped": [(
        "return self.t if k < self.r else min(self.r, self.t)",
        "return min(self.r, self.t) if k < self.r else self.t")],
    "weights equal": [("return self.t if k < self.r else min(self.r, self.t)", "return 1")],
    "a fitted row weighs R": [(
        "return self.t if k < self.r else min(self.r, self.t)",
        "return self.r + self.t if k < self.r else min(self.r, self.t)")],
    "a drawn row weighs r": [(
        "return self.t if k < self.r else min(self.r, self.t)",
        "return self.t if k < self.r else self.r")],
    "with t = 0 a fitted row weighs t": [(
        "if not self.t:\n            return 1", "if not self.t:\n            return 0")],
    "gain counts points unweighted": [(
        "sides[self.q.value(point, v)][c] += node.weight(k)",
        "sides[self.q.value(point, v)][c] += 1")],
    # -- the split ----------------------------------------------------------------------------
    "candidates over all points": [(
        "if len({self.q.value(self.rows[i], v) for i in node.fitted}) == 2]",
        "if len({self.q.value(p, v) for p in node.points}) == 2]")],
    "candidates over the whole region": [(
        "if len({self.q.value(self.rows[i], v) for i in node.fitted}) == 2]",
        "if len({self.q.value(self.rows[i], v) for i in node.region}) == 2]")],
    # A_v N - (sum W_c^2) B_v is B_v N times the weighted Gini gain, never negative (Gini
    # impurity is concave): no gain test at all is this same mutant, not listed again.
    "positive gain as >=": [(
        "if a * total <= squares * b:", "if a * total < squares * b:")],
    "a tie to the highest variable": [(
        "a * gains[best][1] > gains[best][0] * b", "a * gains[best][1] >= gains[best][0] * b")],
    "run rule off": [("if len(run) == 1:\n            return best", "if True:\n"
                      "            return best")],
    "run: the cut nearest lo": [(
        "abs(2 * Fraction(self.q.cut(v)) - lo - hi)", "abs(Fraction(self.q.cut(v)) - lo)")],
    "run: a tie to the highest variable": [(
        "abs(2 * Fraction(self.q.cut(v)) - lo - hi), v))",
        "abs(2 * Fraction(self.q.cut(v)) - lo - hi), -v))")],
    "run: |2c - lo - hi| in doubles": [(
        "abs(2 * Fraction(self.q.cut(v)) - lo - hi), v))",
        "abs(2 * self.q.cut(v) - float(lo) - float(hi)), v))")],
    "run: the middle variable": [(
        "abs(2 * Fraction(self.q.cut(v)) - lo - hi), v))",
        "abs(2 * v - run[0] - run[-1]), v))")],
    "run: lo and hi over the fitted rows": [(
        "values = [point[j] for point in node.points]",
        "values = [self.rows[i][j] for i in node.fitted]")],
    "run: hi strictly above the last cut": [("if x >= last))", "if x > last))")],
    "run: lo below the last cut": [("if x < first))", "if x < last))")],
    "run: the same A and B, not the same A / B": [(
        "and gains[run[-1] + 1][0] * b == a * gains[run[-1] + 1][1]):",
        "and gains[run[-1] + 1] == (a, b)):")],
    "run: at most two cuts": [(
        "run.append(run[-1] + 1)", "run.append(run[-1] + 1)\n            break")],
    # -- leaves -----------------------------------------------------------------------------
    "leaf by weight alone": [("if node.r >= self.min_rows:", "if False:")],
    "leaf by all its points, unweighted": [(
        "for c in node.classes[:node.r]:", "for c in node.classes:")],
    "leaf: r > min_rows": [("if node.r >= self.min_rows:", "if node.r > self.min_rows:")],
    "leaf: a fitted tie not settled by weight": [(
        "keys = [(counts[c], weights[c]) for c in range(self.classes)]",
        "keys = [(counts[c],) for c in range(self.classes)]")],
    "yes/no tie to -1": [("if self.yes_no and 1 in tied:", "if False:")],
    "multi-class tie to the highest index": [("return min(tied)", "return max(tied)")],
    # the stored classes are ["low", "mid", "high"]: sorted by name, "high" (2) comes first,
    # then "low" (0), then "mid" (1)
    "multi-class tie by class name": [(
        "return min(tied)", "return min(tied, key=[1, 2, 0].__getitem__)")],
    "yes/no total weighted": [(
        "count(1) - count(0)",
        "sum(node.weight(k) * (1 if c == 1 else -1) for k, c in enumerate(node.classes))")],
    "class leaf total weighted": [(
        '"ClassLeafDecision", c, count(c)', '"ClassLeafDecision", c, self.weights(node)[c]')],
    "leaf samples = rows_per_node": [(
        '"samples": node.r + node.t, "total"', '"samples": self.per_node, "total"')],
    "leaf agreement over all points": [(
        "for k in range(node.r) if node.classes[k] == c)",
        "for k in range(len(node.classes)) if node.classes[k] == c)")],
    "depth test |path| > depth": [(
        "len(node.path) >= self.depth", "len(node.path) > self.depth")],
    "min_rows test: region <= min_rows": [(
        "len(node.region) < self.min_rows", "len(node.region) <= self.min_rows")],
    "min_rows test on r, not the region": [(
        "len(node.region) < self.min_rows", "node.r < self.min_rows")],
    "one class among the fitted rows": [(
        "positive = sum(1 for w in self.weights(node) if w > 0)",
        "positive = len(set(node.classes[:node.r]))")],
    "split points = the region's rows": [(
        '"points": node.r + node.t', '"points": len(node.region)')],
    # -- queries --------------------------------------------------------------------------------
    "no rows asked again": [("RECHECK = 4", "RECHECK = 0")],
    "always 4 rows asked again": [(
        "again = min(RECHECK, len(new))", "again = RECHECK")],
    "the first call's drawn rows asked again too": [(
        "again = min(RECHECK, len(new))",
        "again = min(RECHECK, len(new) + sum(node.t for node in nodes))")],
    "a call only when it has new rows": [(
        "+ again\n", "+ (again if new or any(node.t for node in nodes) else 0)\n")],
    "rows asked again by the first call too": [(
        "total = again = 0", "total, again = 0, RECHECK")],
    "fitted rows asked by every node": [(
        "new = {i for node in nodes for i in node.fitted} - asked",
        "new = [i for node in nodes for i in node.fitted]"), (
        "asked |= new", "asked |= set(new)")],
}

# -- what the stored vectors miss ---------------------------------------------------------------
#
# Cases scripts/make_rows_answers.py does not make yet: four parameter sets over its rows and
# models (each a yes/no and a multi-class case, as its PARAMETERS are), and five crafted sets
# of rows, each with its own rows' digest and models (row functions as model_row / class_row
# are, class indices into ["low", "mid", "high"]; the library's models would be the same rules
# over a frame; "edge values" lists its columns 2 and 3 as categorical).

B = 1.0000000000000002  # the double after 1.0: mid(1.0, B) is not above 1.0, so the cut is B


def _xor(row: list) -> int:
    return 1 if (row[0] >= 0.5) != (row[1] >= 0.5) else 0


def _mirror(row: list) -> int:
    return 1 if row[0] >= 1.0 or row[1] >= 0.5 else 0


def _positive(row: list) -> int:
    return 1 if row[0] >= 0 else 0


def _three(row: list) -> int:
    return 1 if row[0] >= 0.5 and row[1] < 0.5 else 0


def _edge_yes_no(row: list) -> int:
    x, y, k, name, _ = row
    return 1 if ((y >= B) != (k == 10)) != (x >= 0.22 and name == "\u00e9") else 0


def _edge_classes(row: list) -> int:
    x, y, k, _, flag = row
    return (int(y >= B) + int(x >= 0.22) + int(k == 10 and flag)) % 3


PROPOSED: dict[str, dict] = {
    # rows_per_node < min_rows; cuts = 7 = D - 1 for column b; leaves of more than R rows
    "stored rows, small R": {"parameters": {
        "depth": 5, "seed": 12, "rows_per_node": 4, "shared_rows": 16, "min_rows": 8,
        "cuts": 7}},
    # a leaf with r = min_rows; a run next to drawn rows
    "stored rows, shared 64 of 16": {"parameters": {
        "depth": 6, "seed": 8, "rows_per_node": 16, "shared_rows": 64, "min_rows": 3,
        "cuts": 16}},
    # runs whose cuts hold points between them yet tie (the same A / B, other A and B)
    "stored rows, cuts 7": {"parameters": {
        "depth": 6, "seed": 40, "rows_per_node": 16, "shared_rows": 0, "min_rows": 2,
        "cuts": 7}},
    # a column whose two values are so far apart that b - a overflows
    "huge": {"rows": [[-1.5e308], [1.5e308]], "categorical": [], "yes/no": _positive,
             "classes": _positive, "parameters": {
                 "depth": 1, "seed": 1, "rows_per_node": 2, "shared_rows": 0, "min_rows": 1,
                 "cuts": 64}},
    # a first model call of fewer than 4 rows
    "stored rows, R = 2": {"parameters": {
        "depth": 3, "seed": 5, "rows_per_node": 2, "shared_rows": 0, "min_rows": 1,
        "cuts": 16}},
    # a first model call of 3 fitted rows and 5 drawn ones
    "three rows": {"rows": [[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]], "categorical": [],
                   "yes/no": _three, "classes": _three, "parameters": {
                       "depth": 2, "seed": 1, "rows_per_node": 8, "shared_rows": 0,
                       "min_rows": 1, "cuts": 64}},
    # every candidate splits both classes evenly: a leaf by no positive gain, a 2-2 tie
    "xor": {"rows": [[0.0, False], [0.0, True], [1.0, False], [1.0, True]], "categorical": [],
            "yes/no": _xor, "classes": _xor, "parameters": {
                "depth": 2, "seed": 1, "rows_per_node": 4, "shared_rows": 0, "min_rows": 1,
                "cuts": 64}},
    # two cuts whose gains tie at the same distance from the gap's middle in the reals: the
    # doubles of mid() decide (and §10's exact comparison)
    "mirror": {"rows": [[-0.82, 0.0, False], [-0.82, 0.0, False], [1.26, 0.0, False],
                        [1.26, 0.0, False], [0.22, 0.0, True], [0.22, 1.0, True]],
               "categorical": [], "yes/no": _mirror, "classes": _mirror, "parameters": {
                   "depth": 1, "seed": 1, "rows_per_node": 6, "shared_rows": 0,
                   "min_rows": 1, "cuts": 64}},
    # -0.0; a cut equal to a fitted value (B); categorical numbers and a bool (k); a
    # non-ASCII category
    "edge values": {"rows": [
        [-0.82, B, 10, "\u00e9", True], [-0.0, 0.5, True, "z", True], [0.22, B, 1.5, "z", True],
        [-1.5, 1.0, 1.5, "\u00e9", False], [0.5, 0.0, 1.5, "e", False],
        [0.5, 1.0, 2, "e", True], [-0.82, 0.5, 10, "z", False],
        [-0.82, 0.0, 1.5, "e", False], [-1.5, 0.0, True, "e", False],
        [0.22, 0.0, 10, "e", True], [-0.82, 1.0, 10, "e", False],
        [0.22, 0.5, 2, "\u00e9", True]], "categorical": [2, 3],
        "yes/no": _edge_yes_no, "classes": _edge_classes, "parameters": {
            "depth": 4, "seed": 62, "rows_per_node": 3, "shared_rows": 4, "min_rows": 3,
            "cuts": 64}},
}

# mutant -> the proposed case that tells it apart (test_a_proposed_case_tells_the_gap checks
# that the reference and the mutant differ there)
GAP: dict[str, str] = {
    "every midpoint only when D - 1 < cuts": "stored rows, small R",
    "leaf samples = rows_per_node": "stored rows, small R",
    "min_rows test on r, not the region": "stored rows, small R",
    "run: a tie to the highest variable": "stored rows, small R",
    "yes/no tie to -1": "stored rows, small R",
    "leaf: r > min_rows": "stored rows, shared 64 of 16",
    "run: lo and hi over the fitted rows": "stored rows, shared 64 of 16",
    "run: lo below the last cut": "stored rows, cuts 7",
    "run: the same A and B, not the same A / B": "stored rows, cuts 7",
    "positive gain as >=": "xor",
    "mid: no overflow branch": "huge",
    "midpoint as (a + b) / 2": "mirror",
    "run: |2c - lo - hi| in doubles": "mirror",
    "an ordered variable asks x > cut": "edge values",
    "ordered draw: a counts values <= lo": "edge values",
    "run: hi strictly above the last cut": "edge values",
    "digest: -0.0 kept": "edge values",
    "digest: non-ASCII not escaped": "edge values",
    "digest: categorical numbers as written": "edge values",
    "categorical numbers sorted as text": "edge values",
    "always 4 rows asked again": "stored rows, R = 2",
    "the first call's drawn rows asked again too": "three rows",
}

# Not run as mutants. name -> (replacements, why no vector can tell it from the reference)
EQUIVALENT: dict[str, tuple[list[tuple[str, str]], str]] = {
    "r = min(max(s, R), |region|)": ([(
        "return max(s, min(self.per_node, len(region)))",
        "return min(max(s, self.per_node), len(region))")],
        "s <= |region|: when R <= |region| both are max(s, R); otherwise both are |region|."),
    "t = R - |region|": ([(
        "t = max(self.per_node - r, 0)", "t = max(self.per_node - len(region), 0)")],
        "r < R only when |region| < R, and then r = max(s, |region|) = |region|; when r >= R, "
        "|region| >= r >= R and both give 0."),
    "with t = 0 a fitted row weighs 2": ([(
        "if not self.t:\n            return 1", "if not self.t:\n            return 2")],
        "every comparison is homogeneous in a node's weights (A_v N against (sum W_c^2) B_v "
        "and A_v B_w against A_w B_v, both sides of degree 4 and 5; W_c against W_c'): "
        "scaling them all by one positive constant changes nothing."),
    "no one-class test": ([("or positive <= 1)", ")")],
        "with one class, A_v = n-^2 n+ + n+^2 n- = B_v N and sum W_c^2 = N^2: no candidate "
        "has positive gain, and the node is the same leaf."),
}

# Not provably equivalent, but no vector of practical size can tell them apart.
UNPINNABLE: dict[str, tuple[list[tuple[str, str]], str]] = {
    "rank ties to the higher row": ([(
        "key=lambda i: (keys.word(i), i))", "key=lambda i: (keys.word(i), -i))")],
        "two rows share a rank key only when two 64-bit words of one stream are equal: a "
        "case needs about 2^32 rows to hold such a pair."),
    "base row from the whole word": ([(
        "fitted[(bases.word(k) >> 32) * r // TWO32]", "fitted[bases.word(k) * r >> 64]")],
        "with w = v 2^32 + low, floor(w r / 2^64) = floor(v r / 2^32 + low r / 2^64) differs "
        "from floor(v r / 2^32) only when (v r mod 2^32) + low r / 2^32 >= 2^32: about once "
        "in 2^33 / r drawn rows."),
}


@pytest.fixture(autouse=True, scope="module")
def _cached_philox():
    """The mutants read the same Philox blocks: compute each once (pure speed-up)."""
    original = spec_reference.philox_block
    spec_reference.philox_block = functools.cache(original)
    yield
    spec_reference.philox_block = original


def mutant(name: str, replacements: list[tuple[str, str]]) -> types.ModuleType:
    """tests/rows_reference.py with ``replacements`` made, as a fresh module."""
    source = SOURCE
    for old, new in replacements:
        assert source.count(old) == 1, f"{name}: {old!r} is not in the reference once"
        source = source.replace(old, new)
    module = types.ModuleType("rows_reference_mutant")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    try:
        exec(compile(source, f"<mutant: {name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module


# A mutant that fails on the vectors with one of these is told apart by them too (such as
# "candidates over the whole region", whose run rule finds no point below a cut); any other
# error is a mistake in the mutant and fails its test.
FAILURES = (ValueError, IndexError, KeyError, ZeroDivisionError)


def detected(module: types.ModuleType) -> bool:
    """Whether the stored vectors tell ``module`` from the reference."""
    try:
        return first_mismatch(module) is not None
    except FAILURES:
        return True


def proposed(module: types.ModuleType, case: str) -> list:
    """What ``module`` makes of a proposed case: per kind, the digest, tree and queries."""
    proposal = PROPOSED[case]
    if "rows" not in proposal:
        kinds = {one["kind"]: one for one in rows_answers()["cases"]}  # its classes, model
        return [tree_of(case_reference(module, {**one, "parameters": proposal["parameters"]}))
                for one in kinds.values()]
    out = []
    for kind, classes in (("yes/no", 2), ("classes", 3)):
        reference = module.Reference(
            proposal["rows"], set(proposal["categorical"]), proposal[kind], classes,
            yes_no=kind == "yes/no", **proposal["parameters"])
        out.append((module.rows_digest(proposal["rows"], set(proposal["categorical"])),
                    tree_of(reference)))
    return out


def tree_of(reference) -> tuple:
    return list(reference.walk()), reference.queries(reference.tree_calls())


def _params():
    for name, replacements in MUTANTS.items():
        marks = [pytest.mark.xfail(strict=True, reason=f"vector gap: '{GAP[name]}' would pin "
                                   "it (PROPOSED)")] if name in GAP else []
        yield pytest.param(name, replacements, marks=marks, id=name)


@pytest.mark.parametrize(("name", "replacements"), list(_params()))
def test_the_vectors_detect_the_mutant(name, replacements):
    assert detected(mutant(name, replacements)), f"no stored vector tells {name!r} apart"


@pytest.mark.parametrize("name", list(GAP))
def test_a_proposed_case_tells_the_gap(name):
    """The case proposed for a gap tells its mutant from the reference (so the library's
    answers for it, once stored, pin the rule; unless the library disagrees with §10)."""
    try:
        told = proposed(mutant(name, MUTANTS[name]), GAP[name])
    except FAILURES:
        return
    assert told != proposed(rows_reference, GAP[name])


@pytest.mark.parametrize("name", list(EQUIVALENT) + list(UNPINNABLE))
def test_an_excluded_mutant_reproduces_the_vectors(name):
    """If one did not, its argument above would be wrong."""
    replacements = {**EQUIVALENT, **UNPINNABLE}[name][0]
    assert first_mismatch(mutant(name, replacements)) is None


def test_the_mutants_are_distinct():
    assert not set(MUTANTS) & (set(EQUIVALENT) | set(UNPINNABLE))
    assert set(GAP) <= set(MUTANTS) and set(GAP.values()) <= set(PROPOSED)
    changed = [tuple(r) for r in MUTANTS.values()] + \
        [tuple(r) for r, _ in (*EQUIVALENT.values(), *UNPINNABLE.values())]
    assert len(set(changed)) == len(changed)


@pytest.mark.xfail(strict=True, reason="the stored vectors miss the GAP mutants until the "
                   "PROPOSED cases are added to scripts/make_rows_answers.py")
def test_the_vectors_detect_95_percent_of_the_mutants():
    # test_the_vectors_detect_the_mutant holds GAP to exactly the undetected mutants
    assert len(GAP) <= 0.05 * len(MUTANTS)

"""The known answers of tests/data/rows_answers.json pin docs/randomness.md §10, rule by rule.

Each mutant below is tests/rows_reference.py with one small rule changed, as a careless second
implementation of §10 might change it, loaded as a fresh module (text substitution). Every one
must be told apart by the stored vectors alone: a mutant they do not tell is a rule a wrong
implementation could get away with, and the vectors, not the reference, are then what is
missing (scripts/make_rows_answers.py gains a case that reaches the rule).

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
from rows_support import first_mismatch

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
        "ordered_cuts(present, cuts) if ordered else sorted(set(column))",
        "ordered_cuts(present, cuts) if ordered else list(dict.fromkeys(column))")],
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
        "return 1 if not missing(row[j]) and row[j] >= self.values[j][t] else -1",
        "return 1 if not missing(row[j]) and row[j] > self.values[j][t] else -1")],
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
        "ordered_cuts(present, cuts) if ordered else sorted(set(column))",
        "ordered_cuts(present, cuts) if ordered else sorted(set(column), key=str)")],
    "digest: a bool column as categorical": [(
        "if j in categorical:", "if j in categorical or isinstance(rows[0][j], bool):")],
    "digest: row by row": [(
        'struct.pack("<d", float(row[j]) + 0.0) for row in rows)',
        'struct.pack("<d", float(row[j]) + 0.0) for row in rows[::-1])')],
    "digest: a missing value as the negative NaN": [(
        'struct.pack("<Q", 0x7FF8000000000000)', 'struct.pack("<Q", 0xFFF8000000000000)')],
    "digest: a missing value as 0.0": [(
        'struct.pack("<Q", 0x7FF8000000000000)', 'struct.pack("<d", 0.0)')],
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
        "hi = min((values[t] for t, b in cuts if b == -1), default=math.inf)",
        "hi = max((values[t] for t, b in cuts if b == -1), default=math.inf)")],
    "ordered draw never the last value": [(
        "return s[a + slot] if slot < b - a else math.nan",
        "return s[a + slot] if slot < b - a - 1 else math.nan")],
    # -- missing values -----------------------------------------------------------------------
    "cuts over every value, missing ones too": [(
        "ordered_cuts(present, cuts) if ordered", "ordered_cuts(sorted(column), cuts) if ordered")],
    "no 'is missing' question": [(
        "self.owner += [(j, t) for t in range(len(values) + self.asks_missing[j])]",
        "self.owner += [(j, t) for t in range(len(values))]")],
    "'is missing' before the cuts": [(
        "if t == len(self.values[j]):  # \"x is missing\"", "if t == 0:")],
    "a missing value above every cut": [(
        "return 1 if not missing(row[j]) and row[j] >= self.values[j][t] else -1",
        "return 1 if missing(row[j]) or row[j] >= self.values[j][t] else -1")],
    "a run of cuts goes on through 'is missing'": [(
        "and self.q.is_cut(run[-1] + 1) and run[-1] + 1 in gains", "and run[-1] + 1 in gains")],
    "only missing values below a cut: the cut kept": [(
        "if not any(x < self.q.cut(best) for x in values):", "if False:")],
    "only missing fitted rows below a cut: 'is missing'": [(
        "if not any(x < self.q.cut(best) for x in values):",
        "if not any(x < self.q.cut(best) for x in values[:node.r]):")],
    "draws never missing": [(
        "e = 0 if asked == [-1] or any(b == 1 for _, b in cuts) else self.absent[j]", "e = 0")],
    "draws missing after a +1 cut": [(
        "e = 0 if asked == [-1] or any(b == 1 for _, b in cuts) else self.absent[j]",
        "e = 0 if asked == [-1] else self.absent[j]")],
    "missing values before the present ones": [(
        "return s[a + slot] if slot < b - a else math.nan",
        "return math.nan if slot < e else s[a + slot - e]")],
    "a missing-only region draws present values": [(
        "return math.nan  # the region requires a missing value", "pass")],
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
    "no rows asked again": [("RECHECK = 1", "RECHECK = 0")],
    "two rows asked again a node": [("RECHECK = 1", "RECHECK = 2")],
    "the root asks a row again too": [(
        "RECHECK * sum(1 for path in paths if path)", "RECHECK * len(paths)")],
    "a row asked again a call, not a node": [(
        "RECHECK * sum(1 for path in paths if path)", "RECHECK * any(paths[0])")],
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


@pytest.mark.parametrize(("name", "replacements"), list(MUTANTS.items()), ids=list(MUTANTS))
def test_the_vectors_detect_the_mutant(name, replacements):
    assert detected(mutant(name, replacements)), f"no stored vector tells {name!r} apart"


@pytest.mark.parametrize("name", list(EQUIVALENT) + list(UNPINNABLE))
def test_an_excluded_mutant_reproduces_the_vectors(name):
    """If one did not, its argument above would be wrong."""
    replacements = {**EQUIVALENT, **UNPINNABLE}[name][0]
    assert first_mismatch(mutant(name, replacements)) is None


def test_the_mutants_are_distinct():
    assert not set(MUTANTS) & (set(EQUIVALENT) | set(UNPINNABLE))
    changed = [tuple(r) for r in MUTANTS.values()] + \
        [tuple(r) for r, _ in (*EQUIVALENT.values(), *UNPINNABLE.values())]
    assert len(set(changed)) == len(changed)

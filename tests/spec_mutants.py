"""Named mutants of tests/spec_reference.py: do the known answers pin every rule of §6?

Each :class:`Mutant` changes one rule of docs/randomness.md §5–§6 in the
reference implementation the way a reader of the text could get it wrong
(a formula, a rounding, a comparison at its boundary, a tie-break, an
index), by replacing one exact piece of its source. :func:`detects` runs the
mutated reference on the stored vectors of the modes the rule belongs to
and says which vector tells it from the text, or ``None`` when every vector
passes: the vectors alone do not pin that rule. ``tests/test_spec_mutants.py``
requires every mutant of :data:`MUTANTS` to be detected.

:data:`EQUIVALENT` lists changes that no vector can detect, each with the
argument; they are kept out of the count, not silently dropped.

    python tests/spec_mutants.py                      # detection per mode
    python tests/spec_mutants.py --vectors OLD.json   # against another file
    python tests/spec_mutants.py --equivalent         # the equivalent ones too

A mutant of a rule the modes share (``path_length``, a leaf's label, the
query's branch) counts in the paper modes and in the efficient mode.

Nothing here imports :mod:`lca`.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "spec_reference.py"
VECTORS = HERE / "data" / "known_answers.json"
PAPER = ("fixed", "adaptive")


@dataclass(frozen=True)
class Mutant:
    """``old`` (found exactly once in the reference) replaced by ``new``."""

    name: str
    modes: tuple[str, ...]
    old: str
    new: str
    why: str = ""  # for EQUIVALENT: why no vector can tell it from the text


MUTANTS = [
    # -- §5 and the shared rules of §6 --
    Mutant("T rounded half up", PAPER,
           "return round(rate * 2 ** 15)", "return math.floor(rate * 2 ** 15 + 0.5)"),
    Mutant("T truncated", PAPER,
           "return round(rate * 2 ** 15)", "return math.floor(rate * 2 ** 15)"),
    Mutant("path_length = depth (n ignored)", ("fixed", "adaptive", "efficient"),
           'return min(params["depth"], params["n"])', 'return params["depth"]'),
    Mutant("a leaf sum of 0 labelled -1", ("fixed", "adaptive", "efficient"),
           '"label": 1 if total >= 0 else -1', '"label": 1 if total > 0 else -1'),
    Mutant("z_i = -1 takes the +1 branch", ("fixed", "adaptive", "efficient"),
           "path = path + ((var, -1 if (z >> var) & 1 else 1),)",
           "path = path + ((var, 1 if (z >> var) & 1 else -1),)"),
    # -- fixed mode --
    Mutant("fixed: argmin C ties to the highest index", ("fixed",),
           "key=lambda i: agreements[i])\n    return variable, disagreements, agreements",
           "key=lambda i: (agreements[i], -i))\n    return variable, disagreements, agreements"),
    Mutant("fixed: path variables may be chosen", ("fixed",),
           "variable = min((i for i in range(n) if i not in on_path), key=lambda i: "
           "agreements[i])",
           "variable = min(range(n), key=lambda i: agreements[i])"),
    Mutant("paper: leaf points of purpose score", PAPER,
           'points = NodeSamples(seed, "leaf", path, n)',
           'points = NodeSamples(seed, "score", path, n)'),
    # -- paper modes' reporting fields --
    Mutant("report: runner-up ties to the highest index", PAPER,
           "runner = min(others, key=lambda i: C[i])",
           "runner = min(others, key=lambda i: (C[i], -i))"),
    Mutant("report: runner-up may be a path variable", PAPER,
           "others = [i for i in range(n) if i not in on_path and i != variable]",
           "others = [i for i in range(n) if i != variable]"),
    Mutant("report: margin test at ln 40", PAPER,
           "2 * ln_upper(Fraction(20)) * trials", "2 * ln_upper(Fraction(40)) * trials"),
    Mutant("report: margin trials = D", PAPER,
           "trials = 2 * D - C[variable] - C[runner]", "trials = D"),
    Mutant("report: margin = C_chosen - C_runner", PAPER,
           "margin = C[runner] - C[variable]", "margin = C[variable] - C[runner]"),
    Mutant("report: guesswork level ln(20 n)", PAPER,
           "ln_upper(Fraction(20 * (n - len(path))))", "ln_upper(Fraction(20 * n))"),
    Mutant("report: guesswork at flip rate p (not p/2)", PAPER,
           "Fraction(threshold, 1 << 16)", "Fraction(threshold, 1 << 15)"),
    Mutant("report: guesswork test without the t/3 term", PAPER,
           "2 * (variance + excess / 3) * Fraction(L)", "2 * variance * Fraction(L)"),
    # -- adaptive mode --
    Mutant("rounds: the cap repeated when first_round * 2^r = cap", ("adaptive", "efficient"),
           "while size < cap:", "while size <= cap:"),
    Mutant("adaptive: node events 2n^2 (no early-leaf event)", ("adaptive",),
           "L = log_term((2 * n * n + 1) *", "L = log_term((2 * n * n) *"),
    Mutant("adaptive: node events n^2 + 1", ("adaptive",),
           "L = log_term((2 * n * n + 1) *", "L = log_term((n * n + 1) *"),
    Mutant("adaptive: node union over 2^path_length decisions", ("adaptive",),
           "len(schedule) * 2 ** (path_length(params) + 1),\n",
           "len(schedule) * 2 ** path_length(params),\n"),
    Mutant("adaptive: node union at the node's depth", ("adaptive",),
           "len(schedule) * 2 ** (path_length(params) + 1),\n",
           "len(schedule) * 2 ** (len(path) + 1),\n"),
    Mutant("adaptive: leaf events 2", ("adaptive",),
           "L = log_term(4 * len(schedule)", "L = log_term(2 * len(schedule)"),
    Mutant("adaptive: leaf union at the leaf's depth", ("adaptive",),
           "2 ** (path_length(params) + 1), params[\"delta\"])",
           "2 ** (len(path) + 1), params[\"delta\"])"),
    Mutant("adaptive: delta not halved", ("adaptive",),
           "return ln_upper(Fraction(events) / (Fraction(delta) / 2))",
           "return ln_upper(Fraction(events) / Fraction(delta))"),
    Mutant("adaptive: delta as its decimal literal", ("adaptive",),
           "return ln_upper(Fraction(events) / (Fraction(delta) / 2))",
           "return ln_upper(Fraction(events) / (Fraction(repr(delta)) / 2))"),
    Mutant("adaptive: early leaf at U(D) < p eps", ("adaptive",),
           "if upper(D, size, L) <= p * eps:", "if upper(D, size, L) < p * eps:"),
    Mutant("adaptive: early leaf at U(D) <= eps", ("adaptive",),
           "if upper(D, size, L) <= p * eps:", "if upper(D, size, L) <= eps:"),
    Mutant("adaptive: early leaf at U(D) <= p eps / 2", ("adaptive",),
           "if upper(D, size, L) <= p * eps:", "if upper(D, size, L) <= p * eps / 2:"),
    Mutant("adaptive: leader ties to the highest index", ("adaptive",),
           "leader = min(free, key=lambda i: agreements[i])",
           "leader = min(free, key=lambda i: (agreements[i], -i))"),
    Mutant("adaptive: certified at a gap < tau", ("adaptive",),
           '/ (1 - p / 2) <= params["tau"]', '/ (1 - p / 2) < params["tau"]'),
    Mutant("adaptive: the gap not divided by 1 - p/2", ("adaptive",),
           '/ (1 - p / 2) <= params["tau"]', '<= params["tau"]'),
    Mutant("adaptive: the gap divided by 1 - p", ("adaptive",),
           '/ (1 - p / 2) <= params["tau"]', '/ (1 - p) <= params["tau"]'),
    Mutant("adaptive: the leader compared with itself", ("adaptive",),
           "if j == leader:\n                continue\n",
           "if j == leader:\n                pass\n"),
    Mutant("adaptive: a single free variable is not certified", ("adaptive",),
           "        if certified:\n            return leader, size, D, agreements, True",
           "        if certified and len(free) > 1:\n"
           "            return leader, size, D, agreements, True"),
    Mutant("adaptive: G and H swapped", ("adaptive",),
           "gain, loss = flipped[j] - both, flipped[leader] - both",
           "loss, gain = flipped[j] - both, flipped[leader] - both"),
    Mutant("adaptive: magnitude stop at up < (1 + eps)/2", ("adaptive",),
           "(up <= (1 + eps) / 2 and", "(up < (1 + eps) / 2 and"),
    Mutant("adaptive: magnitude stop at lo > (1 - eps)/2", ("adaptive",),
           "lo >= (1 - eps) / 2)", "lo > (1 - eps) / 2)"),
    Mutant("adaptive: no magnitude stop", ("adaptive",),
           " or (up <= (1 + eps) / 2 and lo >= (1 - eps) / 2):", ":"),
    Mutant("adaptive: leaf bounds without the complements", ("adaptive",),
           "up = min(upper(plus, size, L), 1 - lower(size - plus, size, L))",
           "up = upper(plus, size, L)"),
    Mutant("adaptive: the bound's b = L / (3q)", ("adaptive",),
           "    b = 2 * L / (3 * q)\n    root = (a +", "    b = L / (3 * q)\n    root = (a +"),
    # -- efficient mode --
    Mutant("Z with R (not 2R)", ("efficient",),
           "ln_upper_exact(Fraction(2 * R) / delta)", "ln_upper_exact(Fraction(R) / delta)"),
    Mutant("Z with the quiet rounds R_q", ("efficient",),
           "ln_upper_exact(Fraction(2 * R) / delta)",
           "ln_upper_exact(Fraction(2 * len(quiet)) / delta)"),
    Mutant("Z with delta / 2", ("efficient",),
           "ln_upper_exact(Fraction(2 * R) / delta)",
           "ln_upper_exact(Fraction(2 * R) / (delta / 2))"),
    Mutant("Z rounded down", ("efficient",), "Z = math.ceil(", "Z = math.floor("),
    Mutant("Z from ln_upper rounded to a double", ("efficient",),
           "Fraction(ln_upper_exact(Fraction(2 * R) / delta))",
           "Fraction(ln_upper(Fraction(2 * R) / delta))"),
    Mutant("R = R_q + 2 (two noisy rounds counted)", ("efficient",),
           "R = len(schedule)", "R = len(schedule) + 1"),
    Mutant("R = R_q (the noisy round not counted)", ("efficient",),
           "R = len(schedule)", "R = len(quiet)"),
    Mutant("noisy round of 2 score_samples new pairs", ("efficient",),
           "schedule = quiet + [cap * 2]", "schedule = quiet + [cap * 3]"),
    Mutant("K = 3", ("efficient",), "SEARCH_CANDIDATES = 2", "SEARCH_CANDIDATES = 3"),
    Mutant("K = 1", ("efficient",), "SEARCH_CANDIDATES = 2", "SEARCH_CANDIDATES = 1"),
    Mutant("Ll with K (K - 1) for the pairs of K + 1 candidates", ("efficient",),
           "Fraction(R * (K + 1) * K) / delta", "Fraction(R * K * (K - 1)) / delta"),
    Mutant("Ll without R", ("efficient",),
           "Fraction(R * (K + 1) * K) / delta", "Fraction((K + 1) * K) / delta"),
    Mutant("rule 1 at P > Z", ("efficient",),
           "if m == 0 and P >= Z:", "if m == 0 and P > Z:"),
    Mutant("rule 1 counts inherited points", ("efficient",),
           "if m == 0 and P >= Z:", "if m == 0 and N >= Z:"),
    Mutant("rule 2 ends the node", ("efficient",),
           "if m == 0:  # rule 2: nothing more this round (no candidates, no flips)\n"
           "                continue",
           "if m == 0:  # rule 2: nothing more this round (no candidates, no flips)\n"
           "                break"),
    Mutant("m over inherited and own points", ("efficient",),
           "plus = (P + sum(f(u) for u in own)) // 2\n            m = min(plus, P - plus)",
           "plus = (N + sum(f(u) for u in inherited + own)) // 2\n"
           "            m = min(plus, N - plus)"),
    Mutant("pairs: x = sample 2j + 1, y = sample 2j", ("efficient",),
           "x, y = pairs.point(2 * j), pairs.point(2 * j + 1)",
           "y, x = pairs.point(2 * j), pairs.point(2 * j + 1)"),
    Mutant("switching order descending", ("efficient",),
           "key=lambda i: (order_words.word(j * n + i), i)",
           "key=lambda i: (-order_words.word(j * n + i), i)"),
    Mutant("switching priority word j*64 + i", ("efficient",),
           "key=lambda i: (order_words.word(j * n + i), i)",
           "key=lambda i: (order_words.word(j * 64 + i), i)"),
    Mutant("binary search mid rounded up", ("efficient",),
           "mid = (lo + hi) // 2", "mid = (lo + hi + 1) // 2"),
    Mutant("correlation over the pairs' first points only", ("efficient",),
           "for u in (x, y):", "for u in (x,):"),
    Mutant("correlation without inherited points", ("efficient",),
           "corr = [sum(f(u) * _value(u, i) for u in inherited) for i in range(n)]",
           "corr = [0] * n"),
    Mutant("inherited from the parent only", ("efficient",),
           "for depth in range(len(path)):", "for depth in range(len(path) - 1, len(path)):"),
    Mutant("inherited points outside the subcube", ("efficient",),
           "points += [u for u in own if u & fixed == ones]", "points += own"),
    Mutant("candidates need no vote", ("efficient",),
           "if votes[i] > 0]", "if votes[i] >= 0]"),
    Mutant("vote ranking ties to the highest index", ("efficient",),
           "ranked = sorted(free, key=lambda i: (-votes[i], i))",
           "ranked = sorted(free, key=lambda i: (-votes[i], -i))"),
    Mutant("leaders tie to the highest index", ("efficient",),
           "return min(free, key=lambda i: (-scores[i], i))",
           "return min(free, key=lambda i: (-scores[i], -i))"),
    Mutant("correlation leader by signed c", ("efficient",),
           "leader = _leader([abs(c) for c in corr], free)", "leader = _leader(corr, free)"),
    Mutant("a new candidate flipped from the round's first pair", ("efficient",),
           "measured = edges.setdefault(v, [])",
           "measured = edges.setdefault(v, [0] * (schedule[index - 2] if index > 1 else 0))"),
    Mutant("influence ranking ties to the highest index", ("efficient",),
           "ranked = sorted(candidates, key=lambda v: (-sum(edges[v]), v))",
           "ranked = sorted(candidates, key=lambda v: (-sum(edges[v]), -v))"),
    Mutant("one candidate: no lead (a = b = 0)", ("efficient",),
           "a, b = sum(edges[leader]), 0", "a, b = 0, 0"),
    Mutant("sign test passes a zero lead", ("efficient",),
           "return a - b > 0 and", "return a - b >= 0 and"),
    Mutant("sign test at level L (not 2L)", ("efficient",),
           "(a - b) ** 2 >= (2.0 * L) * (a + b)", "(a - b) ** 2 >= L * (a + b)"),
    Mutant("rule 7 at 2 Pi > E_leader", ("efficient",),
           "if Pi > 0 and 2 * Pi >= sum(edges[leader]):",
           "if Pi > 0 and 2 * Pi > sum(edges[leader]):"),
    Mutant("rule 7 with q = own points", ("efficient",),
           "Pi, q = sum(probes), done", "Pi, q = sum(probes), 2 * done"),
    Mutant("rule 7 at 2^k (q - 2 Pi) < q", ("efficient",),
           "max(q - 2 * Pi, 0) * 2 ** (k + 1) <= q", "max(q - 2 * Pi, 0) * 2 ** (k + 1) < q"),
    Mutant("rule 7 without the leader gate", ("efficient",),
           "if Pi > 0 and 2 * Pi >= sum(edges[leader]):", "if Pi > 0:"),
    Mutant("probe: variable w_j mod n", ("efficient",),
           "probe = free[Stream(node_key(seed, \"search-probe\", path), 0).word(j) % len(free)]",
           "probe = Stream(node_key(seed, \"search-probe\", path), 0).word(j) % len(free)"),
    Mutant("probe: word j + 1", ("efficient",),
           "0).word(j) % len(free)]", "0).word(j + 1) % len(free)]"),
    Mutant("probes re-measured for every pair at the noisy cap", ("efficient",),
           "for j, (x, fx) in enumerate(firsts) if j >= len(probes)]",
           "for j, (x, fx) in enumerate(firsts)]"),
    Mutant("rule 4 at m < eps P", ("efficient",),
           "m <= eps * P and 2 * sum(probes) >= m", "m < eps * P and 2 * sum(probes) >= m"),
    Mutant("rule 4 at 2 Pi > m", ("efficient",),
           "m <= eps * P and 2 * sum(probes) >= m", "m <= eps * P and 2 * sum(probes) > m"),
    Mutant("rule 4 without the probe gate", ("efficient",),
           "m <= eps * P and 2 * sum(probes) >= m", "m <= eps * P"),
    Mutant("rule 4 share over N", ("efficient",),
           "m <= eps * P and 2 * sum(probes) >= m", "m <= eps * N and 2 * sum(probes) >= m"),
    Mutant("vote structure at ln(2/delta)", ("efficient",),
           "L1 = ln_upper(1 / delta)", "L1 = ln_upper(2 / delta)"),
    Mutant("vote structure variance mean", ("efficient",),
           "variance = mean * (1.0 - 1.0 / F)", "variance = mean"),
    Mutant("vote structure always at F = 1", ("efficient",),
           "vote_structure = a_v > 0", "vote_structure = True"),
    Mutant("correlation structure at ln(F/delta)", ("efficient",),
           "ln_upper(Fraction(2 * F) / delta)", "ln_upper(Fraction(F) / delta)"),
    Mutant("correlation structure over own points (2P)", ("efficient",),
           "c * c >= (2 * N) *", "c * c >= (2 * P) *"),
    Mutant("structure from votes only", ("efficient",),
           "structure = vote_structure or c * c", "structure = vote_structure and c * c"),
    Mutant("rule 5 splits on the vote leader", ("efficient",),
           'split = (_leader([abs(ci) for ci in corr], free), "correlation"',
           'split = (_leader(votes, free), "correlation"'),
    Mutant("guesswork at ln(K/delta)", ("efficient",),
           "Lg = ln_upper(Fraction(K + 1) / delta)", "Lg = ln_upper(Fraction(K) / delta)"),
    Mutant("certified leaf labelled with inherited and fresh points", ("efficient",),
           "if certified:  # rule 1", "if False:  # rule 1"),
    Mutant("early leaf without its own points", ("efficient",),
           "labelled = inherited + own\n", "labelled = list(inherited)\n"),
    Mutant("leaf tops up leaf_samples fresh points", ("efficient",),
           'wanted = params["leaf_samples"] - len(labelled)', 'wanted = params["leaf_samples"]'),
    Mutant("leaf fresh points of purpose search", ("efficient",),
           'fresh = NodeSamples(seed, "search-leaf", path, n)',
           'fresh = NodeSamples(seed, "search", path, n)'),
    Mutant("Z with eps and delta as decimal literals", ("efficient",),
           "delta = Fraction(params[\"delta\"])\n        Z = math.ceil(Fraction(ln_upper_exact("
           "Fraction(2 * R) / delta)) / Fraction(eps))",
           "delta = Fraction(repr(params[\"delta\"]))\n        Z = math.ceil(Fraction("
           "ln_upper_exact(Fraction(2 * R) / delta)) / Fraction(repr(eps)))"),
    Mutant("probe counts the free variables from the highest", ("efficient",),
           "probe = free[Stream(", "probe = free[::-1][Stream("),
    Mutant("rule 6 splits on the vote leader", ("efficient",),
           "split = influence + (False, guess)",
           "split = (_leader(votes, free),) + influence[1:] + (False, guess)"),
    Mutant("rule-4 leaf recorded as certified null", ("efficient",),
           "if not structure and m <= eps * P and 2 * sum(probes) >= m:  # rule 4\n"
           "                certified = False",
           "if not structure and m <= eps * P and 2 * sum(probes) >= m:  # rule 4\n"
           "                certified = None"),
    Mutant("leaf without inherited points", ("efficient",),
           "labelled = inherited + own\n", "labelled = list(own)\n"),
    Mutant("split records own points as samples", ("efficient",),
           "row = _node_row(path, done, sure, variable, V, 0)",
           "row = _node_row(path, 2 * done, sure, variable, V, 0)"),
]

EQUIVALENT = [
    Mutant("T from the effective rate", PAPER,
           'threshold = noise_threshold(params["requested_noise_rate"])',
           'threshold = noise_threshold(params["noise_rate"])',
           why="the effective rate is T / 2^15 exactly, and round(T) = T"),
    Mutant("found coordinate o_lo", ("efficient",),
           "return order[hi - 1]", "return order[lo]",
           why="the search ends with hi = lo + 1"),
    Mutant("search compares with f(y)", ("efficient",),
           "if f(hybrid) == fx:", "if f(hybrid) != f(y):",
           why="values are ±1 and f(y) != f(x) for a searched pair"),
    Mutant("rule 7 without Pi > 0", ("efficient",),
           "if Pi > 0 and 2 * Pi >= sum(edges[leader]):",
           "if 2 * Pi >= sum(edges[leader]):",
           why="at Pi = 0, 2 (q - 0) <= q fails for every q >= 1, so k = 0 either way"),
    Mutant("rule 7 without max(., 0)", ("efficient",),
           "max(q - 2 * Pi, 0) * 2 ** (k + 1) <= q", "(q - 2 * Pi) * 2 ** (k + 1) <= q",
           why="a negative q - 2 Pi passes as 0 does"),
    Mutant("sign test strict", ("efficient",),
           "(a - b) ** 2 >= (2.0 * L) * (a + b)", "(a - b) ** 2 > (2.0 * L) * (a + b)",
           why="(a - b)^2 never equals (2.0 * L) * (a + b): for every L = ln_upper(v) "
               "(k/64 * 0.693147180559946 rounded to a double, k <= 4096, so every v < "
               "2^64) and every a + b <= 2^20 the double product is an integer 16 times "
               "and never a perfect square (checked by enumeration)"),
    Mutant("leaf stop at lo >= 0.5", ("adaptive",),
           "if lo > 0.5 or", "if lo >= 0.5 or",
           why="lo is 0, r*r or 1 - min(r*r, 1) for a double r; 1 - x is exact near 0.5 "
               "and no double r has r*r == 0.5 (0x1.6a09e667f3bcdp-1 squares to "
               "0.5000000000000001, the double below it to 0.4999999999999999)"),
    Mutant("leaf stop at up <= 0.5", ("adaptive",),
           "up < 0.5 or", "up <= 0.5 or",
           why="as for lo: up is min(r*r, 1) or 1 - r*r or 1, never 0.5"),
]


# -- running a mutant ------------------------------------------------------------------

def source() -> str:
    return REFERENCE.read_text()


def mutate(mutant: Mutant) -> types.ModuleType:
    """The reference with ``mutant`` applied, as a fresh module (the philox blocks shared)."""
    text = source()
    count = text.count(mutant.old)
    if count != 1:
        raise LookupError(f"mutant {mutant.name!r}: its text occurs {count} times in "
                          f"{REFERENCE.name}, not once: update the mutant")
    module = types.ModuleType(f"spec_reference_mutant_{abs(hash(mutant.name))}")
    module.__dict__["__file__"] = str(REFERENCE)
    exec(compile(text.replace(mutant.old, mutant.new), str(REFERENCE), "exec"),
         module.__dict__)
    module.philox_block = _philox  # no mutant changes Philox: share its blocks
    return module


@cache
def _reference() -> types.ModuleType:
    module = types.ModuleType("spec_reference_unmutated")
    exec(compile(source(), str(REFERENCE), "exec"), module.__dict__)
    return module


_BLOCKS: dict[tuple[int, int], tuple[int, int, int, int]] = {}


def _philox(counter: int, key: int) -> tuple[int, int, int, int]:
    block = _BLOCKS.get((counter, key))
    if block is None:
        if len(_BLOCKS) > 1 << 18:  # about 100 MB
            _BLOCKS.clear()
        block = _BLOCKS[(counter, key)] = _reference().philox_block(counter, key)
    return block


@cache
def _oracle(spec: str):
    """The case's oracle from the unmutated reference, its values memoised."""
    f = _reference().build_oracle(json.loads(spec))
    values: dict[int, int] = {}

    def memo(point: int) -> int:
        value = values.get(point)
        if value is None:
            value = values[point] = f(point)
        return value
    return memo


def detects(module: types.ModuleType, modes: tuple[str, ...], stored: dict) -> str | None:
    """The first stored vector of ``modes`` the mutated reference ``module`` fails, or None."""
    if "adaptive" in modes:
        for case in stored["adaptive_bounds"]["log_terms"]:
            if module.log_term(case["events"], case["delta"]).hex() != case["L"]:
                return f"adaptive log term E={case['events']}"
        for c, q, L, upper, lower in stored["adaptive_bounds"]["bounds"]:
            L = float.fromhex(L)
            if (module.upper(c, q, L).hex(), module.lower(c, q, L).hex()) != (upper, lower):
                return f"adaptive bound c={c} q={q}"
    for case in sorted(stored["reconstructions"], key=_cost):
        if case["mode"] not in modes:
            continue
        queries = case["queries"]
        points = _reference().query_points(queries["seed"], queries["purpose"], queries["n"],
                                           queries["count"])
        f = _oracle(json.dumps(case["oracle"], sort_keys=True))
        for seed in case["seeds"]:
            try:
                answers, decisions = module.answers(f, seed, points, case["params"],
                                                    case["mode"])
            except Exception as error:  # a mutant that crashes on a vector is caught by it
                return f"{case['name']} seed {seed}: {type(error).__name__}"
            decisions, reports = module.reports(decisions)
            if "answers" in case and answers != case["answers"][str(seed)]:
                return f"{case['name']} seed {seed}: answers"
            if "decisions" in case and decisions != case["decisions"][str(seed)]:
                return f"{case['name']} seed {seed}: decisions"
            if "reports" in case and reports != case["reports"][str(seed)]:
                return f"{case['name']} seed {seed}: reports"
    return None


def _cost(case: dict) -> int:
    """About the reference's work on a case: small cases are run first, as most
    mutants fail the first case of their mode."""
    params = case["params"]
    return params["n"] * (params["score_samples"] + params["leaf_samples"]) * len(case["seeds"])


def load(path: Path = VECTORS) -> dict:
    return json.loads(path.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=Path, default=VECTORS,
                        help="known-answer file to check against (default: the stored one)")
    parser.add_argument("--equivalent", action="store_true",
                        help="also run the mutants argued equivalent (they should pass)")
    args = parser.parse_args(argv)
    stored = load(args.vectors)
    totals: dict[str, list[int]] = {}
    survivors = []
    for mutant in MUTANTS:
        caught = detects(mutate(mutant), mutant.modes, stored)
        print(f"{'caught' if caught else 'PASSES':7} {mutant.name}" +
              (f"  [{caught}]" if caught else ""), file=sys.stderr, flush=True)
        for group in ("paper", "efficient"):
            if set(mutant.modes) & ({"efficient"} if group == "efficient" else set(PAPER)):
                totals.setdefault(group, [0, 0])
                totals[group][0] += caught is not None
                totals[group][1] += 1
        if caught is None:
            survivors.append(mutant.name)
    for group, (caught, total) in totals.items():
        print(f"{group}: {caught} of {total} mutants detected by the vectors alone "
              f"({100 * caught / total:.0f}%)")
    if survivors:
        print("not detected: " + "; ".join(survivors))
    if args.equivalent:
        for mutant in EQUIVALENT:
            caught = detects(mutate(mutant), mutant.modes, stored)
            print(f"equivalent {'CAUGHT' if caught else 'passes'}: {mutant.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""An independent implementation of docs/randomness.md, written from the spec alone.

Pure Python integers throughout: no numpy, no ``numpy.random.Philox``, no
import of :mod:`lca` (only ``xxhash`` for XXH3-128). A point of ``n``
coordinates is one Python int whose bit ``i`` is ``b_i = (1 - x_i) / 2``.
``tests/test_spec_reference.py`` checks it against
``tests/data/known_answers.json``; section numbers below are those of
``docs/randomness.md``.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import xxhash

MASK64 = (1 << 64) - 1

# -- Philox4x64-10 (Salmon et al., Random123) --------------------------------

_M0, _M1 = 0xD2E7470EE14C6C93, 0xCA5A826395121157
_W0, _W1 = 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B


def philox_block(counter: int, key: int) -> tuple[int, int, int, int]:
    """Philox4x64-10 of a 256-bit counter under a 128-bit key (word 0 = low bits)."""
    c0, c1, c2, c3 = (counter & MASK64, (counter >> 64) & MASK64,
                      (counter >> 128) & MASK64, counter >> 192)
    k0, k1 = key & MASK64, key >> 64
    for round_ in range(10):
        if round_:
            k0 = (k0 + _W0) & MASK64
            k1 = (k1 + _W1) & MASK64
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> 64) ^ c1 ^ k0, p1 & MASK64,
                          (p0 >> 64) ^ c3 ^ k1, p0 & MASK64)
    return c0, c1, c2, c3


class Stream:
    """Words of one stream (§3): word ``j`` of stream ``s`` is output word
    ``j mod 4`` of the block with 256-bit counter ``s * 2^64 + j div 4``."""

    def __init__(self, key: int, stream: int) -> None:
        self.key = key
        self.base = stream << 64
        self.cache: dict[int, tuple[int, int, int, int]] = {}

    def word(self, j: int) -> int:
        block = j >> 2
        words = self.cache.get(block)
        if words is None:
            words = self.cache[block] = philox_block((self.base + block) % (1 << 256),
                                                     self.key)
        return words[j & 3]


# -- keys (§2) and constructor keys (§8) -------------------------------------

def _u64(value: int) -> bytes:
    return struct.pack("<Q", value)


def _frame(data: bytes) -> bytes:
    return _u64(len(data)) + data


def node_key(seed: int, purpose: str, path) -> int:
    data = _frame(b"lca/v1") + _u64(seed) + _frame(purpose.encode()) + _u64(len(path))
    for var, value in path:
        data += _u64(var) + (b"\x01" if value == -1 else b"\x00")
    return xxhash.xxh3_128_intdigest(data)


def constructor_key(purpose: str, seed: int) -> int:
    return xxhash.xxh3_128_intdigest(b"lca/targets/v1" + _frame(purpose.encode()) + _u64(seed))


# -- samples (§3-§5) ---------------------------------------------------------

def sample_word_count(n: int) -> int:
    return -(-n // 64)


def raw_sample(stream: Stream, n: int, k: int) -> int:
    """Sample ``k`` of a stream as an int of ``n`` bits (tail cleared)."""
    width = sample_word_count(n)
    value = 0
    for w in range(width):
        value |= stream.word(k * width + w) << (64 * w)
    return value & ((1 << n) - 1)


def path_masks(path) -> tuple[int, int]:
    fixed = ones = 0
    for var, value in path:
        fixed |= 1 << var
        if value == -1:
            ones |= 1 << var
    return fixed, ones


class NodeSamples:
    """Uniform points (§4) and flip masks (§5) of one ``(seed, purpose, path)``."""

    def __init__(self, seed: int, purpose: str, path, n: int, threshold: int = 0) -> None:
        key = node_key(seed, purpose, path)
        self.n = n
        self.fixed, self.ones = path_masks(path)
        self.threshold = threshold
        self.x_stream = Stream(key, 0)
        self.planes = [Stream(key, 1 + t) for t in range(16)]

    def point(self, k: int) -> int:
        return (raw_sample(self.x_stream, self.n, k) & ~self.fixed) | self.ones

    def flips(self, k: int) -> int:
        acc = 0
        for t in range(16):  # every plane, as the spec states it (no skipping)
            word = raw_sample(self.planes[t], self.n, k)
            acc = acc | word if (self.threshold >> t) & 1 else acc & word
        return acc & ~self.fixed


def noise_threshold(rate: float) -> int:
    return round(rate * 2 ** 15)  # Python's round: half to even (§5)


def threshold_and_rate(params: dict) -> tuple[int, float]:
    """``T`` from the rate asked for (§5), and the effective ``p = T / 2^15``."""
    threshold = noise_threshold(params["requested_noise_rate"])
    return threshold, threshold / 2 ** 15


def query_points(seed: int, purpose: str, n: int, count: int) -> list[int]:
    samples = NodeSamples(seed, purpose, (), n)
    return [samples.point(k) for k in range(count)]


# -- seeded constructors (§8) ------------------------------------------------

class WordStream:
    """Sequential words under a constructor key, from counter block 1."""

    def __init__(self, purpose: str, seed: int) -> None:
        self.key = constructor_key(purpose, seed)
        self.block = 0
        self.buffer: list[int] = []

    def word(self) -> int:
        if not self.buffer:
            self.block += 1
            self.buffer = list(philox_block(self.block, self.key))[::-1]
        return self.buffer.pop()

    def below(self, bound: int) -> int:
        mask = (1 << (bound - 1).bit_length()) - 1
        while True:
            value = self.word() & mask
            if value < bound:
                return value

    def signs(self, count: int) -> list[int]:
        words = [self.word() for _ in range(-(-count // 64))]
        return [1 - 2 * ((words[j // 64] >> (j % 64)) & 1) for j in range(count)]

    def sample(self, n: int, k: int) -> list[int]:
        swapped: dict[int, int] = {}
        out = []
        for i in range(k):
            j = i + self.below(n - i)
            out.append(swapped.get(j, j))
            swapped[j] = swapped.get(i, i)
        return out


class Tree:
    """A decision tree as nested tuples: a leaf is ``±1``, a node ``(var, minus, plus)``."""

    def __init__(self, root) -> None:
        self.root = root

    def __call__(self, point: int) -> int:
        node = self.root
        while not isinstance(node, int):
            var, minus, plus = node
            node = minus if (point >> var) & 1 else plus
        return node


def random_tree(n: int, leaves: int, seed: int, labels: str = "iid") -> Tree:
    shape = WordStream("random_tree/shape", seed)
    var, minus, plus, paths = [-1], [-1], [-1], [[]]
    splittable = [0]
    for _ in range(leaves - 1):
        pick = shape.below(len(splittable))
        node = splittable[pick]
        splittable[pick] = splittable[-1]
        splittable.pop()
        used = paths[node]
        skip = shape.below(n - len(used))
        chosen = [v for v in range(n) if v not in used][skip]
        var[node] = chosen
        minus[node], plus[node] = len(var), len(var) + 1
        child_path = sorted(used + [chosen])
        for _child in range(2):
            var.append(-1)
            minus.append(-1)
            plus.append(-1)
            paths.append(child_path)
        if len(child_path) < n:
            splittable += [minus[node], plus[node]]
    values = iter(WordStream("random_tree/labels", seed).signs(leaves))

    def build(node):  # leaves get labels in pre-order: node, minus, plus
        if var[node] == -1:
            return next(values)
        low = build(minus[node])
        high = build(plus[node])
        if labels == "sibling_differing" and isinstance(low, int) and isinstance(high, int):
            high = -low
        return (var[node], low, high)
    return Tree(build(0))


def tree_nested(tree: Tree, node=None):
    """The nested-dict form of ``tree`` (``{"var", "minus", "plus"}``)."""
    node = tree.root if node is None else node
    if isinstance(node, int):
        return node
    var, minus, plus = node
    return {"var": var, "minus": tree_nested(tree, minus), "plus": tree_nested(tree, plus)}


def hidden(constructor: str, args: dict) -> dict:
    """What parity, majority, multiplexer, tribes and junta derive (§8)."""
    stream = WordStream("junta/variables" if constructor == "junta" else constructor,
                        args["seed"])
    n = args["n"]
    if constructor in ("parity", "majority"):  # order is irrelevant; stored sorted
        return {"variables": sorted(stream.sample(n, args["k"]))}
    if constructor == "multiplexer":  # k address variables, then 2^k data variables
        return {"variables": stream.sample(n, args["k"] + 2 ** args["k"])}
    if constructor == "tribes":  # tribe t is variables[t*width : (t+1)*width]
        return {"variables": stream.sample(n, args["width"] * args["count"])}
    if constructor == "junta":
        return {"variables": stream.sample(n, args["k"]),
                "table": WordStream("junta/table", args["seed"]).signs(2 ** args["k"])}
    raise NotImplementedError(constructor)


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def with_label_noise(target, rate: float, seed: int, n: int):
    threshold = math.floor(Fraction(rate) * (1 << 64))
    key = constructor_key("label_noise", seed) & MASK64

    def noisy(point: int) -> int:
        state = key
        for w in range(max(1, sample_word_count(n))):
            state = _mix64(state ^ ((point >> (64 * w)) & MASK64))
        return -target(point) if state < threshold else target(point)
    return noisy


def build_oracle(spec: dict, n: int | None = None):
    """The oracles the known-answer cases name (docs: tests/data/README.md)."""
    args = spec["args"]
    if spec["constructor"] == "random_tree":
        return random_tree(args["n"], args["leaves"], args["seed"], args.get("labels", "iid"))
    if spec["constructor"] == "parity":
        hidden_variables = hidden("parity", args)["variables"]
        return lambda point: -1 if bin(point & sum(1 << v for v in hidden_variables)).count(
            "1") % 2 else 1
    if spec["constructor"] == "with_label_noise":
        target_n = args["target"]["args"]["n"]
        return with_label_noise(build_oracle(args["target"]), args["rate"], args["seed"],
                                target_n)
    raise NotImplementedError(spec["constructor"])


# -- decisions (§6) ----------------------------------------------------------

def path_length(params: dict) -> int:
    """Internal nodes on every root-to-leaf path: ``min(depth, n)``."""
    return min(params["depth"], params["n"])


def fixed_node(f, seed: int, path, n: int, samples: int, threshold: int):
    """``(variable, D, C)`` of Figure BuildStrand step (a), ``C`` every ``C_i``."""
    pairs = NodeSamples(seed, "score", path, n, threshold)
    disagreements, flipped = 0, [0] * n
    for k in range(samples):
        x = pairs.point(k)
        flips = pairs.flips(k)
        if f(x) != f(x ^ flips):
            disagreements += 1
            for i in range(n):
                flipped[i] += (flips >> i) & 1
    on_path = {var for var, _ in path}
    agreements = [disagreements - flipped[i] for i in range(n)]
    variable = min((i for i in range(n) if i not in on_path), key=lambda i: agreements[i])
    return variable, disagreements, agreements


def leaf_total(f, seed: int, path, n: int, start: int, stop: int) -> int:
    points = NodeSamples(seed, "leaf", path, n)
    return sum(f(points.point(k)) for k in range(start, stop))


def ln_upper_exact(value: Fraction) -> Fraction:
    power = math.ceil(value) ** 64
    return Fraction((power - 1).bit_length(), 64) * Fraction(693147180559946, 10 ** 15)


def ln_upper(value: Fraction) -> float:
    return float(ln_upper_exact(value))


def log_term(events: int, delta: float) -> float:
    """Adaptive mode's ``L = ln_upper(E / (δ / 2))``, ``δ`` the double's exact value."""
    return ln_upper(Fraction(events) / (Fraction(delta) / 2))


def rounds(first_round: int, cap: int) -> list[int]:
    out, size = [], first_round
    while size < cap:
        out.append(size)
        size *= 2
    return out + [cap]


def upper(count: int, q: int, L: float) -> float:
    a = math.sqrt(2 * L / q)
    b = 2 * L / (3 * q)
    root = (a + math.sqrt(a * a + 4 * (count / q + b))) / 2
    return min(root * root, 1.0)


def lower(count: int, q: int, L: float) -> float:
    a = math.sqrt(2 * L / q)
    b = 2 * L / (3 * q)
    slack = count / q - b
    if not slack > 0:
        return 0.0
    root = (-a + math.sqrt(a * a + 4 * slack)) / 2
    return root * root


def adaptive_node(f, seed: int, path, params: dict):
    """``(variable or None, samples, D, C, certified)``, ``C`` every ``C_i``."""
    n, eps = params["n"], params["eps"]
    threshold, p = threshold_and_rate(params)
    schedule = rounds(params["first_round"], params["score_samples"])
    L = log_term((2 * n * n + 1) * len(schedule) * 2 ** (path_length(params) + 1),
                 params["delta"])
    pairs = NodeSamples(seed, "score", path, n, threshold)
    on_path = {var for var, _ in path}
    free = [i for i in range(n) if i not in on_path]
    rows: list[int] = []  # flip masks of the disagreeing samples
    done = 0
    for size in schedule:
        for k in range(done, size):
            x = pairs.point(k)
            flips = pairs.flips(k)
            if f(x) != f(x ^ flips):
                rows.append(flips)
        done = size
        flipped = [sum((row >> i) & 1 for row in rows) for i in range(n)]
        D = len(rows)
        agreements = [D - flipped[i] for i in range(n)]
        leader = min(free, key=lambda i: agreements[i])
        if upper(D, size, L) <= p * eps:
            return None, size, D, None, True
        leader_rows = [row for row in rows if (row >> leader) & 1]
        certified = True
        for j in free:
            if j == leader:
                continue
            both = sum((row >> j) & 1 for row in leader_rows)
            gain, loss = flipped[j] - both, flipped[leader] - both
            if not (upper(gain, size, L) - lower(loss, size, L)) / (1 - p / 2) <= params["tau"]:
                certified = False
                break
        if certified:
            return leader, size, D, agreements, True
    return leader, size, D, agreements, False


def adaptive_leaf(f, seed: int, path, params: dict):
    """``(total, samples, certified)``."""
    n, eps = params["n"], params["eps"]
    schedule = rounds(params["first_round"], params["leaf_samples"])
    L = log_term(4 * len(schedule) * 2 ** (path_length(params) + 1), params["delta"])
    total = done = 0
    for size in schedule:
        total += leaf_total(f, seed, path, n, done, size)
        done = size
        plus = (size + total) // 2
        up = min(upper(plus, size, L), 1 - lower(size - plus, size, L))
        lo = max(lower(plus, size, L), 1 - upper(size - plus, size, L))
        if lo > 0.5 or up < 0.5 or (up <= (1 + eps) / 2 and lo >= (1 - eps) / 2):
            return total, size, True
    return total, done, False


def _node_row(path, samples, certified, variable, disagreements, agreements) -> dict:
    return {"path": [list(step) for step in path], "kind": "NodeDecision",
            "samples": samples, "certified": certified, "variable": variable,
            "disagreements": disagreements, "agreements": agreements}


def exceeds_binomial(count: int, trials: int, rate: Fraction, L: float) -> bool:
    """Bernstein, exact rationals but ``L``: ``count`` significantly above ``Bin(trials, rate)``."""
    excess = count - trials * rate
    variance = trials * rate * (1 - rate)
    return excess > 0 and excess * excess >= 2 * (variance + excess / 3) * Fraction(L)


def _score_row(path, samples, certified, variable, D, C: list[int], threshold: int,
               n: int) -> dict:
    """A score-estimator node row with its reporting fields (§6, "Reporting")."""
    row = _node_row(path, samples, certified, variable, D, C[variable])
    on_path = {var for var, _ in path}
    others = [i for i in range(n) if i not in on_path and i != variable]
    flipped = D - C[variable]
    guess = not exceeds_binomial(flipped, D, Fraction(threshold, 1 << 16),
                                 ln_upper(Fraction(20 * (n - len(path)))))
    runner = min(others, key=lambda i: C[i]) if others else None
    margin = low = None
    if runner is not None:
        margin = C[runner] - C[variable]
        trials = 2 * D - C[variable] - C[runner]
        low = not (margin > 0 and margin * margin >= 2 * ln_upper(Fraction(20)) * trials)
    row["report"] = {"runner_up": runner, "margin": margin, "low_margin": bool(low),
                     "guesswork": guess}
    return row


def _leaf_row(path, samples, certified, total) -> dict:
    return {"path": [list(step) for step in path], "kind": "LeafDecision",
            "samples": samples, "certified": certified, "label": 1 if total >= 0 else -1,
            "total": total}


def decide_fixed(f, seed: int, path, params: dict) -> dict:
    """§6, fixed mode: the decision at ``path`` as a known-answer ``decisions`` row
    (a node's reporting fields under ``"report"``)."""
    n = params["n"]
    if len(path) < path_length(params):
        threshold, _ = threshold_and_rate(params)
        var, D, C = fixed_node(f, seed, path, n, params["score_samples"], threshold)
        return _score_row(path, params["score_samples"], None, var, D, C, threshold, n)
    total = leaf_total(f, seed, path, n, 0, params["leaf_samples"])
    return _leaf_row(path, params["leaf_samples"], None, total)


def decide_adaptive(f, seed: int, path, params: dict) -> dict:
    """§6, adaptive mode (an early leaf is a leaf row at a shorter path)."""
    if len(path) < path_length(params):
        var, samples, D, C, certified = adaptive_node(f, seed, path, params)
        if var is not None:
            return _score_row(path, samples, certified, var, D, C,
                              threshold_and_rate(params)[0], params["n"])
    total, samples, certified = adaptive_leaf(f, seed, path, params)
    return _leaf_row(path, samples, certified, total)


# -- efficient mode (§6, "Efficient mode") -------------------------------------

def _value(point: int, i: int) -> int:
    return -1 if (point >> i) & 1 else 1


def _found_coordinate(f, order_words: Stream, n: int, j: int, x: int, y: int) -> int:
    """The binary search of pair ``j`` along its hybrid path."""
    fx = f(x)
    differing = [i for i in range(n) if ((x ^ y) >> i) & 1]
    order = sorted(differing, key=lambda i: (order_words.word(j * n + i), i))
    lo, hi = 0, len(order)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        hybrid = x
        for i in order[:mid]:
            hybrid ^= 1 << i  # x and y differ there: switching is flipping
        if f(hybrid) == fx:
            lo = mid
        else:
            hi = mid
    return order[hi - 1]


SEARCH_CANDIDATES = 2  # K of "Candidates" (lca.search.SEARCH_CANDIDATES)


def _leader(scores: list[int], free: list[int]) -> int:
    """The free variable with the largest score, ties to the lowest index."""
    return min(free, key=lambda i: (-scores[i], i))


def _candidates(votes: list[int], corr: list[int], free: list[int]) -> list[int]:
    """The first K vote leaders with at least one vote, then the correlation leader."""
    ranked = sorted(free, key=lambda i: (-votes[i], i))
    out = [i for i in ranked[:SEARCH_CANDIDATES] if votes[i] > 0]
    leader = _leader([abs(c) for c in corr], free)
    if leader not in out:
        out.append(leader)
    return out


_EFFICIENT: dict = {}  # (id(f), seed, path, params) -> (row, own points)


def _efficient(f, seed: int, path: tuple, params: dict) -> tuple[dict, list[int]]:
    key = (id(f), seed, path, tuple(sorted((k, str(v)) for k, v in params.items())))
    if key not in _EFFICIENT:
        _EFFICIENT[key] = _efficient_decide(f, seed, path, params)
    return _EFFICIENT[key]


def _inherited(f, seed: int, path: tuple, params: dict) -> list[int]:
    fixed, ones = path_masks(path)
    points = []
    for depth in range(len(path)):
        _, own = _efficient(f, seed, path[:depth], params)
        points += [u for u in own if u & fixed == ones]
    return points


def _probe_edge(f, seed: int, path: tuple, free: list[int], j: int, x: int, fx: int) -> int:
    """``p_j``: ``x_j`` with the probe of pair ``j`` negated changes ``f``?"""
    probe = free[Stream(node_key(seed, "search-probe", path), 0).word(j) % len(free)]
    return int(fx != f(x ^ (1 << probe)))


def _paired(first: list[int], second: list[int]) -> tuple[int, int]:
    a = sum(1 for u, v in zip(first, second, strict=True) if u and not v)
    b = sum(1 for u, v in zip(first, second, strict=True) if v and not u)
    return a, b


def _sign_test(a: int, b: int, L: float) -> bool:
    return a - b > 0 and (a - b) ** 2 >= (2.0 * L) * (a + b)


# One reading of the spec's search rules 1-7, in its order: kept whole to be checked against it.
def _efficient_decide(f, seed: int, path: tuple, params: dict) -> tuple[dict, list[int]]:  # noqa: C901
    n, eps = params["n"], params["eps"]
    inherited = _inherited(f, seed, path, params)
    own: list[int] = []
    certified = None
    if len(path) < path_length(params):
        on_path = {var for var, _ in path}
        free = [i for i in range(n) if i not in on_path]
        F = len(free)
        K = SEARCH_CANDIDATES
        quiet = rounds(params["first_round"], params["score_samples"])
        cap = params["score_samples"]
        schedule = quiet + [cap * 2]  # NOISY_ROUNDS = 1
        R = len(schedule)
        delta = Fraction(params["delta"])
        Z = math.ceil(Fraction(ln_upper_exact(Fraction(2 * R) / delta)) / Fraction(eps))
        Ll = ln_upper(Fraction(R * (K + 1) * K) / delta)
        pairs = NodeSamples(seed, "search", path, n)
        order_words = Stream(node_key(seed, "search-order", path), 0)
        votes = [0] * n
        corr = [sum(f(u) * _value(u, i) for u in inherited) for i in range(n)]
        firsts: list[tuple[int, int]] = []  # (x_j, f(x_j)) of every pair drawn
        edges: dict[int, list[int]] = {}  # candidate -> e_{v,j} for j < q
        probes: list[int] = []  # p_j, measured at a cap
        V = done = 0
        split = None  # (variable, rule, runner_up, margin, certified, guesswork)
        influence = None  # (leader, "influence", runner_up, a - b) of the latest round
        last = len(quiet)  # rounds this node may draw; rule 7 may raise it to R
        index = 0
        while index < last:
            size = schedule[index]
            index += 1
            for j in range(done, size):
                x, y = pairs.point(2 * j), pairs.point(2 * j + 1)
                own += [x, y]
                for u in (x, y):
                    for i in range(n):
                        corr[i] += f(u) * _value(u, i)
                firsts.append((x, f(x)))
                if f(x) != f(y):
                    V += 1
                    votes[_found_coordinate(f, order_words, n, j, x, y)] += 1
            done = size
            P, N = 2 * size, len(inherited) + 2 * size
            plus = (P + sum(f(u) for u in own)) // 2
            m = min(plus, P - plus)
            if m == 0 and P >= Z:  # rule 1, constant
                certified = True
                break
            if m == 0:  # rule 2: nothing more this round (no candidates, no flips)
                continue
            # rule 3, influence: candidates and their flip edges (kept across rounds)
            candidates = _candidates(votes, corr, free)
            for v in candidates:
                measured = edges.setdefault(v, [])
                measured += [int(fx != f(x ^ (1 << v))) for x, fx in firsts[len(measured):]]
            ranked = sorted(candidates, key=lambda v: (-sum(edges[v]), v))
            leader = ranked[0]
            runner = ranked[1] if len(ranked) > 1 else None
            if runner is None:
                a, b = sum(edges[leader]), 0
            else:
                a, b = _paired(edges[leader], edges[runner])
            influence = (leader, "influence", runner, a - b)
            if _sign_test(a, b, Ll):
                split = influence + (True, False)
                break
            if index == last:  # a cap: probes, then rule 7
                probes += [_probe_edge(f, seed, path, free, j, x, fx)
                           for j, (x, fx) in enumerate(firsts) if j >= len(probes)]
                if index == len(quiet):  # rule 7, noisy: 2^k (q - 2 Pi) <= q
                    Pi, q = sum(probes), done
                    k = 0
                    if Pi > 0 and 2 * Pi >= sum(edges[leader]):
                        while k < 1 and max(q - 2 * Pi, 0) * 2 ** (k + 1) <= q:
                            k += 1
                    last = len(quiet) + k
        else:
            # after the node's last round: structure, then rules 4-6
            a_v = votes[_leader(votes, free)]
            c = corr[_leader([abs(ci) for ci in corr], free)]
            L1 = ln_upper(1 / delta)
            if F == 1:
                vote_structure = a_v > 0
            else:
                mean = V / F
                excess = a_v - mean
                variance = mean * (1.0 - 1.0 / F)
                vote_structure = excess > 0.0 and excess * excess >= (
                    2.0 * (variance + excess / 3.0)) * L1
            structure = vote_structure or c * c >= (2 * N) * ln_upper(Fraction(2 * F) / delta)
            if not structure and m <= eps * P and 2 * sum(probes) >= m:  # rule 4
                certified = False
            elif m == 0:  # rule 5
                split = (_leader([abs(ci) for ci in corr], free), "correlation", None, 0, False,
                         False)
            else:  # rule 6; guesswork: the leader does not beat the probes
                Lg = ln_upper(Fraction(K + 1) / delta)
                guess = not _sign_test(*_paired(edges[influence[0]], probes), Lg)
                split = influence + (False, guess)
        if split is not None:
            variable, rule, runner, margin, sure, guess = split
            row = _node_row(path, done, sure, variable, V, 0)
            row |= {"rule": rule, "votes": votes[variable], "runner_up": runner,
                    "margin": margin, "low_margin": not sure, "guesswork": guess}
            return row, own
    if certified:  # rule 1: the own points alone, unanimous
        return _leaf_row(path, len(own), True, sum(f(u) for u in own)), own
    labelled = inherited + own
    wanted = params["leaf_samples"] - len(labelled)
    fresh = NodeSamples(seed, "search-leaf", path, n)
    labelled += [fresh.point(k) for k in range(max(0, wanted))]
    return _leaf_row(path, len(labelled), certified, sum(f(u) for u in labelled)), own


def decide_efficient(f, seed: int, path, params: dict) -> dict:
    """§6, efficient mode: search at nodes, labelled points reused at leaves."""
    return _efficient(f, seed, tuple(tuple(step) for step in path), params)[0]


DECIDERS = {"fixed": decide_fixed, "adaptive": decide_adaptive,
            "efficient": decide_efficient}
"""Decision rules by the ``mode`` of a known-answer case; a new mode adds its own."""


def answers(f, seed: int, queries: list[int], params: dict,
            mode: str) -> tuple[list[int], list[dict]]:
    """Answers of every query and every decision made, sorted by path."""
    decide = DECIDERS[mode]
    _EFFICIENT.clear()  # its key holds id(f), which a later oracle may reuse
    made: dict[tuple, dict] = {}
    out = []
    for z in queries:
        path: tuple = ()
        while True:
            if path not in made:
                made[path] = decide(f, seed, path, params)
            row = made[path]
            if row["kind"] == "LeafDecision":
                out.append(row["label"])
                break
            var = row["variable"]
            path = path + ((var, -1 if (z >> var) & 1 else 1),)
    return out, sorted(made.values(), key=lambda row: row["path"])


def reports(decisions: list[dict]) -> tuple[list[dict], list[dict]]:
    """The rows without the score estimator's reporting fields, and those fields
    (``{path, runner_up, margin, low_margin, guesswork}`` per node) apart."""
    rows, out = [], []
    for row in decisions:
        row = dict(row)
        report = row.pop("report", None)
        rows.append(row)
        if report is not None:
            out.append({"path": row["path"], **report})
    return rows, out

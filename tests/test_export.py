"""Tree export, readable conditions, progress bars and query/time budgets."""

import collections
import dataclasses
import json
import re

import matplotlib
import numpy as np
import pydot
import pytest

import lca
from lca import targets
from lca.export import ReconstructedTree, UnexploredNodeError
from lca.oracle import Oracle

from conftest import all_points

matplotlib.use("Agg")

N = 10
POINTS = all_points(N)


def fixed_params():
    return lca.Params.practical(n=N, depth=4, noise_rate=0.1, score_samples=100,
                                leaf_samples=50)


def adaptive_params():
    # On random_tree(seed=2) these stop early at depths 1, 2 and 3 (checked below).
    return lca.Params.practical(n=N, depth=4, noise_rate=0.5, score_samples=2000,
                                leaf_samples=500, adaptive=True, tau=0.2, eps=0.3,
                                delta=0.1)


def search_params():
    # The efficient preset's search estimator; also stops early on this target.
    return lca.Params.efficient(n=N, depth=4, pairs=256)


CASES = {"fixed": (targets.random_tree(n=N, leaves=8, seed=1), fixed_params),
         "adaptive": (targets.random_tree(n=N, leaves=8, seed=2), adaptive_params),
         "search": (targets.random_tree(n=N, leaves=8, seed=2), search_params)}

# The search estimator warns about its low-margin splits; not what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore::lca.reconstruct.LowMarginWarning")


class Named(Oracle):
    """A tree whose variables have names; records the paths ``describe`` sees."""

    def __init__(self, inner):
        self.inner = inner
        self.n = inner.n
        self.name = "named"
        self.seen = []

    def query(self, points):
        return self.inner.query(points)

    def describe(self, variable, bit, path=()):
        self.seen.append((variable, bit, path))
        return f"feature {variable} {'>=' if bit > 0 else '<'} {len(path)}.5"


@pytest.fixture(params=sorted(CASES))
def case(request):
    f, make = CASES[request.param]
    return f, make()


class TestMaterialize:
    def test_full_tree_equals_answer_many_everywhere(self, case):
        f, params = case
        tree = lca.Reconstructor(f, params).materialize(7)
        expected = lca.Reconstructor(f, params).answer_many(POINTS, 7)
        assert tree.complete
        assert np.array_equal(tree.query(POINTS), expected)
        assert np.array_equal(tree.to_decision_tree().query(POINTS), expected)
        depths = {len(path) for path in tree.leaves}
        if params.adaptive or params.estimator == "search":
            assert depths == {1, 2, 3, 4}  # early leaves: shorter paths are exercised
        else:
            assert depths == {4}

    def test_same_decisions_as_answering(self, case):
        f, params = case
        tree = lca.Reconstructor(f, params).materialize(7)
        rec = lca.Reconstructor(f, params, record=True)
        rec.answer_many(POINTS, 7)
        assert dict(tree.decisions) == {path: d for (_, path), d in rec.decisions.items()}

    def test_top_levels_only(self):
        f = CASES["fixed"][0]
        rec = lca.Reconstructor(f, fixed_params())
        tree = rec.materialize(7, depth=2)
        assert {len(p) for p in tree.decisions} == {0, 1, 2}
        assert len(tree.decisions) == 7 and len(tree.unexplored) == 8
        assert {len(p) for p in tree.unexplored} == {3}
        assert rec.last_stats.nodes_built == 7 and rec.last_stats.queries == 7 * 200
        # A second, deeper materialisation reuses the cache for the top levels.
        rec.materialize(7, depth=4)
        assert rec.last_stats.cache_hits == 7 and rec.last_stats.nodes_built == 8

    def test_refuses_astronomically_large_trees(self):
        f = targets.random_tree(n=40, leaves=8, seed=1)
        params = lca.Params.practical(n=40, depth=30, noise_rate=0.1, score_samples=10,
                                      leaf_samples=10)
        rec = lca.Reconstructor(f, params)
        with pytest.raises(ValueError, match=r"max_decisions=65536.*larger 'max_decisions'"):
            rec.materialize(7)
        assert rec.stats.queries == 0
        assert len(rec.materialize(7, depth=3).decisions) == 15

    @pytest.mark.parametrize("kwargs, error, match", [
        (dict(depth=-1), ValueError, r"'depth' parameter of Reconstructor.materialize"),
        (dict(depth=1.5), TypeError, r"'depth' .* Got 1.5"),
        (dict(max_decisions=0), ValueError, r"'max_decisions'"),
        (dict(progress="yes"), TypeError, r"'progress' .* bool"),
    ])
    def test_validation(self, kwargs, error, match):
        rec = lca.Reconstructor(CASES["fixed"][0], fixed_params())
        with pytest.raises(error, match=match):
            rec.materialize(7, **kwargs)


class TestExport:
    def test_exports_what_was_decided(self):
        f = CASES["fixed"][0]
        rec = lca.Reconstructor(f, fixed_params())
        assert rec.export(7).unexplored == ((),)
        z = POINTS[5]
        explained = rec.explain(z, 7)
        tree = rec.export(7)
        assert set(tree.decisions) == {explained.path[:k] for k in range(5)}
        assert len(tree.unexplored) == 4
        assert rec.stats.queries == explained.stats.queries  # exporting is free
        reached = tree.query(z[None, :])
        assert reached[0] == explained.label

    def test_unexplored_node_is_named(self):
        f = CASES["fixed"][0]
        rec = lca.Reconstructor(f, fixed_params())
        explained = rec.explain(POINTS[0], 7)
        tree = rec.export(7)
        with pytest.raises(UnexploredNodeError, match=r"reaches node x\d+=[+-]1 .* "
                           r"unexplored in this export of T_7") as info:
            tree.query(POINTS)
        assert info.value.path in tree.unexplored
        with pytest.raises(ValueError, match=r"4 subtree\(s\) are unexplored"):
            tree.to_decision_tree()
        assert explained.path not in tree.unexplored

    def test_evicted_entries_are_not_shown_unless_recorded(self):
        f = CASES["fixed"][0]
        small = lca.Reconstructor(f, fixed_params(), cache_size=3)
        small.answer_many(POINTS, 7)
        assert not small.export(7).complete
        recorded = lca.Reconstructor(f, fixed_params(), cache_size=3, record=True)
        recorded.answer_many(POINTS, 7)
        full = lca.Reconstructor(f, fixed_params()).materialize(7)
        assert recorded.export(7) == full

    def test_other_seeds_are_not_mixed_in(self):
        f = CASES["fixed"][0]
        rec = lca.Reconstructor(f, fixed_params())
        rec.answer_many(POINTS, 8)
        assert rec.export(7).unexplored == ((),)
        assert rec.export(8).complete


def _document():
    """A small complete tree's JSON document, its first leaf entry and its first inner node."""
    tree = lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7)
    document = json.loads(tree.to_json())
    leaf = next(i for i, e in enumerate(document["nodes"]) if e["kind"] == "leaf")
    inner = next(i for i, e in enumerate(document["nodes"])
                 if e["kind"] == "node" and e["path"])
    return tree, document, leaf, inner


def _edit(change):
    _, document, leaf, inner = _document()
    change(document, document["nodes"][leaf], document["nodes"][inner])
    return json.dumps(document)


def _set(where, key, value):
    where[key] = value


class TestJsonIsChecked:
    """A corrupted tree is refused, naming the node, never misread."""

    @pytest.mark.parametrize("change, match", [
        (lambda d, leaf, inner: _set(leaf["decision"], "label", 5),
         r"node \(\(\d+, -?1\), .*\) \(entry \d+ of 'nodes'\): a leaf's label must be -1 "
         r"or \+1\. Got 5 instead"),
        (lambda d, leaf, inner: _set(leaf["decision"], "label", 300), r"Got 300 instead"),
        (lambda d, leaf, inner: _set(leaf["decision"], "label", True),
         r"the decision's 'label' must be int\. Got True"),
        (lambda d, leaf, inner: d["nodes"].append(dict(leaf)), r"\(entry 31 of 'nodes'\) is "
                                                              r"listed twice"),
        (lambda d, leaf, inner: _set(inner["decision"], "variable", N),
         r"the variable must be in \[0, 10\) and not on the node's path\. Got 10"),
        (lambda d, leaf, inner: _set(inner["decision"], "variable", inner["path"][0][0]),
         r"not on the node's path"),
        (lambda d, leaf, inner: d.pop("n"), r"the document misses 'n'"),
        (lambda d, leaf, inner: leaf.pop("kind"), r"entry \d+ of 'nodes' misses 'kind'"),
        (lambda d, leaf, inner: leaf["decision"].pop("total"), r"'decision' misses 'total'"),
        (lambda d, leaf, inner: _set(leaf["decision"], "extra", 1),
         r"'decision' has unknown 'extra'"),
        (lambda d, leaf, inner: _set(d, "seed", 2 ** 64), r"'seed' must be an int in the range "
                                                         r"\[0, 2\*\*64\)\. Got"),
        (lambda d, leaf, inner: _set(d, "seed", 7.0), r"'seed' must be an int"),
        (lambda d, leaf, inner: _set(d, "n", 2 ** 31), r"'n' must be an int in the range "
                                                      r"\[1, 2\*\*31 - 1\]"),
        (lambda d, leaf, inner: _set(d, "n", 12), r"'params' must be .* 'n' equal to the tree's "
                                                 r"n=12"),
        (lambda d, leaf, inner: _set(d["params"], "depth", -1), r"an int 'depth' >= 0"),
        (lambda d, leaf, inner: _set(leaf, "path", leaf["path"] + [[9, 1]] * 2),
         r"path fixes variable 9 twice|has \d+ steps"),
        (lambda d, leaf, inner: _set(leaf, "path", leaf["path"][:-1] + [
            [next(w for w in range(N) if w not in {v for v, _ in leaf["path"]}), 1]]),
         r"is not in the tree: its parent \(.*\) is not listed as a node splitting on x\d"),
        (lambda d, leaf, inner: _set(leaf, "path", [[0, 2]]), r"path value must be -1 or \+1"),
        (lambda d, leaf, inner: d["nodes"].pop(0), r"node \(\(\d+, -?1\),\) is not in the "
                                                 r"tree: its parent \(\) is not listed"),
        (lambda d, leaf, inner: _set(inner, "conditions", ["a"]), r"'conditions' must be a list "
                                                                 r"of two strings"),
        (lambda d, leaf, inner: _set(leaf, "conditions", ["a", "b"]),
         r"a leaf has no 'conditions'"),
        (lambda d, leaf, inner: _set(inner, "kind", "leaf"), r"'decision' misses 'label'"),
        (lambda d, leaf, inner: _set(leaf, "kind", 3), r"unknown node kind 3"),
        (lambda d, leaf, inner: _set(d, "nodes", {}), r"'nodes' must be a list"),
        (lambda d, leaf, inner: _set(d, "oracle", None), r"'oracle' must be a string"),
        (lambda d, leaf, inner: _set(d, "version", True), r"format version True is not"),
    ])
    def test_corruptions_are_refused_naming_the_node(self, change, match):
        with pytest.raises(ValueError, match=r"^ReconstructedTree\.from_json: .*" + match):
            ReconstructedTree.from_json(_edit(change))

    @pytest.mark.parametrize("name, value", [("seed", 0), ("seed", 2 ** 64 - 1),
                                             ("n", 2 ** 31 - 1)])
    def test_the_edges_of_seed_and_n_are_read(self, name, value):
        _, document, _, _ = _document()
        document[name] = value
        document["params"]["n"] = document["n"]
        back = ReconstructedTree.from_json(json.dumps(document))
        assert getattr(back, name) == value

    @pytest.mark.parametrize("name, value, match", [
        ("seed", -1, r"'seed' must be an int in the range \[0, 2\*\*64\)\. Got -1 instead"),
        ("n", 0, r"'n' must be an int in the range \[1, 2\*\*31 - 1\]\. Got 0 instead"),
    ])
    def test_one_past_the_low_edges_of_seed_and_n_is_refused(self, name, value, match):
        _, document, _, _ = _document()
        document[name] = value
        with pytest.raises(ValueError, match=r"^ReconstructedTree\.from_json: " + match):
            ReconstructedTree.from_json(json.dumps(document))

    def test_a_one_variable_tree_is_read(self):
        _, document, leaf, _ = _document()
        root = {"path": [], "kind": "leaf", "decision": document["nodes"][leaf]["decision"]}
        document.update(n=1, nodes=[root], features={"0": "only"})
        document["params"].update(n=1, depth=0)
        back = ReconstructedTree.from_json(json.dumps(document))
        assert (back.n, list(back.decisions), back.features) == (1, [()], {0: "only"})
        assert back.params["depth"] == 0

    @pytest.mark.parametrize("label", [-1, 1])
    def test_both_labels_are_read(self, label):
        _, document, leaf, _ = _document()
        document["nodes"][leaf]["decision"]["label"] = label
        path = tuple(map(tuple, document["nodes"][leaf]["path"]))
        assert ReconstructedTree.from_json(json.dumps(document)).decisions[path].label == label

    @pytest.mark.parametrize("change, match", [
        (lambda d, leaf, inner: _set(leaf["decision"], "label", 0), r"label must be -1 or \+1\. "
                                                                    r"Got 0 instead"),
        (lambda d, leaf, inner: _set(leaf["decision"], "label", 2), r"Got 2 instead"),
        (lambda d, leaf, inner: _set(leaf["decision"], "label", -2), r"Got -2 instead"),
        (lambda d, leaf, inner: _set(leaf["decision"], "label", 1.0),
         r"the decision's 'label' must be int\. Got 1.0"),
        (lambda d, leaf, inner: _set(inner["decision"], "variable", -1),
         r"the variable must be in \[0, 10\) and not on the node's path\. Got -1"),
        (lambda d, leaf, inner: _set(inner, "conditions", ["a", "b", "c"]),
         r"'conditions' must be a list of two strings\. Got \['a', 'b', 'c'\]"),
        (lambda d, leaf, inner: _set(inner, "conditions", ["a", 2]),
         r"'conditions' must be a list of two strings"),
        (lambda d, leaf, inner: _set(d, "version", 1.0), r"format version 1.0 is not"),
        (lambda d, leaf, inner: _set(d, "version", 0), r"format version 0 is not"),
        (lambda d, leaf, inner: _set(d, "params", [10, 4]), r"'params' must be an object"),
        (lambda d, leaf, inner: d["params"].pop("depth"), r"an int 'depth' >= 0"),
        (lambda d, leaf, inner: _set(d["params"], "depth", 4.0), r"an int 'depth' >= 0"),
        (lambda d, leaf, inner: _set(d["params"], "n", True), r"'n' equal to the tree's n=10"),
        (lambda d, leaf, inner: _set(d, "class_names", ["a", "b", "c"]),
         r"'class_names' must be two strings \[minus, plus\]\. Got \['a', 'b', 'c'\]"),
        (lambda d, leaf, inner: _set(d, "class_names", ["a", 1]), r"'class_names' must be two"),
        (lambda d, leaf, inner: _set(d, "class_names", "ab"), r"'class_names' must be two"),
        # Only false is ever written (true is the default and is omitted).
        (lambda d, leaf, inner: _set(d, "uniform_mass", True),
         r"'uniform_mass' is written only as false\. Got True"),
        (lambda d, leaf, inner: _set(d, "uniform_mass", 0), r"'uniform_mass' is written only"),
    ])
    def test_one_past_each_other_edge_is_refused(self, change, match):
        with pytest.raises(ValueError, match=r"^ReconstructedTree\.from_json: .*" + match):
            ReconstructedTree.from_json(_edit(change))

    def test_a_tree_without_a_share_of_the_inputs_keeps_it_through_json(self):
        tree, document, _, _ = _document()
        assert "uniform_mass" not in document and "of inputs" in tree.to_text()
        shareless = dataclasses.replace(tree, uniform_mass=False)
        text = shareless.to_json()
        assert json.loads(text)["uniform_mass"] is False
        back = ReconstructedTree.from_json(text)
        assert back.uniform_mass is False and back.to_json() == text
        # Each leaf keeps its label and samples; only the share is gone.
        assert "of inputs" not in back.to_text() and "samples agree" in back.to_text()
        assert back.to_text() == re.sub(r"\(\S+% of inputs, ", "(", tree.to_text())

    @pytest.mark.parametrize("features", [{"0": "a", "9": "b"}, {}])
    def test_features_of_the_first_and_last_variables_are_read(self, features):
        _, document, _, _ = _document()
        document["features"] = features
        back = ReconstructedTree.from_json(json.dumps(document))
        assert back.features == {int(key): name for key, name in features.items()}

    @pytest.mark.parametrize("field, value, match", [
        ("samples", -1, r"'samples' must be in \[0, inf\]\. Got -1"),
        ("disagreements", "samples+1", r"'disagreements' must be in \[0, \d+\]"),
        ("disagreements", -1, r"'disagreements' must be in \[0, \d+\]\. Got -1"),
        ("agreements", "disagreements+1", r"'agreements' must be in \[0, \d+\]"),
        ("votes", "disagreements+1", r"'votes' must be in \[0, \d+\]"),
        ("margin", -1, r"'margin' must be in \[0, inf\]\. Got -1"),
        ("runner_up", 10, r"'runner_up' must be in \[0, 9\]\. Got 10"),
        ("runner_up", "variable", r"the runner-up must be another variable than the chosen"),
    ])
    def test_a_node_with_impossible_counts_is_refused(self, field, value, match):
        def change(document, leaf, inner):
            decision = inner["decision"]
            if isinstance(value, str):
                name, _, extra = value.partition("+")
                decision[field] = decision[name] + int(extra or 0)
            else:
                decision[field] = value
        with pytest.raises(ValueError, match=match):
            ReconstructedTree.from_json(_edit(change))
        # At the end of each range: read.
        def edge(document, leaf, inner):
            decision = inner["decision"]
            decision.update(votes=decision["disagreements"], margin=0,
                            agreements=decision["disagreements"], runner_up=9
                            if decision["variable"] != 9 else 8)
        ReconstructedTree.from_json(_edit(edge))

    @pytest.mark.parametrize("samples, total, match", [
        (4, 6, r"'total' must be in \[-4, 4\]\. Got 6"),
        (4, -6, r"'total' must be in \[-4, 4\]\. Got -6"),
        (4, 3, r"a leaf's 'total' .* has the parity of its 4 samples\. Got 3"),
        (-2, 0, r"'samples' must be in \[0, inf\]\. Got -2"),
    ])
    def test_a_leaf_with_impossible_counts_is_refused(self, samples, total, match):
        with pytest.raises(ValueError, match=match):
            ReconstructedTree.from_json(_edit(
                lambda document, leaf, inner: leaf["decision"].update(samples=samples,
                                                                      total=total)))
        for total in (-4, 4, 0):  # the ends, and the middle
            ReconstructedTree.from_json(_edit(
                lambda document, leaf, inner, t=total: leaf["decision"].update(samples=4,
                                                                               total=t)))

    @pytest.mark.parametrize("features", [
        {"10": "a"},                  # variable n
        {"-1": "a"},
        {"01": "a"},                  # "1" written otherwise: one variable could be named twice
        {"1": "a", "01": "b"},
        {"\uff13": "a"},              # a full-width 3: a digit to str.isdigit, not to to_json
        {"\u00b2": "a"},              # a superscript 2, which int() does not read
        {" 1": "a"},
        {"9" * 5000: "a"},            # too long for int() to read
        {"1": 7},                     # a name that is not a string
        {"1": None},
        ["a", "b"],                   # not an object
        "a",
    ])
    def test_bad_features_are_refused(self, features):
        _, document, _, _ = _document()
        document["features"] = features
        with pytest.raises(ValueError, match=r"^ReconstructedTree\.from_json: 'features' must "
                                             r"map variable numbers in \[0, 10\), written as "
                                             r"to_json writes them \(\"7\", not \"07\"\), to "
                                             r"names\. Got "):
            ReconstructedTree.from_json(json.dumps(document))

    def test_a_feature_named_twice_is_refused(self):
        tree, _, _, _ = _document()
        text = dataclasses.replace(tree, features={1: "a"}).to_json()
        assert '"features": {"1": "a"}' in text
        text = text.replace('"features": {"1": "a"}', '"features": {"1": "a", "1": "b"}')
        with pytest.raises(ValueError, match=r"^ReconstructedTree\.from_json: 'features' gives "
                                             r"the key '1' more than once\.$"):
            ReconstructedTree.from_json(text)

    def test_paths_are_bounded_by_the_depth(self):
        _, document, _, _ = _document()
        deepest = next(e for e in document["nodes"] if len(e["path"]) == 3)
        document["params"]["depth"] = 3  # its leaves sit at depth 4
        node = re.escape(str(tuple(map(tuple, deepest["path"]))))
        with pytest.raises(ValueError, match=rf"node {node} .*a node at depth 3 = "
                                             r"min\(depth, n\) must be a leaf"):
            ReconstructedTree.from_json(json.dumps(document))
        document["nodes"] = [e for e in document["nodes"] if e is not deepest]
        with pytest.raises(ValueError, match=r"path has 4 steps; a node has at most 3"):
            ReconstructedTree.from_json(json.dumps(document))

    @pytest.mark.parametrize("text, match", [
        ("[" * 100_000, r"nested too deeply"),
        ('{"a": ' * 100_000, r"nested too deeply"),
        (b"\xff\xfe", r"not valid JSON"),
        ('{"format": "lca.ReconstructedTree", "version": NaN}', r"'version' is 'NaN'; numbers "
                                                                 r"in a tree are finite"),
        ("9" * 5000, r"the document is '9999.*'; numbers in a tree are finite, with at most "
                     r"40 digits"),
    ])
    def test_unreadable_text_is_a_value_error(self, text, match):
        with pytest.raises(ValueError, match=match):
            ReconstructedTree.from_json(text)

    @pytest.mark.parametrize("where", ["document", "decision", "params"])
    def test_a_key_given_twice_is_refused_not_last_wins(self, where):
        tree, document, leaf, _ = _document()
        text = tree.to_json()
        if where == "document":
            text = text.replace('"seed": 7,', '"seed": 7, "seed": 8,')
            match = r"the document gives the key 'seed' more than once"
        elif where == "decision":
            label = document["nodes"][leaf]["decision"]["label"]
            text = text.replace(f'"label": {label},', f'"label": {label}, "label": {-label},', 1)
            match = r"'nodes\[\d+\]\.decision' gives the key 'label' more than once"
        else:
            text = text.replace('"n": 10, "depth"', '"n": 10, "n": 10, "depth"')
            match = r"'params' gives the key 'n' more than once"
        assert text != tree.to_json()
        with pytest.raises(ValueError, match=match):
            ReconstructedTree.from_json(text)

    def test_valid_documents_are_read_back_as_written(self, case):
        f, params = case
        rec = lca.Reconstructor(f, params)
        for tree in (rec.materialize(3, depth=2), rec.materialize(3)):
            for text in (tree.to_json(), tree.to_json(indent=2).encode()):
                back = ReconstructedTree.from_json(text)
                assert back == tree and back.to_json() == tree.to_json()



class TestFormats:
    def test_json_round_trips_exactly(self, case):
        f, params = case
        rec = lca.Reconstructor(f, params)
        for tree in (rec.materialize(7, depth=1), rec.materialize(7)):
            text = tree.to_json()
            back = ReconstructedTree.from_json(text)
            assert back == tree
            assert back.to_json() == text
            assert [type(d) for d in back.decisions.values()] == \
                [type(d) for d in tree.decisions.values()]
        document = json.loads(text)
        assert document["format"] == "lca.ReconstructedTree" and document["version"] == 1
        assert document["seed"] == 7 and document["params"]["adaptive"] == params.adaptive
        node = next(e for e in document["nodes"] if e["kind"] == "node")
        assert set(node["decision"]) == {f.name for f in dataclasses.fields(lca.NodeDecision)}

    def test_json_rejects_other_documents(self):
        tree = lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7, depth=0)
        document = json.loads(tree.to_json())
        with pytest.raises(ValueError, match="format version 2 is not supported"):
            ReconstructedTree.from_json(json.dumps(dict(document, version=2)))
        with pytest.raises(ValueError, match="not an exported lca tree"):
            ReconstructedTree.from_json("{}")
        with pytest.raises(TypeError, match="JSON string"):
            ReconstructedTree.from_json(document)

    @pytest.mark.filterwarnings("ignore:'setParseAction' deprecated")
    def test_dot_parses_with_pydot(self):
        rec = lca.Reconstructor(CASES["fixed"][0], fixed_params())
        tree = rec.materialize(7, depth=2)
        (graph,) = pydot.graph_from_dot_data(tree.to_dot())
        nodes = [n for n in graph.get_nodes() if n.get_name() not in ("node", "edge")]
        assert len(nodes) == len(tree.decisions) + len(tree.unexplored) == 15
        assert len(graph.get_edges()) == 14
        labels = {e.get_label().strip('"') for e in graph.get_edges()}
        assert labels == {c for pair in tree.conditions.values() for c in pair}
        assert sum(n.get_style() == "dashed" for n in nodes) == 8

    @pytest.mark.filterwarnings("ignore:'setParseAction' deprecated")
    def test_dot_escapes_quotes(self):
        class Quoted(Named):
            def describe(self, variable, bit, path=()):
                return f'color = "red\\{bit}"'

        tree = lca.Reconstructor(Quoted(CASES["fixed"][0]), fixed_params()).materialize(
            7, depth=0)
        (graph,) = pydot.graph_from_dot_data(tree.to_dot())
        assert len(graph.get_edges()) == 2

    @pytest.mark.filterwarnings("ignore:'setParseAction' deprecated")
    def test_dot_escapes_backslashes(self):
        # A condition ending in a backslash would otherwise escape the closing
        # quote of its label.
        from lca.render import _dot_escape

        assert _dot_escape('C:\\dir "x"\nend\\') == 'C:\\\\dir \\"x\\"\\nend\\\\'
        weird = {-1: 'path = C:\\temp\\', 1: 'say "hi"\\n\nnext'}

        class Backslashed(Named):
            def describe(self, variable, bit, path=()):
                return weird[bit]

        tree = lca.Reconstructor(Backslashed(CASES["fixed"][0]), fixed_params()).materialize(
            7, depth=0)
        (graph,) = pydot.graph_from_dot_data(tree.to_dot())
        labels = [edge.get_label()[1:-1] for edge in graph.get_edges()]
        unescaped = {re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], label)
                     for label in labels}
        assert unescaped == set(weird.values())

    def test_text_rules(self):
        tree = lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7)
        lines = tree.to_text(merge=False).splitlines()
        assert lines[0].startswith("T_7 of random_tree") and "15 internal nodes, 16 leaves" \
            in lines[0] and "merged" not in lines[0]
        leaf_lines = [line for line in lines[1:] if re.search(r": [+-]1 \(", line)]
        assert len(leaf_lines) == 16
        assert all(line.startswith(" " * 12) for line in leaf_lines)
        root = tree.decisions[()].variable
        assert lines[1] == f"x{root}=-1:"
        # Every leaf says its share of the inputs (depth 4: 1/16) and its samples.
        assert sorted(line.split(": ", 1)[1] for line in leaf_lines) == sorted(
            f"{leaf.label:+d} (6.25% of inputs, "
            f"{(leaf.samples + leaf.label * leaf.total) // 2}/{leaf.samples} samples agree)"
            for leaf in tree.leaves.values())

    def test_equal_label_siblings_are_merged_and_the_function_is_unchanged(self):
        tree = lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7)
        views = tree.shown()
        # Splits of this tree whose two leaves share a label, counted directly.
        expected = sum(
            1 for path, d in tree.internal_nodes.items()
            if all(isinstance(tree.decisions.get(path + ((d.variable, b),)), lca.LeafDecision)
                   for b in (-1, 1))
            and len({tree.decisions[path + ((d.variable, b),)].label for b in (-1, 1)}) == 1)
        assert expected == 4  # no merge cascades here: each merge is one split
        assert sum(view.merged for view in views.values()) == expected
        text = tree.to_text()
        assert f"; {expected} split(s) whose leaves all have one label shown merged (the " \
               "function is unchanged)" in text.splitlines()[0]
        assert len(text.splitlines()) == len(tree.to_text(merge=False).splitlines()) \
            - 2 * expected
        # The leaves shown compute the same function: route every point.
        shown = np.array([_shown_label(views, z) for z in POINTS])
        np.testing.assert_array_equal(shown, tree.query(POINTS))
        merged = [v for v in views.values() if v.kind == "leaf" and v.merged]
        assert all(v.mass == 0.125 and v.samples == 100 for v in merged)

    def test_merging_cascades_up_to_the_root(self):
        tree = lca.Reconstructor(lca.targets.random_tree(n=N, leaves=8, seed=1),
                                 fixed_params()).materialize(7)
        constant = dataclasses.replace(tree, decisions={
            p: (dataclasses.replace(d, label=1) if isinstance(d, lca.LeafDecision) else d)
            for p, d in tree.decisions.items()})
        views = constant.shown()
        assert list(views) == [()] and views[()].merged == 15 and views[()].mass == 1.0
        assert constant.to_text().splitlines()[1].startswith("+1 (100% of inputs")

    def test_class_and_feature_names_label_leaves_and_nodes(self):
        tree = lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7, depth=1)
        named = dataclasses.replace(tree, class_names=("no", "yes"),
                                    features={tree.decisions[()].variable: 'color "hue"'})
        dot = named.to_dot()
        assert 'label="color \\"hue\\"", shape=ellipse' in dot
        assert "yes" not in tree.to_text()
        back = ReconstructedTree.from_json(named.to_json())
        assert back == named and back.to_dot() == dot
        full = dataclasses.replace(
            lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7),
            class_names=("no", "yes"))
        leaves = [line for line in full.to_text().splitlines() if "of inputs" in line]
        assert leaves and all(": no (" in line or ": yes (" in line for line in leaves)
        with pytest.raises(ValueError, match=r"'class_names' must be two strings"):
            ReconstructedTree.from_json(json.dumps({**json.loads(named.to_json()),
                                                    "class_names": ["a"]}))

    def test_conditions_come_from_the_oracle(self):
        named = Named(CASES["fixed"][0])
        rec = lca.Reconstructor(named, fixed_params())
        explained = rec.explain(POINTS[3], 7)
        assert str(explained).startswith(f"T_7: feature {explained.path[0][0]} ")
        assert explained.conditions[2].endswith("2.5")  # describe saw the 2 ancestors
        assert all(path == explained.path[:len(path)] for _, _, path in named.seen)
        tree = rec.materialize(7, depth=1)
        assert "feature" in tree.to_text() and "feature" in tree.to_dot()
        # Conditions travel with the tree: no oracle needed after JSON.
        assert ReconstructedTree.from_json(tree.to_json()).to_text() == tree.to_text()

    def test_default_explanation_shows_conditions_and_doubts(self):
        f = CASES["fixed"][0]
        explained = lca.Reconstructor(f, fixed_params()).explain(POINTS[0], 7)
        steps = " -> ".join(
            f"x{v}={'+' if b > 0 else '-'}1" + (
                " (no better than a random variable)" if node.guesswork else
                f" (not told apart from x{node.runner_up})" if node.low_margin else "")
            for (v, b), node in zip(explained.path, explained.nodes, strict=True))
        assert str(explained).startswith(f"T_7: {steps} => {explained.label:+d}  [")

    def test_wrappers_delegate_describe(self):
        named = Named(CASES["fixed"][0])
        assert lca.CountingOracle(named).describe(3, 1) == "feature 3 >= 0.5"
        noisy = targets.with_label_noise(named, 0.1, seed=1)
        assert noisy.describe(3, -1, ((1, 1),)) == "feature 3 < 1.5"
        restricted = lca.tester.Restriction(named, ((0, 1),))
        assert restricted.describe(3, -1, ((1, 1),)) == "feature 3 < 2.5"
        assert targets.parity(n=5, k=2, seed=1).describe(4, -1) == "x4=-1"


def _shown_label(views, z):
    path = ()
    while views[path].kind == "node":
        variable = views[path].variable
        path += ((variable, int(z[variable])),)
    return views[path].label


def _boxes_per_level(ax):
    """How many node boxes the drawing has at each level (a node sits at y = -depth, an
    edge's condition between two levels)."""
    levels = [-t.get_position()[1] for t in ax.texts]
    return collections.Counter(int(y) for y in levels if y == int(y))


def _shown_per_level(tree, max_levels, merge=True):
    return collections.Counter(len(p) for p in tree.shown(merge) if len(p) <= max_levels)


class TestDraw:
    def test_draws_every_level_materialize_decided(self):
        rec = lca.Reconstructor(CASES["fixed"][0], fixed_params())
        tree = rec.materialize(7, depth=2)
        ax = tree.draw(max_levels=2)
        # Levels count as materialize's depth does: the root, its 2 children and
        # their 4 children, each of those marked as cut off (its children unexplored).
        assert _boxes_per_level(ax) == {0: 1, 1: 2, 2: 4} == _shown_per_level(tree, 2)
        assert sum(t.get_text().endswith("…") for t in ax.texts) == 4
        assert "(to depth 2)" in ax.get_title()
        matplotlib.pyplot.close(ax.figure)

    def test_caps_levels(self):
        tree = lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7)
        ax = tree.draw(max_levels=1)
        texts = [t.get_text() for t in ax.texts]
        # 3 nodes (root and its children, marked as cut off) and 2 edge conditions.
        assert len(texts) == 5 and sum(t.endswith("…") for t in texts) == 2
        assert _boxes_per_level(ax) == {0: 1, 1: 2}
        assert "(to depth 1)" in ax.get_title()
        matplotlib.pyplot.close(ax.figure)
        ax = tree.draw(max_levels=0)
        assert [t.get_text() for t in ax.texts] == [f"x{tree.decisions[()].variable} …"]
        matplotlib.pyplot.close(ax.figure)
        ax = tree.draw(max_levels=10, merge=False)
        assert len(ax.texts) == 31 + 30 and "to depth" not in ax.get_title()
        assert _boxes_per_level(ax) == _shown_per_level(tree, 4, merge=False)
        matplotlib.pyplot.close(ax.figure)
        ax = tree.draw(max_levels=10)  # 4 splits merged: 8 nodes and 8 conditions fewer
        assert len(ax.texts) == 31 + 30 - 16 and "4 split(s)" in ax.get_title()
        matplotlib.pyplot.close(ax.figure)

    @pytest.mark.parametrize("max_levels, merge", [(1, True), (2, True), (4, False),
                                                   (10, True)])
    def test_fills_a_canvas_sized_from_the_tree(self, max_levels, merge):
        tree = lca.Reconstructor(CASES["fixed"][0], fixed_params()).materialize(7)
        ax = tree.draw(max_levels=max_levels, merge=merge)
        levels = _boxes_per_level(ax)
        rows = max(levels) + 1
        # A slot for each node drawn without children below it: leaves and cut-off nodes.
        slots = sum(1 for path in tree.shown(merge) if len(path) <= max_levels) - sum(
            1 for path in tree.shown(merge) if 0 < len(path) <= max_levels) // 2
        assert ax.get_xlim() == (-0.5, slots - 0.5)
        assert ax.get_ylim() == (-rows + 0.5, 0.5)
        # The axes fill the figure below the title, whose size follows the slots and rows.
        x0, y0, x1, y1 = ax.get_position().extents
        assert (x0, y0, x1) == (0.0, 0.0, 1.0) and y1 > 0.7
        width, height = ax.figure.get_size_inches()
        title = max(len(line) for line in ax.get_title().split("\n"))
        assert 1.2 * slots <= width <= max(2.2 * slots, 0.1 * title + 0.5)
        assert 0.9 <= height * y1 / rows <= 1.3
        matplotlib.pyplot.close(ax.figure)

    def test_draws_unexplored_and_uses_given_axes(self):
        rec = lca.Reconstructor(CASES["fixed"][0], fixed_params())
        rec.answer(POINTS[0], 7)
        fig, ax = matplotlib.pyplot.subplots(figsize=(3, 2))
        assert rec.export(7).draw(ax=ax) is ax
        assert sum(t.get_text() == "unexplored" for t in ax.texts) == 4  # to depth 4
        assert tuple(fig.get_size_inches()) == (3, 2)  # a given figure is left as it is
        matplotlib.pyplot.close(fig)
        with pytest.raises(ValueError, match="'max_levels'"):
            rec.export(7).draw(max_levels=-1)


class TestBudgets:
    def test_max_queries_keeps_finished_answers(self, case):
        f, params = case
        unlimited = lca.Reconstructor(f, params)
        full = unlimited.answer_many(POINTS, 7)
        spent = unlimited.last_stats.queries
        if params.adaptive or params.estimator == "search":
            # The per-decision bound exceeds the whole run: stop after the early
            # leaves near the root have finished rows, before the rest.
            budget = params.max_node_queries + params.max_leaf_queries + 3 * spent // 4
        else:
            # One query short: every leaf but the last ones is built.
            budget = spent - 1
        rec = lca.Reconstructor(f, params)
        with pytest.raises(lca.BudgetExceeded, match=r"^[^\n]*stopped at its "
                           r"max_queries=\d+ .*answers finished") as info:
            rec.answer_many(POINTS, 7, max_queries=budget)
        error = info.value
        assert error.limit == "max_queries" and error.queries <= budget
        assert error.queries == error.stats.queries == rec.stats.queries
        assert error.answers.dtype == np.int8 and error.finished.dtype == bool
        assert np.array_equal(error.answers[error.finished], full[error.finished])
        assert np.all(error.answers[~error.finished] == 0)
        assert 0 < error.finished.sum() < len(POINTS)
        # Decisions built before stopping are cached: finishing costs the rest only.
        rest = rec.answer_many(POINTS, 7)
        assert np.array_equal(rest, full)

    def test_budget_is_never_exceeded(self, case):
        f, params = case
        for budget in range(0, 12000, 700):
            rec = lca.Reconstructor(f, params)
            try:
                answers = rec.answer_many(POINTS, 7, max_queries=budget)
            except lca.BudgetExceeded as error:
                assert error.queries <= budget
            else:
                assert rec.last_stats.queries <= budget
                assert np.array_equal(answers, lca.Reconstructor(f, params).answer_many(
                    POINTS, 7))

    def test_per_decision_caps_hold(self, case):
        f, params = case
        tree = lca.Reconstructor(f, params).materialize(7)

        def cap(path, decision):
            if len(path) == params.path_length:
                return params.max_leaf_queries
            if isinstance(decision, lca.NodeDecision):
                return params.max_node_queries
            return params.max_node_queries + params.max_leaf_queries  # an early leaf

        for path, decision in tree.decisions.items():
            fresh = lca.Reconstructor(f, params, cache_size=0)
            assert fresh.decide(7, path) == decision
            # The efficient mode decides the ancestors first (a node reuses
            # their points); each decision spends at most its own cap.
            built = fresh.last_built
            assert built == ([path[:k] for k in range(len(path) + 1)]
                             if params.estimator == "search" else [path])
            assert fresh.last_stats.queries <= sum(cap(p, tree.decisions[p]) for p in built)
        if params.estimator == "score":
            assert params.max_node_queries == 2 * params.score_samples
        else:
            # Search: rounds 64, 128, 256, noisy 512 (Q); per pair of Q, 2 points,
            # ceil(log2 10) = 4 hybrids and a probe; 3 candidates a round.
            assert params.max_node_queries == 512 * (2 + 4 + 1) + 3 * (64 + 128 + 256 + 512)
        assert params.max_leaf_queries == params.leaf_samples

    @pytest.mark.parametrize("memo_bytes", [None, 0])
    def test_every_decision_stays_within_its_checked_bound(self, case, memo_bytes,
                                                           monkeypatch):
        # The budget check relies on this: what building a decision spends is
        # at most the cap reserved for it. memo_bytes=0 keeps no packed points,
        # so the efficient mode re-derives its ancestors' points every time.
        if memo_bytes is not None:
            monkeypatch.setattr(lca.reconstruct, "_MEMO_BYTES", memo_bytes)
        f, params = case
        checked = []
        advance = lca.engine.Scheduler._advance

        def recording(scheduler, task, values):
            done = advance(scheduler, task, values)
            if done:
                checked.append((task.spent, task.cap))
            return done

        monkeypatch.setattr(lca.engine.Scheduler, "_advance", recording)
        rec = lca.Reconstructor(f, params, cache_size=2)
        for seed in (7, 8):
            rec.answer_many(POINTS, seed)  # a level at a time, in groups
        groups = len(checked)
        built = rec.stats.nodes_built + rec.stats.leaves_built
        assert 0 < groups < built
        # Under a budget, every decision is its own task: each one checked.
        for seed in (7, 8):
            rec.answer_many(POINTS, seed + 2, max_queries=10 ** 12)
        assert len(checked) - groups == rec.stats.nodes_built + rec.stats.leaves_built - built
        assert all(spent <= cap for spent, cap in checked)
        assert sum(spent for spent, _ in checked) == rec.stats.queries

    def test_cache_hits_are_free(self):
        f = CASES["fixed"][0]
        rec = lca.Reconstructor(f, fixed_params())
        full = rec.answer_many(POINTS, 7)
        assert np.array_equal(rec.answer_many(POINTS, 7, max_queries=0), full)

    def test_time_limit(self, monkeypatch):
        # A fake clock that advances one second per reading makes this exact:
        # the call reads it once at its start, then before starting each
        # decision and before each oracle call, and stops at the first
        # reading at or past the limit.
        ticks = iter(range(10 ** 6))
        monkeypatch.setattr(lca.engine.time, "monotonic", lambda: next(ticks))
        monkeypatch.setattr(lca.reconstruct.time, "monotonic", lambda: next(ticks))
        f = CASES["fixed"][0]
        rec = lca.Reconstructor(f, fixed_params())
        with pytest.raises(lca.BudgetExceeded, match=r"time_limit=4\.5 s") as info:
            rec.answer_many(POINTS, 7, time_limit=4.5)
        assert info.value.limit == "time_limit"
        # Readings 1 (admit the root), 2 (its oracle call), 3 (admit the
        # children, decided as one group), 4 (their call), 5 (admit the next
        # level: past 4.5). Three nodes were built, no leaf.
        assert rec.last_stats.nodes_built == 3 and rec.last_stats.leaves_built == 0
        assert rec.last_stats.queries == 3 * 2 * fixed_params().score_samples
        assert not info.value.finished.any()

    def test_time_limit_past_before_the_first_decision_spends_nothing(self, monkeypatch):
        ticks = iter(range(10 ** 6))
        monkeypatch.setattr(lca.engine.time, "monotonic", lambda: next(ticks))
        monkeypatch.setattr(lca.reconstruct.time, "monotonic", lambda: next(ticks))
        rec = lca.Reconstructor(CASES["search"][0], CASES["search"][1]())
        with pytest.raises(lca.BudgetExceeded) as info:
            rec.answer_many(POINTS, 7, time_limit=0.5)
        assert info.value.queries == 0 and rec.stats.queries == 0
        assert rec.last_built == []

    def test_progress_changes_nothing(self, capsys):
        f = CASES["fixed"][0]
        quiet = lca.Reconstructor(f, fixed_params()).answer_many(POINTS, 7)
        rec = lca.Reconstructor(f, fixed_params())
        loud = rec.answer_many(POINTS, 7, progress=True, max_queries=10 ** 6,
                               time_limit=3600)
        assert np.array_equal(quiet, loud)
        err = capsys.readouterr().err
        assert "lca answers: 100%" in err and "1024/1024" in err
        explained = rec.explain(POINTS[1], 7, progress=True)
        assert explained == lca.Reconstructor(f, fixed_params()).explain(POINTS[1], 7)
        assert "lca explain: 100%" in capsys.readouterr().err

    def test_bars_end_complete_after_early_leaves(self, capsys):
        f, make = CASES["search"]
        rec = lca.Reconstructor(f, make())
        assert len(rec.explain(POINTS[-1], 7, progress=True).path) < 4
        rec.materialize(7, progress=True)
        err = capsys.readouterr().err
        assert "lca explain: 100%" in err and "lca materialize: 100%" in err

    def test_pool_bar_is_tqdm(self, capsys):
        f = CASES["fixed"][0]
        result = lca.parallel.answer_parallel(f, fixed_params(), POINTS, 7, workers=1,
                                              progress=True)
        assert np.array_equal(result.answers,
                              lca.Reconstructor(f, fixed_params()).answer_many(POINTS, 7))
        assert "lca answers: 100%" in capsys.readouterr().err

    def test_exception_pickles(self):
        import pickle

        rec = lca.Reconstructor(CASES["fixed"][0], fixed_params())
        with pytest.raises(lca.BudgetExceeded) as info:
            rec.answer_many(POINTS, 7, max_queries=10)
        back = pickle.loads(pickle.dumps(info.value))
        assert str(back) == str(info.value) and back.limit == "max_queries"
        assert np.array_equal(back.finished, info.value.finished)

    @pytest.mark.parametrize("kwargs, error, match", [
        (dict(max_queries=-1), ValueError, r"'max_queries' parameter of "
         r"Reconstructor.answer_many must be an int in the range \[0, inf\)"),
        (dict(max_queries=1.0), TypeError, r"'max_queries' .* Got 1.0"),
        (dict(time_limit=0), ValueError, r"'time_limit' .* \(0.0, inf\)"),
        (dict(time_limit="1"), TypeError, r"'time_limit' .* Got '1'"),
        (dict(progress=1), TypeError, r"'progress' parameter of Reconstructor.answer_many"),
    ])
    def test_validation(self, kwargs, error, match):
        rec = lca.Reconstructor(CASES["fixed"][0], fixed_params())
        with pytest.raises(error, match=match):
            rec.answer_many(POINTS[:2], 7, **kwargs)


class TestNoiseRateWording:
    def test_zero_says_why(self):
        with pytest.raises(ValueError, match=r"re-randomisation rate p .* not the label "
                           r"noise of f\. It cannot be 0: at p = 0, y = x"):
            lca.Params.practical(n=5, depth=2, noise_rate=0, score_samples=5,
                                 leaf_samples=5)

    def test_describe_says_what_it_is(self):
        text = fixed_params().describe()
        assert "estimator's re-randomisation rate, not label noise" in text


def test_readme_section_runs(capsys):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## Reading the tree, progress and budgets", 1)[1]
    example = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    scope: dict = {}
    exec(compile(example, "README.md", "exec"), scope)
    out = capsys.readouterr()
    assert "(unexplored)" in out.out and "stopped at its max_queries=10000" in out.out
    assert "lca answers: 100%" in out.err
    assert scope["small"].leaves == len(scope["tree"].leaves)
    finished = scope["finished"]
    assert 0 < finished.sum() < finished.size
    assert np.array_equal(scope["done"], scope["rec"].answer_many(scope["points"], 9)[
        finished])


def test_trace_follows_one_point_and_names_an_unexplored_node():
    rec = lca.Reconstructor(targets.random_tree(n=8, leaves=6, seed=2),
                            lca.Params.efficient(8, depth=4))
    z = np.array([1, -1, 1, -1, 1, -1, 1, -1], dtype=np.int8)
    explained = rec.explain(z, 3)
    tree = rec.materialize(3)
    path, nodes, conditions, leaf = tree.trace(z)
    assert (path, nodes, leaf) == (explained.path, explained.nodes, explained.leaf)
    assert conditions == explained.conditions
    cut = dataclasses.replace(tree, decisions={p: d for p, d in tree.decisions.items()
                                               if p != path})
    with pytest.raises(UnexploredNodeError, match=r"ReconstructedTree.trace: the point "
                                                  r"reaches node .* which is unexplored"):
        cut.trace(z)

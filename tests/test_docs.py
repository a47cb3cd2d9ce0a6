"""The docs cannot go stale: links resolve, figures come from their record, records from the code.

Nothing here measures: ``scripts/figures.py`` does (about 4 minutes), and these
tests only compare what it recorded and rendered with today's files.
"""

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = ROOT / "scripts" / "figures.py"
_spec = importlib.util.spec_from_file_location("figures", _SCRIPT)
figures = importlib.util.module_from_spec(_spec)
sys.modules["figures"] = figures  # its dataclasses look their module up by name
_spec.loader.exec_module(figures)

LINKED_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
               ROOT / "tests" / "data" / "README.md"]

KNOWN_BROKEN: set[tuple[str, str]] = set()
"""Relative links known to be broken, each with its reason; to be emptied, not grown."""

# [text](target) and ![alt](target), with an optional "title"; text may hold one level
# of brackets ([`x[0]`](...)).
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)", re.M)


def _without_code(text):
    """The text without fenced blocks and code spans, where brackets are not links."""
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", text, flags=re.S | re.M)
    return re.sub(r"(`+)[^`]*?\1", "", text)


def relative_links(doc):
    """Every relative link and image target of ``doc``, without its #fragment."""
    text = _without_code(doc.read_text(encoding="utf-8"))
    targets = [m[1] for m in _LINK.finditer(text)] + _REFERENCE.findall(text)
    return [target.split("#", 1)[0] for target in targets
            if not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target)  # http:, mailto:, ...
            and not target.startswith("#")]


def _name(doc):
    return doc.relative_to(ROOT).as_posix()


class TestLinks:
    @pytest.mark.parametrize("doc", LINKED_DOCS, ids=_name)
    def test_every_relative_link_and_image_resolves(self, doc):
        broken = [target for target in relative_links(doc)
                  if not (doc.parent / target).exists()
                  and (_name(doc), target) not in KNOWN_BROKEN]
        assert not broken, f"{_name(doc)} links to missing files: {broken}"

    def test_known_broken_links_are_still_broken(self):
        # A fixed link leaves the list: it must not hide a later breakage.
        fixed = [(name, target) for name, target in sorted(KNOWN_BROKEN)
                 if (ROOT / name).parent.joinpath(target).exists()
                 or target not in relative_links(ROOT / name)]
        assert not fixed, f"remove from KNOWN_BROKEN: {fixed}"

    def test_the_link_finder_sees_links_and_not_code(self, tmp_path):
        doc = tmp_path / "x.md"
        doc.write_text('See [a](a.md#top), ![b](img/b.png "B"), [`c[0]`](c.md), '
                       "[web](https://example.org), [here](#here), `[d](d.md)`\n\n"
                       "```python\nx = [e](e.md)\n```\n\n[ref]: f.md\n")
        assert relative_links(doc) == ["a.md", "img/b.png", "c.md", "f.md"]


def _record():
    return json.loads(figures.RECORD.read_text(encoding="utf-8"))


class TestFigures:
    def test_every_block_is_what_the_record_renders(self):
        record = _record()
        blocks = 0
        for doc in figures.doc_files():
            text = doc.read_text(encoding="utf-8")
            blocks += len(figures.BLOCK.findall(text))
            rendered = figures.render_text(text, record, doc)
            assert rendered == text, (
                f"{_name(doc)}: a figures block differs from what docs/figures.json renders "
                "(blocks are written by `python scripts/figures.py --render-only`, not by hand)")
        # Each block name appears somewhere, and only blocks the script knows.
        shown = {m["name"] for doc in figures.doc_files()
                 for m in figures.BLOCK.finditer(doc.read_text(encoding="utf-8"))}
        assert shown == set(figures.BLOCKS) and blocks >= len(figures.BLOCKS)

    def test_no_marker_is_left_unpaired(self):
        for doc in figures.doc_files():
            text = doc.read_text(encoding="utf-8")
            opened = text.count("<!-- figures:")
            assert opened == text.count("<!-- /figures -->") == len(
                figures.BLOCK.findall(text)), f"{_name(doc)}: unpaired figures markers"

    @pytest.mark.parametrize("group", list(figures.GROUPS))
    def test_every_group_is_newer_than_the_code_it_measures(self, group):
        record = _record()["groups"]
        rerun = f"rerun `{figures.GROUPS[group].command}`"
        assert group in record, f"docs/figures.json has no group {group!r}: {rerun}"
        measures = figures.GROUPS[group].measures
        assert record[group]["measures"]["sha256"] == measures.fingerprint(), (
            f"the figures of group {group!r} are older than the files they measure "
            f"({', '.join(measures.files)}; recorded at {record[group]['commit']} on "
            f"{record[group]['date']}): {rerun}")

    def test_every_group_records_its_provenance(self):
        for name, entry in _record()["groups"].items():
            assert entry["command"] == figures.GROUPS[name].command
            assert re.fullmatch(r"[0-9a-f]{7,}(\+dirty)?|unknown", entry["commit"])
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry["date"])
            assert {"python", "numpy", "cpus", "platform", "load"} <= set(entry["machine"])
            assert entry["measures"]["files"] == list(figures.GROUPS[name].measures.files)

    def test_wrapping_never_starts_a_block(self):
        assert figures._wrapped("x" * 79 + " - b") == "x" * 79 + " - b"  # not a list item
        assert figures._wrapped("y " * 45) == ("y " * 40).strip() + "\n" + ("y " * 5).strip()
        assert figures._wrapped("* " + "z " * 45) == "* " + ("z " * 39).strip() + "\n  " + (
            "z " * 6).strip()
        assert figures._wrapped("| a | " + "b " * 50 + "|").count("\n") == 0

    def test_images_the_record_names_exist(self):
        values = _record()["groups"]
        for path in (values["demo"]["values"]["plot"], values["walkthrough"]["values"]["image"]):
            assert (ROOT / path).stat().st_size > 0


class TestFingerprint:
    def test_depends_on_content_and_paths_only(self, tmp_path, monkeypatch):
        (tmp_path / "pkg").mkdir()
        (tmp_path / "pkg" / "a.py").write_text("a = 1\n")
        (tmp_path / "pkg" / "b.py").write_text("b = 2\n")
        monkeypatch.setattr(figures, "ROOT", tmp_path)
        measures = figures.Measures(("pkg/*.py",))
        first = measures.fingerprint()
        assert measures.paths() == ["pkg/a.py", "pkg/b.py"]
        (tmp_path / "pkg" / "b.py").write_text("b = 3\n")
        assert measures.fingerprint() != first
        (tmp_path / "pkg" / "b.py").write_text("b = 2\n")
        assert measures.fingerprint() == first  # no git, no times: content alone
        (tmp_path / "pkg" / "b.py").rename(tmp_path / "pkg" / "c.py")
        assert measures.fingerprint() != first
        assert figures.Measures(("pkg/*.py",), excluding=("pkg/c.py",)).paths() == ["pkg/a.py"]

    def test_a_group_measures_what_can_move_its_figures(self):
        demo = set(figures.GROUPS["demo"].measures.paths())
        assert {"lca/cli.py", "lca/engine.py", "lca/search/group.py",
                "scripts/figures.py"} <= demo
        assert not any(path.startswith(("lca/serve/app", "lca/suite/run")) for path in demo)
        local = set(figures.GROUPS["local"].measures.paths())
        assert {"scripts/bench_local.py", "lca/models/oracle.py", "lca/suite/trained.py"} <= local
        assert "scripts/bench_serve.py" in figures.GROUPS["serve"].measures.paths()
        walkthrough = figures.GROUPS["walkthrough"].measures
        assert walkthrough.readme_code == (figures.WALKTHROUGH,)
        assert "tree.draw(max_levels=" in figures.readme_code(figures.WALKTHROUGH)

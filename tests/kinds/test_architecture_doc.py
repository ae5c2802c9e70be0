"""Issue 38 (item 6, part): docs/architecture.md's table of profile kinds names every installed kind, with its
folder (it never mentioned the torch kind), and the samples' README is no longer titled as Neuron's alone."""

from __future__ import annotations

import re

from tests_support import ROOT

from advisor import kinds


def test_every_installed_kind_has_its_row_in_the_architecture():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## Profile kinds", 1)[1].split("\n\n", 2)[1]
    rows = dict(re.findall(r"^\| `([a-z0-9_]+)` \| `([^`]+)` \|", table, re.M))
    for kind in kinds.available():
        assert rows.get(kind.name) == f"advisor/profilers/{kind.name}/", kind.name


def test_the_samples_readme_is_about_every_kind():
    assert (ROOT / "samples" / "README.md").read_text(encoding="utf-8").startswith("# Sample profiles of every kind")

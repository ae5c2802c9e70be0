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


def test_the_layer_table_is_the_import_contract_in_order():
    """docs/architecture.md's packages, top floor first, are the layers contract of pyproject.toml, so a floor
    added or moved in one (the kinds' packages on floor 11) cannot be forgotten in the other."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c["layers"] for c in contracts["contracts"] if c["type"] == "layers")
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## Packages, in layer order", 1)[1].split("\n\n", 3)[2]
    rows = re.findall(r"^\| (\d+) \| (.+?) \| ", table, re.M)
    documented = [" | ".join(sorted("advisor." + p.strip("`/").removeprefix("advisor/").removesuffix(".py")
                                    for p in packages.split(", "))) for _, packages in rows]
    assert documented == [" | ".join(sorted(layer.split(" | "))) for layer in layers]
    assert [int(n) for n, _ in rows] == list(range(len(layers), 0, -1))

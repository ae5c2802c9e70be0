"""The layer order of docs/architecture.md, enforced: import-linter's contracts in pyproject.toml
(stages import only earlier stages; core imports nothing else; adapters, event analysis and reports
of a kind stay in their layers), no circle between modules, and no import running back up a floor."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests_support import ROOT

from advisor.core.graphs import strong_components

LINT = Path(sys.executable).parent / "lint-imports"


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the package in `tree` (first on the path, so a copy shadows the installed one)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT), "--no-logo", "--no-cache"], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def test_import_contracts_hold():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_violation_is_caught(tmp_path):
    """The contracts bite: in a copy of the package, core importing the report layer breaks one."""
    shutil.copytree(ROOT / "advisor", tmp_path / "advisor", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "advisor" / "core" / "_layer_probe.py").write_text("from advisor.report import document  # noqa\n")
    done = lint(tmp_path)
    assert done.returncode != 0
    assert "advisor.core._layer_probe -> advisor.report.document" in done.stdout


def _graph() -> dict[str, set[str]]:
    """Every module of the package -> the modules of the package it imports: at the top, inside functions and
    under TYPE_CHECKING alike (grimp, import-linter's own reader)."""
    import grimp

    graph = grimp.build_graph("advisor")
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of nodes that import each other in a circle (strongly connected, more than one node)."""
    nodes = sorted({*edges, *(n for targets in edges.values() for n in targets)})
    graph = {n: sorted(edges.get(n, ())) for n in nodes}
    return sorted(sorted(group) for group in strong_components(graph) if len(group) > 1)


def _room(module: str) -> str:
    """The floor plan's room of a module: the package's top-level folder or module (`advisor` for its root)."""
    return module.split(".")[1] if "." in module else module


def test_no_module_imports_itself_back_through_others():
    """No circle anywhere in the package, the kind registry's included (kinds/base, check, contract imported
    each other through TYPE_CHECKING and function-level imports until issue 38)."""
    assert _circles(_graph()) == []


def test_the_rooms_stand_on_floors_with_no_arrow_back_up():
    """Drawn by imports, the top-level rooms (stages, the registry, the kinds' packages) form no circle, so
    every import runs down a floor: none runs back up (the review of round 4 counted 12)."""
    rooms: dict[str, set[str]] = {}
    for module, imported in _graph().items():
        rooms.setdefault(_room(module), set()).update(_room(m) for m in imported if _room(m) != _room(module))
    assert _circles(rooms) == []
    assert "profilers" in rooms and "kinds" in rooms["profilers"] and "profilers" not in set().union(*rooms.values())


def test_the_contracts_exempt_no_module_by_name():
    """The layer contract holds every module to its floor, with no `ignore_imports` keyed on module names."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert [c["name"] for c in contracts["contracts"] if c.get("ignore_imports")] == []


def test_the_circle_check_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []

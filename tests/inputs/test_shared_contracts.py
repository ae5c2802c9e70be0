"""The contracts that keep the shared trace machinery generic bite: in a copy of the package, the Perfetto
reader importing a kind, and RBLN's knowledge loader importing the adapters that share it, each break
their import-linter contract (pyproject.toml)."""

from __future__ import annotations

import shutil

from test_layers import lint
from tests_support import ROOT


def test_shared_machinery_and_the_knowledge_loader_stay_below_their_users(tmp_path):
    shutil.copytree(ROOT / "advisor", tmp_path / "advisor", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "advisor" / "inputs" / "perfetto" / "_probe.py").write_text(
        "from advisor.profilers.rbln import knowledge  # noqa\n")
    loader = tmp_path / "advisor" / "profilers" / "rbln" / "knowledge.py"
    loader.write_text(loader.read_text() + "\nfrom advisor.profilers.rbln.adapters import tracks  # noqa\n")
    done = lint(tmp_path)
    assert done.returncode != 0
    out = " ".join(done.stdout.split())  # import-linter wraps long contract names
    assert "Shared trace machinery imports no kind BROKEN" in out
    assert "advisor.inputs.perfetto._probe -> advisor.profilers.rbln.knowledge" in out
    assert "imports neither the adapters nor the event analysis that share it BROKEN" in out
    assert "advisor.profilers.rbln.knowledge -> advisor.profilers.rbln.adapters.tracks" in out

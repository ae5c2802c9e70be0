"""The layer order of docs/architecture.md, enforced: import-linter's contracts in pyproject.toml
(stages import only earlier stages; core imports nothing else; adapters, event analysis and reports
of a kind stay in their layers)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests_support import ROOT

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

"""The layer order of docs/architecture.md, enforced: import-linter's contracts in pyproject.toml
(stages import only earlier stages; core imports nothing else; adapters, event analysis and reports
of a kind stay in their layers)."""

import subprocess
import sys
from pathlib import Path

from tests_support import ROOT


def test_import_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint), "--no-logo", "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_violation_is_caught(tmp_path):
    """The contracts bite: core importing the report layer breaks one."""
    probe = ROOT / "advisor" / "core" / "_layer_probe.py"
    probe.write_text("from advisor.report import document  # noqa: F401\n")
    try:
        lint = Path(sys.executable).parent / "lint-imports"
        done = subprocess.run([str(lint), "--no-logo", "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                              timeout=300, check=False)
    finally:
        probe.unlink()
    assert done.returncode != 0
    assert "advisor.core._layer_probe -> advisor.report.document" in done.stdout

"""The wheel ships the built-in rule packs, report templates and data files."""

import subprocess
import sys
import zipfile

from tests_support import ROOT


def test_wheel_contains_rules_templates_and_data(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    [wheel] = tmp_path.glob("advisor-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("advisor/rules/neuron/pack.yaml", "advisor/rules/neuron/metrics.yaml",
                     "advisor/report_templates/markdown/report.md.j2", "advisor/kinds/neuron/data/hardware.yaml",
                     "advisor/kinds/neuron/data/conventions.yaml", "advisor/cli/__init__.py"):
        assert required in names, f"{required} missing from the wheel"
    assert not any(n.startswith(("tests/", "samples/")) for n in names)

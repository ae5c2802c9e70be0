"""The wheel ships the built-in rule packs, report templates and data files."""

import re
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
                     "advisor/report_templates/markdown/report.md.j2", "advisor/profilers/neuron/data/hardware.yaml",
                     "advisor/profilers/neuron/data/conventions.yaml", "advisor/cli/__init__.py"):
        assert required in names, f"{required} missing from the wheel"
    assert not any(n.startswith(("tests/", "samples/")) for n in names)


def test_ci_runs_the_readmes_test_command_with_the_pins():
    """`.ci/run` is the README's second command (quiet pip aside), and both install the pinned test environment,
    whose every line pins one distribution to one version."""
    root = ROOT
    blocks = re.findall(r"```sh\n(.*?)\n```", (root / "README.md").read_text(encoding="utf-8"), re.S)
    test_command = blocks[1].strip()
    ci = (root / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci.replace("pip install -q ", "pip install ") == test_command
    assert "-c .ci/constraints.txt" in test_command
    pins = [line for line in (root / ".ci" / "constraints.txt").read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", p) for p in pins), pins
    names = {p.split("==")[0].lower() for p in pins}
    assert {"pytest", "hypothesis", "pyyaml", "weasyprint", "msgspec"} <= names

"""ruff over the code, as part of the one test command."""

import shutil
import subprocess
import sys
from pathlib import Path

from tests_support import ROOT


def test_ruff_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    folders = [d for d in ("advisor", "tests", "benchmarks", "samples") if (ROOT / d).is_dir()]
    done = subprocess.run([ruff, "check", *folders], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr

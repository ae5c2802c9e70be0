"""Shared fixtures: the seed-002 profile, sample paths, running the installed CLI, and the
hypothesis profiles."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from tests_support import SAMPLES

# Property tests (tests/test_properties.py) take max_examples from the profile: "ci" keeps the
# issue's bar of at least 2,000 examples per target; "dev" is for a quick local run. The deadline
# is off in both: the shared CI machine's timing is not what these tests are about.
# HYPOTHESIS_PROFILE picks one; by default "ci" when CI is set (CI systems and .ci/run set it), else "dev".
_PROPERTY_SETTINGS = {"deadline": None,
                      "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]}
settings.register_profile("ci", max_examples=2000, print_blob=True, **_PROPERTY_SETTINGS)
settings.register_profile("dev", max_examples=200, **_PROPERTY_SETTINGS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

# Seed 002's raw profile data, as the findings doc printed it.
MP2 = json.loads((SAMPLES / "mp2_energy" / "summary.json").read_text()) if (
    SAMPLES / "mp2_energy" / "summary.json").exists() else {}


def advisor_command() -> list[str]:
    """The installed console script beside this interpreter, as a user runs it."""
    script = Path(sys.executable).parent / "advisor"
    if script.exists():
        return [str(script)]
    found = shutil.which("advisor")
    return [found] if found else [sys.executable, "-m", "advisor"]


def run_cli(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*advisor_command(), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=120, check=False)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/ from the current output (review the diff like code)")


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def mp2() -> dict:
    assert MP2, "samples/mp2_energy/summary.json is missing"
    return dict(MP2)


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text_or_bytes_or_obj) -> path in a temporary folder."""

    def _write(name: str, content: object) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
        return path

    return _write

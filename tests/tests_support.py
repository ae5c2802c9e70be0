"""Paths the tests share (importable from any test module under --import-mode=importlib)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SAMPLES = ROOT / "samples"
FIXTURES = TESTS / "fixtures"
FAKE_BIN = FIXTURES / "bin"

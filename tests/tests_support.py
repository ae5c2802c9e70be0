"""Paths the tests share (importable from any test module under --import-mode=importlib)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SAMPLES = ROOT / "samples"
SHARED_REFERENCE = ROOT.parent / "shared" / "reference"  # real files shared beside the project (CI has them)
FIXTURES = TESTS / "fixtures"
FAKE_BIN = FIXTURES / "bin"


def one_line_error(capsys, path: Path, *args: str) -> str:
    """The single stderr line of `advisor report PATH`, asserted to be an exit-2 one-liner naming the path."""
    from advisor.cli import main

    assert main(["report", str(path), *args]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"advisor: error: {path}: "), err
    assert "internal error" not in lines[0] and out == ""
    return lines[0]


def installed_kinds() -> str:
    """The installed kinds as errors list them, so a kind's folder can be removed without editing other tests."""
    from advisor import kinds

    return ", ".join(kinds.names())

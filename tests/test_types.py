"""The whole package type-checks ([tool.mypy] in pyproject.toml): a kind module that does not fit the contract's
Protocols, or a stage passing the wrong type between core dataclasses, fails here instead of at a user's."""

import sys

from mypy import api
from tests_support import ROOT


def test_the_package_type_checks(monkeypatch):
    monkeypatch.chdir(ROOT)
    limit = sys.getrecursionlimit()
    try:
        out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--no-incremental",
                                    "--cache-dir", "/dev/null"])
    finally:  # mypy raises the interpreter's recursion limit for good; the tests run after this one expect ours
        sys.setrecursionlimit(limit)
    assert status == 0, out + err

"""The kind contract and the core types type-check ([tool.mypy] in pyproject.toml names the packages):
a kind function with the wrong signature, or a stage passing the wrong type between core dataclasses,
fails here instead of at a user's."""

from mypy import api
from tests_support import ROOT


def test_the_contract_and_core_type_check(monkeypatch):
    monkeypatch.chdir(ROOT)
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--no-incremental",
                                "--cache-dir", "/dev/null"])
    assert status == 0, out + err

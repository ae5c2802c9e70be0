"""The kind contract's Protocols (advisor/kinds/contract.py) applied to the built-in kinds: each kind's
`contract_check.py` assigns its adapters, events and report modules to KindAdapters, KindEvents and KindReport
under TYPE_CHECKING, so mypy refuses a kind whose module does not satisfy them, and a module that breaks a
Protocol is an error naming the Protocol and the member."""

from __future__ import annotations

import ast
import sys
import textwrap

from mypy import api
from tests_support import ROOT

from advisor.kinds import BUILTIN

PARTS = {"tldr": "ReportTldr", "setup_rows": "ReportRows", "hardware_rows": "ReportRows"}  # optional report parts


def _mypy(*paths: str) -> tuple[int, str]:
    """mypy on `paths` as the project runs it (pyproject.toml's settings; the modules they import followed
    silently: another module's own errors are its own test's)."""
    limit = sys.getrecursionlimit()
    try:
        out, err, status = api.run([*paths, "--config-file", str(ROOT / "pyproject.toml"), "--no-incremental",
                                    "--cache-dir", "/dev/null", "--follow-imports", "silent"])
    finally:  # mypy raises the interpreter's recursion limit for good; the tests run after this one expect ours
        sys.setrecursionlimit(limit)
    return status, out + err


def _assignments(path) -> dict[str, tuple[str, str]]:
    """The `_NAME: Type = value` assignments inside the file's `if TYPE_CHECKING:` block: name -> (type, value)."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    found[item.target.id] = (ast.unparse(item.annotation), ast.unparse(item.value))
    return found


def _module(folder, name: str):
    return folder / f"{name}.py" if (folder / f"{name}.py").exists() else folder / name / "__init__.py"


def _defines(path, function: str) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == function
               for n in ast.parse(path.read_text(encoding="utf-8")).body)


def test_every_built_in_kind_declares_each_of_its_parts_against_the_contract():
    """Each kind's contract_check.py names every part its modules have: adapters (and members where they name
    a folder's files), events where the kind reads traces, the report, and each optional report part."""
    for name, package in BUILTIN.items():
        folder = ROOT / package.replace(".", "/")
        adapters, report = _module(folder, "adapters"), _module(folder, "report")
        expected = {"_ADAPTERS": ("KindAdapters", "_adapters"), "_REPORT": ("KindReport", "_report")}
        if _defines(adapters, "members"):
            expected["_MEMBERS"] = ("KindMembers", "_adapters")
        if _module(folder, "events").exists():
            expected["_EVENTS"] = ("KindEvents", "_events")
        expected.update({f"_{part.upper()}": (kind, f"_report.{part}") for part, kind in PARTS.items()
                         if _defines(report, part)})
        assert _assignments(folder / "contract_check.py") == expected, name


def test_the_built_in_kinds_satisfy_the_protocols(monkeypatch):
    monkeypatch.chdir(ROOT)
    checks = [str(ROOT / package.replace(".", "/") / "contract_check.py") for package in BUILTIN.values()]
    status, out = _mypy(*checks)
    assert status == 0, out


def test_an_adapters_module_that_breaks_the_protocol_is_a_type_error(tmp_path, monkeypatch):
    """`load` without its options: the error names KindAdapters and the member, at the kind's check."""
    package = tmp_path / "brokenkind"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "adapters.py").write_text(textwrap.dedent('''\
        from __future__ import annotations

        from pathlib import Path

        from advisor.core.model import Profile


        def detect(path: Path, head: bytes) -> bool:
            return False


        def load(path: Path) -> list[Profile]:
            return []


        def members(folder: Path, limit: int) -> list[tuple[str, Path]] | None:
            return None
        '''))
    (package / "contract_check.py").write_text(textwrap.dedent('''\
        from __future__ import annotations

        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from advisor.kinds.contract import KindAdapters
            from brokenkind import adapters as _adapters

            _ADAPTERS: KindAdapters = _adapters
        '''))
    monkeypatch.chdir(ROOT)  # advisor analysed from the tree, not skipped as an installed untyped package
    status, out = _mypy(str(package))
    assert status == 1, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith(str(package / "contract_check.py")), out
    assert '"KindAdapters"' in errors[0], out
    assert "def load(path: Path) -> list[Profile]" in out and "options: LoadOptions" in out, out


def test_a_report_module_without_its_places_or_with_a_wrong_part_is_a_type_error(tmp_path, monkeypatch):
    """KindReport holds PLACES and sections(); an optional part is held to its type where the module has it."""
    package = tmp_path / "brokenreport"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "report.py").write_text(textwrap.dedent('''\
        from __future__ import annotations

        from advisor.core.model import Analysis


        def sections(analysis: Analysis) -> dict[str, list[str]]:
            return {}


        def tldr(analysis: Analysis) -> list[str]:
            return []
        '''))
    (package / "contract_check.py").write_text(textwrap.dedent('''\
        from __future__ import annotations

        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from advisor.kinds.contract import KindReport, ReportTldr
            from brokenreport import report as _report

            _REPORT: KindReport = _report
            _TLDR: ReportTldr = _report.tldr
        '''))
    monkeypatch.chdir(ROOT)
    status, out = _mypy(str(package))
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1 and len(errors) == 2, out
    assert '"KindReport"' in errors[0] and '"KindReport" protocol member:' in out and "    PLACES" in out, out
    assert '"Callable[[Analysis], list[tuple[int, str]]]"' in errors[1], out

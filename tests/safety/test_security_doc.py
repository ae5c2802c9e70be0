"""docs/security.md names, for every promise, the test that holds it: each named test must exist, so a
renamed or deleted test cannot leave a promise that nothing holds."""

from __future__ import annotations

import re

from tests_support import ROOT

DOC = ROOT / "docs" / "security.md"
# `file.py::test_x` or `::test_y` (the test file named last before it in the same row); a file outside
# tests/safety/ is named with its path from the top (tests/test_x.py for one at the top of tests/)
_REFERENCE = re.compile(r"`((?:tests/(?:[\w/]+/)?)?[\w]+\.py)?(?:::(test_\w+))?`")


def _cited() -> set[tuple[str, str]]:
    cited: set[tuple[str, str]] = set()
    for line in DOC.read_text().splitlines():
        if not line.startswith("|"):
            continue
        current = None
        for module, test in _REFERENCE.findall(line):
            if module:
                current = module if module.startswith("tests/") else f"tests/safety/{module}"
            if test:
                assert current, f"docs/security.md: ::{test} names no test file before it in its row"
                cited.add((current, test))
    return cited


def _defined(module: str) -> set[str]:
    text = (ROOT / module).read_text()
    return set(re.findall(r"^def (test_\w+)", text, re.MULTILINE))


def test_every_cited_test_exists():
    assert len(_cited()) > 100  # the promises' tables were read
    missing = sorted(f"{module}::{test}" for module, test in _cited() if test not in _defined(module))
    assert not missing, f"docs/security.md cites tests that do not exist: {missing}"

"""Small modules with one job each: no module of the package is over 400 lines, with no exemptions (issue 24)."""

from tests_support import ROOT

LIMIT = 400


def test_no_module_is_over_the_limit():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in (ROOT / "advisor").rglob("*.py")}
    over = {name: n for name, n in sorted(sizes.items()) if n > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them along their jobs): {over}"

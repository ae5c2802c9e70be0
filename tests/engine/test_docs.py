from tests_support import ROOT

from advisor.engine.docs import generate
from advisor.packs.load import load_packs


def test_docs_rules_is_up_to_date():
    """Regenerate with: advisor rules docs docs/rules"""
    pages = generate(load_packs())
    folder = ROOT / "docs" / "rules"
    on_disk = {p.name: p.read_text() for p in folder.glob("*.md")}
    assert sorted(on_disk) == sorted(pages), "docs/rules is stale: run `advisor rules docs docs/rules`"
    for name, text in pages.items():
        assert on_disk[name] == text, f"docs/rules/{name} is stale: run `advisor rules docs docs/rules`"


def test_page_content():
    pages = generate(load_packs())
    page = pages["weight-reload.md"]
    assert "# NRN006 `weight-reload`" in page
    assert "Requires (fires only after): [`memory-bound`](memory-bound.md)" in page
    assert "| `min_ratio` | 2 | ratio |" in page

from tests_support import ROOT

from advisor.engine.docs import generate
from advisor.packs.load import load_packs


def test_docs_rules_is_up_to_date():
    """Regenerate with: advisor rules docs docs/rules"""
    pages = generate(load_packs())
    folder = ROOT / "docs" / "rules"
    on_disk = {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*.md")}
    assert sorted(on_disk) == sorted(pages), "docs/rules is stale: run `advisor rules docs docs/rules`"
    for name, text in pages.items():
        assert on_disk[name] == text, f"docs/rules/{name} is stale: run `advisor rules docs docs/rules`"


def test_page_content():
    pages = generate(load_packs())
    page = pages["neuron/weight-reload.md"]
    assert "# NRN006 `neuron/weight-reload`" in page
    assert "Requires (fires only after): [`memory-bound`](../neuron/memory-bound.md)" in page
    assert "| `min_ratio` | 2 | ratio |" in page
    assert "Scope **global**. Share of total time recoverable at most, capped by the estimate of `memory-bound`." \
        in page


def test_rules_of_two_kinds_with_one_name_have_a_page_each():
    pages = generate(load_packs())
    assert "# NCU001 `ncu/memory-bound`" in pages["ncu/memory-bound.md"]
    assert "# NRN001 `neuron/memory-bound`" in pages["neuron/memory-bound.md"]
    assert "Also accepted under its former names: `memory-throughput-bound`" in pages["ncu/memory-bound.md"]
    assert "[`memory-bound`](ncu/memory-bound.md) (formerly `memory-throughput-bound`)" in pages["index.md"]


def test_a_local_estimate_is_never_called_a_share_of_total_time():
    """Nsight Compute's local estimates are of one unit's own inefficiency (docs/time-budget.md); the
    pages said otherwise before issue 24."""
    ruleset = load_packs()
    pages = generate(ruleset)
    local = [r for r in ruleset.rules if r.estimated_speedup is not None and r.speedup_scope == "local"]
    assert len(local) >= 13
    for rule in local:
        page = pages[f"{rule.pack}/{rule.name}.md"]
        assert "share of total time" not in page.lower(), rule.name
        assert "Scope **local**. Of that unit's own inefficiency (local)" in page, rule.name
    registers = pages["ncu/occupancy-limited-by-registers.md"]
    assert "global when `issue-slots-underused` fired, then capped by that rule's estimate." in registers

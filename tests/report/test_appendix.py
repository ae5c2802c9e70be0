"""The report's appendix (advisor/report/appendix.py): which fields a report used, the notes grouped, and the
kinds that keep the full list."""

from __future__ import annotations

from advisor.core.model import Metric
from advisor.report.appendix import Reads, grouped_notes


def test_reads_notes_lookups_not_walks():
    """A section that walks every metric to pick some does not mark them all: only `[]`, `get` and `in` count."""
    metrics = Reads({"a": Metric("a", 1.0, "s", "reported"), "b": Metric("b", 2.0, "s", "reported")})
    assert [n for n in metrics] == ["a", "b"] and len(metrics) == 2
    assert sorted(metrics.keys()) == ["a", "b"] and len(list(metrics.values())) == 2 and len(metrics.items()) == 2
    assert metrics.names == set()
    assert metrics["a"].value == 1.0
    assert metrics.get("missing") is None
    assert "c" not in metrics
    assert metrics.names == {"a", "missing", "c"}


def test_notes_saying_the_same_of_three_fields_are_one_bullet():
    notes = ("x.a: unit 'sector/cycle' is not one advisor knows; the value is kept as printed",
             "the file holds 4 profiles: 0 gemm is analysed",
             "x.b: unit 'sector/cycle' is not one advisor knows; the value is kept as printed",
             "y: unit 'byte/sector' is not one advisor knows; the value is kept as printed",
             "x.c: unit 'sector/cycle' is not one advisor knows; the value is kept as printed",
             "z: unit 'byte/sector' is not one advisor knows; the value is kept as printed")
    assert grouped_notes(notes) == (
        "3 fields (`x.a`, `x.b`, `x.c`): unit 'sector/cycle' is not one advisor knows; the value is kept as printed",
        "the file holds 4 profiles: 0 gemm is analysed",
        "y: unit 'byte/sector' is not one advisor knows; the value is kept as printed",  # two stay apart
        "z: unit 'byte/sector' is not one advisor knows; the value is kept as printed")


def test_a_large_group_names_four_fields_and_counts_the_rest():
    notes = tuple(f"f{i}: text 'n/a', not a number: treated as unavailable" for i in range(35))
    assert grouped_notes(notes) == (
        "35 fields (`f0`, `f1`, `f2`, `f3` and 31 more): text 'n/a', not a number: treated as unavailable",)


def test_other_notes_are_escaped_as_before():
    assert grouped_notes(("a *b*: c", "total_time is 0 s: treated as unavailable")) == (
        "a \\*b\\*: c", "total_time is 0 s: treated as unavailable")


def test_kinds_without_the_setting_keep_the_full_appendix(mp2):
    """Neuron's report.yaml does not ask for `raw_appendix: used`: every field, the anchor and wording as before."""
    from tests_support import SAMPLES

    from advisor.api import AnalyzeOptions, analyze
    from advisor.report.build import build_document

    analysis = analyze(SAMPLES / "mp2_energy" / "summary.json", AnalyzeOptions())
    raw = build_document(analysis).sections[-1]
    assert (raw.title, raw.anchor) == ("Raw profile data", "raw")
    assert raw.blocks[0].text.startswith("The fields as read, in machine units")
    reported = [n for n, m in analysis.metrics.items() if m.source == "reported"]
    assert all(f'"{n}"' in raw.blocks[1].text for n in reported)

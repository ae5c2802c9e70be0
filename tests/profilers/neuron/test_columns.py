"""Neuron's hotspot and tensor-load tables are breakdowns titled by report.yaml `breakdowns:`."""

from advisor.profilers.neuron import KIND
from advisor.profilers.neuron.events import BREAKDOWNS, layout


def test_every_breakdown_the_events_fill_is_titled_with_known_units():
    assert set(KIND.data("report.yaml")["breakdowns"]) == set(BREAKDOWNS)
    loads = layout("tensor_loads")
    assert [(c.title, c.unit) for c in loads.columns] == [("Size", "bytes"), ("Loaded", "bytes"),
                                                          ("Transfers", "count"), ("Copies loaded", "ratio")]
    assert [c.title for c in loads.text_columns] == ["Kind", "Source"]
    assert [(c.name, c.unit) for c in loads.figures] == [("declared", "count"), ("unnamed_fraction", "fraction")]
    assert layout("hotspots_nki").key_title == "NKI source line"

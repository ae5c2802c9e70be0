"""RBLN's breakdown titles and units are data (report.yaml `breakdowns:`), each column the code fills titled there."""

import pytest

from advisor.core.trace import kind_breakdown
from advisor.profilers.rbln import KIND, devices, events, layers, sequences

FILLED = {"categories": events.CATEGORY_COLUMNS, "critical_path": events.PATH_COLUMNS, "layers": layers.COLUMNS,
          "sequences": sequences.COLUMNS, "devices": devices.COLUMNS}


@pytest.mark.parametrize("name", sorted(FILLED))
def test_every_column_the_code_fills_has_a_title_and_a_known_unit(name):
    layout = kind_breakdown(KIND, name, FILLED[name])
    assert [c.name for c in layout.columns] == list(FILLED[name]) and all(c.title for c in layout.columns)


def test_the_titles_are_the_reports():
    layout = kind_breakdown(KIND, "layers", layers.COLUMNS)
    assert (layout.title, layout.key_title) == ("Layers", "Layer")
    assert [(c.title, c.unit) for c in layout.columns] == [
        ("NE time", "s"), ("DMA time", "s"), ("Device time", "s"), ("Share of NE time", "fraction"),
        ("DMA ÷ NE", "ratio"), ("Commands", "count"), ("Bytes", "bytes")]
    assert set(KIND.data("report.yaml")["breakdowns"]) == set(FILLED)  # no table titled that nothing fills

"""Breakdown layouts from a kind's report.yaml: titles and units are data, checked so a typo cannot put a
table's figures under the wrong heading or unit."""

from pathlib import Path

import pytest

from advisor.core.errors import AdvisorError
from advisor.core.trace import TEXT, breakdown_layout, kind_breakdown

DATA = {"breakdowns": {"layers": {
    "title": "Layers", "key": "Layer",
    # listed in another order than the code fills them: the layout follows the code
    "columns": [["share", "Share of NE time", "fraction"], ["time", "Device time", "s"]],
    "texts": [["kind", "Kind"]],
    "figures": [["declared", "Tensors declared", "count"]]}}}


def layout(data=DATA, columns=("time", "share")):
    return breakdown_layout(data, "layers", "report.yaml", columns, ("kind",), ("declared",))


def test_the_columns_come_in_the_order_the_code_fills_them_with_their_titles_and_units():
    found = layout()
    assert (found.title, found.key_title) == ("Layers", "Layer")
    assert [(c.name, c.title, c.unit) for c in found.columns] == [("time", "Device time", "s"),
                                                                   ("share", "Share of NE time", "fraction")]
    assert [(c.name, c.unit) for c in found.text_columns] == [("kind", TEXT)]
    made = found.make([("conv1", (2e-3, 0.25))], texts={"conv1": ("WEIGHT",)}, figures={"declared": 3.0})
    assert made.value("conv1", "time") == 2e-3 and made.value("conv1", "share") == 0.25  # s, fraction
    assert made.text("conv1", "kind") == "WEIGHT" and made.figure("declared") == 3.0  # tensors
    assert made.figures[0].unit == "count" and made.text("absent", "kind") == ""


def _with(columns):
    return {"breakdowns": {"layers": {**DATA["breakdowns"]["layers"], "columns": columns}}}


@pytest.mark.parametrize(("data", "message"), [
    (_with([["time", "Device time", "seconds"], ["share", "Share", "fraction"]]),
     "breakdowns.layers.columns: 'time' has unknown unit 'seconds'"),
    (_with([["time", "Device time", "s"]]), "breakdowns.layers.columns: no 'share'"),
    (_with([["time", "Device time", "s"], ["share", "Share", "fraction"], ["shar", "Share", "fraction"]]),
     "breakdowns.layers.columns: unknown name 'shar'; did you mean 'share'?"),
    (_with([["time", "Device time"], ["share", "Share", "fraction"]]),
     "breakdowns.layers.columns: expected [name, title, unit]"),
    ({"breakdowns": {}}, "breakdowns.layers: missing"),
    ({"breakdowns": {"layers": {"title": "Layers", "columns": []}}}, "breakdowns.layers: missing, or without"),
])
def test_a_misspelt_column_or_unit_is_an_error_naming_the_file_and_the_key(data, message):
    with pytest.raises(AdvisorError) as caught:
        layout(data)
    assert caught.value.where == "report.yaml" and caught.value.problem.startswith(message)


def test_a_kinds_layout_error_names_the_kind_and_its_file():
    class Kind:
        name, folder = "toy", Path("/kinds/toy/data")

        def data(self, name):
            assert name == "report.yaml"
            return _with([["time", "Device time", "byte"], ["share", "Share", "fraction"]])

    with pytest.raises(AdvisorError) as caught:
        kind_breakdown(Kind(), "layers", ("time", "share"), ("kind",), ("declared",))
    assert caught.value.where == "profile kind 'toy' (/kinds/toy/data/report.yaml)"
    assert "unknown unit 'byte'; did you mean 'bytes'?" in caught.value.problem

"""A saved analysis's trace through JSON: schema 3 round-trips; schema 2's Neuron-only fields (hotspots, tensor
loads, instruction and DMA counts) read back as schema 3's breakdowns and counts per category."""

import json

import pytest

from advisor.core.model import SCHEMA_VERSION
from advisor.core.serialize import dumps, from_dict

V2_TRACE = {
    "instructions": 1270, "dma_transfers": 845, "span": 7.8e-4, "busy_union": 7.5e-4,
    "hotspots_hlo": [{"name": "%dot.1 = dot(%a, %b)", "time": 7.2e-6, "share": 0.017, "count": 16}],
    "hotspots_nki": [],
    "dma_size_edges": [0, 512, None], "dma_size_counts": [3, 842], "timeline_edges": [0.0, 7.8e-4],
    "timeline": {"Tensor Engine": [0.5]}, "gaps": [{"start": 0.0, "duration": 1e-6}], "warnings": [],
    "engines": [{"engine": "tensor", "title": "Tensor Engine", "rows": ["qPE0"], "busy": 3e-4, "compute": True}],
    "tensor_loads": [{"name": "w", "kind": "WEIGHT", "size": 1000.0, "loaded_bytes": 2500.0, "loads": 3,
                      "repeat": 2.5, "source": "measured"},
                     {"name": "x", "kind": "IN", "size": 500.0, "loaded_bytes": 600.0, "loads": None,
                      "repeat": 1.2, "source": "reported"}],
    "tensors_declared": 3, "dma_unnamed_fraction": 0.08, "tensor_note": None,
    "skipped_instructions": 2, "skipped_dma": 0, "last_event_end": 7.8e-4, "breakdowns": [],
}


def saved(trace, kind="neuron", version=2):
    return {"schema_version": version, "advisor_version": "0.1.0", "kind": kind,
            "source": {"path": "profile.json", "format": "neuron-json-trace"}, "metrics": {}, "trace": trace}


def test_schema_2_hotspots_and_tensor_loads_read_as_breakdowns():
    t = from_dict(saved(V2_TRACE), "a.json").trace
    assert t.events == {"instruction": 1270, "dma": 845} and t.skipped == {"instruction": 2, "dma": 0}
    assert [b.name for b in t.breakdowns] == ["hotspots_hlo", "tensor_loads"]  # no NKI lines: no table
    hlo = t.breakdown("hotspots_hlo")
    assert (hlo.key_title, [c.title for c in hlo.columns]) == ("HLO op", ["Instruction time", "Share", "Instructions"])
    assert hlo.rows == (("%dot.1 = dot(%a, %b)", (7.2e-6, 0.017, 16.0)),)  # s, fraction, count
    loads = t.breakdown("tensor_loads")
    assert loads.rows == (("w", (1000.0, 2500.0, 3.0, 2.5)), ("x", (500.0, 600.0, None, 1.2)))  # bytes, count, ×
    assert (loads.text("x", "kind"), loads.text("x", "source")) == ("IN", "reported")
    assert loads.figure("declared") == 3 and loads.figure("unnamed_fraction") == pytest.approx(0.08)
    assert t.dma_size_edges[-1] == float("inf") and t.engines[0].rows == ("qPE0",)


def test_schema_2_unavailable_tensor_loads_keep_their_reason():
    note = "the file declares no tensor sizes"
    t = from_dict(saved({**V2_TRACE, "tensor_loads": [], "tensor_note": note}), "a.json").trace
    loads = t.breakdown("tensor_loads")
    assert loads.rows == () and loads.note == note


def test_schema_2_rbln_counts_are_compute_and_dma_commands():
    rbln = {**V2_TRACE, "hotspots_hlo": [], "tensor_loads": [], "tensors_declared": 0, "dma_unnamed_fraction": None,
            "breakdowns": [{"name": "layers", "title": "Layers", "key_title": "Layer",
                            "columns": [{"name": "time", "title": "Device time", "unit": "s"}],
                            "rows": [["conv1", [1e-3]]]}]}
    t = from_dict(saved(rbln, kind="rbln"), "a.json").trace
    assert t.events == {"compute": 1270, "dma": 845}
    assert [b.name for b in t.breakdowns] == ["layers"] and t.breakdown("layers").value("conv1", "time") == 1e-3


def test_a_schema_2_analysis_is_saved_again_in_schema_3_and_reads_back_the_same():
    old = from_dict(saved(V2_TRACE), "a.json")
    data = json.loads(dumps(old))
    assert data["schema_version"] == SCHEMA_VERSION == 3
    assert "hotspots_hlo" not in data["trace"] and "instructions" not in data["trace"]
    assert "texts" not in data["trace"]["breakdowns"][0]  # empty optional parts are left out
    again = from_dict(data, "b.json")
    assert again.trace == old.trace

"""Charts are drawn from data, and odd data (a single point, all zeros, names in scripts the font lacks,
a `$` in a name, numbers near the ends of float range) neither writes matplotlib's warnings to stderr nor
fails the report."""

from __future__ import annotations

import logging
import warnings

import pytest
from tests_support import SAMPLES

from advisor.cli import main
from advisor.report import charts

MP2 = SAMPLES / "mp2_energy"

ODD = {
    "hbar all zero": {"kind": "hbar", "labels": ["a"], "values": [0.0], "texts": ["0"], "xlabel": "x"},
    "hbar of no bars": {"kind": "hbar", "labels": [], "values": [], "texts": [], "xlabel": "x"},
    "hbar of a huge value": {"kind": "hbar", "labels": ["a"], "values": [1e308], "texts": ["1"], "xlabel": "x"},
    "hbar of an int past float range": {"kind": "hbar", "labels": ["a"], "values": [10**400], "texts": ["1"],
                                        "xlabel": "x"},
    "byte bars of no bars": {"kind": "byte_bars", "labels": [], "values": [], "xlabel": "bytes"},
    "names the font lacks": {"kind": "hbar", "labels": ["核函数 🚀", "tab\there"], "values": [1.0, 2.0],
                             "texts": ["1", "2"], "xlabel": "x"},
    "a name of mathtext": {"kind": "hbar", "labels": ["$\\foo$ kernel"], "values": [1.0], "texts": ["1"],
                           "xlabel": "x"},
    "a 400-character name": {"kind": "hbar", "labels": ["x" * 400], "values": [1.0], "texts": ["1"], "xlabel": "x"},
    "series of one zero": {"kind": "series", "labels": ["a"], "values": [0.0], "texts": ["0"], "ylabel": "y"},
    "series near float max": {"kind": "series", "labels": ["a", "b"], "values": [1e308, 1.0], "texts": ["1", "2"],
                              "ylabel": "y"},
    "line near float max": {"kind": "line", "values": [1e308, 1.0], "xlabel": "x", "ylabel": "y"},
    "histogram of one value": {"kind": "histogram", "panels": [{"edges": [1.0, 1.0], "counts": [3], "title": "t",
                                                               "xlabel": "s"}]},
    "log histogram from zero": {"kind": "histogram", "panels": [{"edges": [0.0, 1.0], "counts": [3], "title": "t",
                                                                "xlabel": "s", "log": True}]},
    "log histogram to 1e308": {"kind": "histogram", "panels": [{"edges": [1.0, 1e308], "counts": [3], "title": "t",
                                                                "xlabel": "s", "log": True}]},
    "timeline of no rows": {"kind": "timeline", "edges": [0.0], "rows": {}},
    "roofline of a zero point": {"kind": "roofline", "peak": 1e12, "bandwidth": 1e11, "ai": 1.0, "achieved": 0.0},
    "roofline of denormals": {"kind": "roofline", "peak": 1e12, "bandwidth": 1e11, "ai": 5e-324, "achieved": 5e-324},
    "roofline near float max": {"kind": "roofline", "peak": 1e308, "bandwidth": 1e-308, "ai": 1.0, "achieved": 1.0},
    "amdahl of a huge speedup": {"kind": "amdahl", "fraction": 0.5, "step_speedup": 1e307, "measured": 2.0,
                                 "ceiling": 2.0, "target": 1e300},
    "grouped bars of one point": {"kind": "grouped_hbar", "labels": ["a"], "series": [{"name": "b", "values": [1.0]}],
                                  "xlabel": "x"},
}


@pytest.mark.parametrize("fmt", ["png", "svg"])
@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_data_draws_without_a_warning(name, fmt, capfd, caplog):
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING):
        warnings.simplefilter("error")  # a warning fails the drawing here (it would reach stderr)
        drawn = charts.draw(charts.ChartJob(ODD[name], fmt))
    assert drawn.startswith(b"\x89PNG" if fmt == "png" else b"<svg")
    assert caplog.records == []
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize("values", [[0.0], [1e-300, 2e-300]])
def test_a_byte_axis_never_steps_under_a_byte(values):
    """The byte axis stepped 2^-29 bytes over the ±0.05 matplotlib widens an empty range to: 53 million
    ticks, a matplotlib log line on stderr and a report that did not finish in 5 minutes."""
    fig = charts.DRAW["byte_bars"]({"kind": "byte_bars", "labels": [str(v) for v in values], "values": values,
                                    "xlabel": "bytes"})
    assert len(fig.axes[0].get_xticks()) <= 10


def test_text_is_drawn_in_characters_the_font_has_never_as_mathtext():
    spec = charts.drawable({"labels": ["核 a\nb", "$1 and $2", "y" * 60], "values": [float("nan"), 1e-320, -1e309]})
    assert spec["labels"] == ["\ufffd a\ufffdb", "\\$1 and \\$2", "y" * 47 + "…"]
    assert spec["values"] == [0.0, 1e-100, -1e100]


@pytest.mark.parametrize("fmt", ["md", "pdf"])
def test_a_report_with_an_odd_target_speedup_writes_nothing_to_stderr(tmp_path, capfd, caplog, fmt):
    """A target speedup of 1e300 drew a 300-digit label that collapsed the Amdahl chart's layout: matplotlib's
    UserWarning on stderr. pytest records warnings and log lines instead of printing them, so here a warning
    is an error (the report fails) and a log line a record; a drawing process prints to stderr, which capfd
    holds."""
    context = tmp_path / "ctx.yaml"
    context.write_text("workload:\n  baseline: {gemm: 5.2, energy: 2.83}\n  optimized: {gemm: 5.2, energy: 0.21}\n"
                       "  target_speedup: 1e300\n")
    out = tmp_path / f"r.{fmt}"
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING):
        warnings.simplefilter("error")
        assert main(["report", str(MP2 / "summary.json"), "--context", str(context), "-o", str(out),
                     "--quiet"]) == 0  # --quiet: no closing line; a warning or a drawing process's output still shows
    assert capfd.readouterr().err == ""
    assert caplog.records == []
    assert out.stat().st_size > 0

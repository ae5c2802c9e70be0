"""The Nsight Compute report sections, built through the real pipeline from a details CSV shaped like
a real export (../shared/reference/ncu-examples: a cuBLAS bf16 GEMV on a cc 12.0 GPU)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from advisor.api import analyze
from advisor.core.model import CrossCheck, Finding, Metric, VendorFinding
from advisor.profilers.ncu import report
from advisor.report.build import build_document
from advisor.report.document import Paragraph, Section, Table
from advisor.report.markdown import render_markdown

SIGNATURE = ("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, 0, 1, "
             "1, 0, 7, 0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, float>>(T13)")
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type",'
          '"Rule Description","Estimated Speedup Type","Estimated Speedup"')
METRICS = [
    ("Command line profiler metrics", "dram__bytes_read.sum", "Mbyte", "2.33"),
    ("Command line profiler metrics", "flop_count_sp.sum", "", "n/a"),
    ("Command line profiler metrics", "gpu__time_duration.sum", "us", "6.75"),
    ("GPU Speed Of Light Throughput", "SM Frequency", "Ghz", "1.99"),
    ("GPU Speed Of Light Throughput", "Memory Throughput", "%", "19.66"),
    ("GPU Speed Of Light Throughput", "DRAM Throughput", "%", "19.66"),
    ("GPU Speed Of Light Throughput", "L1/TEX Cache Throughput", "%", "11.55"),
    ("GPU Speed Of Light Throughput", "L2 Cache Throughput", "%", "8.59"),
    ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", "9.15"),
    ("Memory Workload Analysis", "Memory Throughput", "Gbyte/s", "345.14"),
    ("Memory Workload Analysis", "L1/TEX Hit Rate", "%", "40.73"),
    ("Memory Workload Analysis", "L2 Hit Rate", "%", "27.66"),
    ("Scheduler Statistics", "Issued Warp Per Scheduler", "", "0.12"),
    ("Scheduler Statistics", "No Eligible", "%", "87.94"),
    ("Scheduler Statistics", "Active Warps Per Scheduler", "warp", "1.33"),
    ("Scheduler Statistics", "Eligible Warps Per Scheduler", "warp", "0.14"),
    ("Occupancy", "Block Limit Barriers", "block", "24"),
    ("Occupancy", "Block Limit SM", "block", "24"),
    ("Occupancy", "Block Limit Registers", "block", "2"),
    ("Occupancy", "Block Limit Shared Mem", "block", "4"),
    ("Occupancy", "Block Limit Warps", "block", "12"),
    ("Occupancy", "Theoretical Active Warps per SM", "warp", "8"),
    ("Occupancy", "Theoretical Occupancy", "%", "16.67"),
    ("Occupancy", "Achieved Occupancy", "%", "11.32"),
    ("Occupancy", "Achieved Active Warps Per SM", "warp", "5.43"),
]
RULES = [
    ("SpeedOfLight", "SOLBottleneck", "OPT", "This kernel grid is too small to fill the available resources on this "
     "device, resulting in only 0.7 full waves across all SMs. Look at Launch Statistics for more details.", "", ""),
    ("Occupancy", "TheoreticalOccupancy", "OPT", "The 2.00 theoretical warps per scheduler this kernel can issue "
     "according to its occupancy are below the hardware maximum of 12. This kernel's theoretical occupancy (16.7%) "
     "is limited by the number of required registers.", "global", "80.34"),
]


def _quoted(*fields: str) -> str:
    return ",".join(f'"{f}"' for f in fields)


@pytest.fixture
def details_csv(tmp_path: Path) -> Path:
    identity = ("0", "1740670", "python3.12", "127.0.0.1", SIGNATURE, "1", "7", "(32, 4, 1)", "(224, 1, 1)", "0",
                "12.0")
    lines = ["==PROF== Connected to process 1740670", HEADER]
    lines += [_quoted(*identity, *row) + "," for row in METRICS]  # metric rows: 16 fields and a trailing comma
    lines += [_quoted(*identity, section, "", "", "", *rule) for section, *rule in RULES]
    path = tmp_path / "ncu.details.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass(frozen=True)
class _Verdict:  # the contract of advisor.profilers.ncu.verdicts.Verdict
    vendor: VendorFinding | None
    ours: tuple[Finding, ...]
    status: str
    note: str


def _finding(name: str, speedup: float | None, scope: str = "global") -> Finding:
    return Finding(id="NCU-T", name=name, pack="ncu", severity="high", category="occupancy", title=name,
                   message="", root_cause=True, because=(), evidence={}, params={}, estimated_speedup=speedup,
                   recommendation="", speedup_scope=scope)


@pytest.fixture
def fake_verdicts(monkeypatch):
    """A stand-in for the pairing in advisor.profilers.ncu.verdicts: one row per vendor finding, then one
    advisor-only row, so the table's rendering is checked on rows of every shape."""
    def verdicts(analysis):
        rows = [_Verdict(v, (_finding("occupancy-limited-by-registers", 0.8034),) if v.rule == "TheoreticalOccupancy"
                         else (), "same diagnosis" if v.rule == "TheoreticalOccupancy" else "not modelled by advisor",
                         "both name the registers") for v in analysis.vendor_findings]
        return [*rows, _Verdict(None, (_finding("tail-effect", 0.05, "local"),), "advisor only", "ncu has no rule")]

    monkeypatch.setattr(report, "verdicts", verdicts)
    return verdicts


def _section(parts: dict[str, list[Section]], title: str) -> Section:
    return next(s for place in parts.values() for s in place if s.title == title)


def _tables(section: Section) -> list[Table]:
    return [b for b in section.blocks if isinstance(b, Table)]


def _row(section: Section, first: str) -> tuple[str, ...]:
    return next(r for t in _tables(section) for r in t.rows if r[0] == first or r[0].startswith(first))


def _text(section: Section) -> str:
    return " ".join(b.text for b in section.blocks if isinstance(b, Paragraph))


def test_sections_show_units_limits_and_unavailable(details_csv, fake_verdicts):
    analysis = analyze(details_csv)
    parts = report.sections(analysis)
    titles = [s.title for place in ("utilisation", "memory", "roofline") for s in parts[place]]
    assert titles == ["Speed of light", "Occupancy", "Nsight Compute's own verdicts beside advisor's",
                      "Memory access", "Roofline"]

    sol = _section(parts, "Speed of light")
    assert "**Latency-bound**: compute (SM) 9.15 %, memory 19.66 % of peak, both under 60.00 %" in _text(sol)
    assert _row(sol, "DRAM (busiest memory unit)")[1] == "19.66 %"
    assert _row(sol, "Active warps per scheduler")[1:] == ("1.33 warps", "ncu")
    assert _row(sol, "Warp cycles per issued instruction")[1:] == ("unavailable", "—")  # not in this export

    occupancy = _section(parts, "Occupancy")
    assert _row(occupancy, "**Registers** (smallest)")[1] == "2 blocks"  # the limiter, named
    assert _row(occupancy, "Shared memory")[1] == "4 blocks"
    assert _row(occupancy, "Barriers")[1] == "24 blocks"
    assert _row(occupancy, "Theoretical occupancy")[1] == "16.67 %"
    assert _row(occupancy, "Achieved occupancy")[1:] == ("11.32 %", "—", "measured")
    assert "limited by registers (2 blocks per SM)" in _text(occupancy)

    memory = _section(parts, "Memory access")
    assert _row(memory, "L1/TEX hit rate")[1] == "40.73 %"
    assert "Global access coalescing" not in [t.caption for t in _tables(memory)]  # none of its figures exist

    roofline = _section(parts, "Roofline")
    assert _row(roofline, "Achieved DRAM bandwidth")[1] == "345.1 GB/s"
    assert _row(roofline, "Arithmetic intensity")[1] == "unavailable"  # no FLOP count
    assert "No FP32, FP16, FP64 FLOP count" in _text(roofline)  # flop_count_sp.sum is n/a: no FLOP row


def test_verdicts_table_keeps_every_row(details_csv, fake_verdicts):
    section = _section(report.sections(analyze(details_csv)), "Nsight Compute's own verdicts beside advisor's")
    table = _tables(section)[0]
    assert table.headers == ("Nsight Compute", "ncu estimate", "advisor", "Agreement", "Note")
    assert len(table.rows) == 3  # two ncu results and one advisor-only finding
    sol, occupancy, ours = table.rows
    assert sol[0].startswith("OPT `SOLBottleneck`: This kernel grid is too small") and sol[1] == "—"
    assert sol[0].endswith("across all SMs.")  # the first sentence only
    assert occupancy[1] == "80.34 % global"
    assert occupancy[2] == "`occupancy-limited-by-registers` (80.34 % global, root cause)"
    assert occupancy[3] == "same diagnosis"
    assert ours[0] == "none" and ours[2].startswith("`tail-effect` (5.00 % local")


def test_recomputed_block_limits_show_agreement(details_csv, fake_verdicts):
    analysis = analyze(details_csv)
    metrics = dict(analysis.metrics)
    metrics["block_limit_registers"] = replace(
        metrics["block_limit_registers"], formula="block_limit_registers_formula",
        check=CrossCheck(derived_value=2.0, relative_difference=0.0, tolerance=0.01, agrees=True))
    metrics["block_limit_warps"] = replace(
        metrics["block_limit_warps"], formula="f",
        check=CrossCheck(derived_value=16.0, relative_difference=0.25, tolerance=0.01, agrees=False))
    metrics["blocks_per_sm"] = Metric("blocks_per_sm", 2.0, "blocks", "derived", formula="min(…)")
    occupancy = _section(report.sections(replace(analysis, metrics=metrics)), "Occupancy")
    assert _row(occupancy, "**Registers**")[1:4] == ("2 blocks", "2 blocks", "agrees")
    assert _row(occupancy, "Warps")[1:4] == ("12 blocks", "16 blocks", "**disagrees** (25 % apart)")
    assert _row(occupancy, "Blocks per SM")[1:] == ("unavailable", "2 blocks", "ncu did not report it")


def test_tldr_and_setup(details_csv):
    analysis = analyze(details_csv)
    lines = [text for _, text in report.tldr(analysis)]
    assert lines[0].startswith("`kernel` (224, 1, 1)×(32, 4, 1) on cc 12.0, 6.75 µs: **latency-bound**")
    assert lines[1] == ("**Occupancy: theoretical 16.67 %, achieved 11.32 %**, limited by registers (2 blocks per SM); "
                        "0.7 waves per SM.")  # the waves from ncu's SOLBottleneck result
    rows = dict(report.setup_rows(analysis))
    assert rows["Kernel"] == "`kernel` — `enable_if<!T7, void>::type kernel<…>(T13)`"
    assert rows["Launch ID"] == "0 (context 1, stream 7)"
    assert rows["Grid × block"] == "(224, 1, 1)×(32, 4, 1) = 224 blocks of 128 threads"
    assert rows["Registers per thread"] == "unavailable"  # no Launch Statistics in this export
    assert rows["Process"] == "python3.12 on 127.0.0.1"
    hardware = dict(report.hardware_rows(analysis))
    assert hardware["SM frequency"] == "1.99 GHz"
    assert hardware["SMs"] == "unavailable"


def test_whole_report_renders(details_csv, fake_verdicts):
    text = render_markdown(build_document(analyze(details_csv)))
    for heading in ("## Speed of light", "## Occupancy", "## Memory access", "## Roofline",
                    "## Nsight Compute's own verdicts beside advisor's"):
        assert heading in text
    assert "| Theoretical occupancy | 16.67 % |" in text


def test_short_signature_and_first_sentence():
    short = "void fused<float, 256>(const T1 *, int)"
    assert report.short_signature(short) == short  # short template arguments stay
    assert report.short_signature(SIGNATURE) == "enable_if<!T7, void>::type kernel<…>(T13)"
    assert len(report.short_signature("k(" + "int, " * 60 + ")")) == 110
    assert report.first_sentence("Only 0.7 full waves. Look at Launch Statistics.") == "Only 0.7 full waves."

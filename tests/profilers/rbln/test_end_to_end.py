"""The RBLN kind as a user meets it: `advisor report` on every bundled trace in every output format,
the rules each sample is built to fire, a folder of per-rank traces, `compare` on traces and on their
saved analyses, and bad `.pb` input (one error line and exit 2, or a report whose notes say what was
wrong — never a traceback)."""

from __future__ import annotations

import json

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from tests_support import SAMPLES

from advisor.cli import main

INFO = {"trace-quality", "unattributable-names", "hot-layer"}
EXPECTED = {  # sample -> the warning-level rules it is built to fire (samples/make_rbln_samples.py)
    "rbln_atom_cnn/trace.pb": {"ne-idle-under-neural-dma"},
    "rbln_atom_rsd/trace.pb": {"multi-device-comm-exposed", "device-imbalance"},
    "rbln_rebel100/trace.pb": {"chiplet-imbalance"},
    "rbln_before_after/before.pb": {"ne-starved-by-transfers", "dma-bound-layers"},
    "rbln_before_after/after.pb": set(),
}


def _fired(path) -> set[str]:
    data = json.loads(path.read_text())
    assert data["kind"] == "rbln"
    return {f["name"] for f in data["findings"]} - INFO


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_each_sample_fires_its_rules_and_no_other(sample, tmp_path, capsys):
    out = tmp_path / "analysis.json"
    assert main(["report", str(SAMPLES / sample), "-o", str(out), "--quiet"]) == 0
    assert _fired(out) == EXPECTED[sample]


@pytest.mark.parametrize("fmt", ["md", "html", "pdf", "json"])
def test_every_format_of_a_chiplet_trace(fmt, tmp_path):
    out = tmp_path / f"findings.{fmt}"
    assert main(["report", str(SAMPLES / "rbln_rebel100" / "trace.pb"), "-o", str(out), "--quiet"]) == 0
    data = out.read_bytes()
    if fmt == "pdf":
        assert data.startswith(b"%PDF")
        return
    text = data.decode()
    if fmt == "json":
        trace = json.loads(text)["trace"]
        devices = next(b for b in trace["breakdowns"] if b["name"] == "devices")
        assert [row[0] for row in devices["rows"]] == [f"rbln0 / Chiplet {i}" for i in range(4)]
        return
    for heading in ("Command categories", "Top layers", "Critical path", "Devices and chiplets", "Data quality"):
        assert heading in text
    assert "Profiled runs are slower than unprofiled ones" in text
    assert "lower bound" in text


def test_the_markdown_report_states_the_decisive_numbers_with_units(tmp_path):
    out = tmp_path / "cnn.md"
    assert main(["report", str(SAMPLES / "rbln_atom_cnn" / "trace.pb"), "-o", str(out), "--quiet"]) == 0
    text = out.read_text()
    tldr = text.split("## TL;DR", 1)[1].split("## ", 1)[0]
    assert "**Device busy" in tldr and " ms span**" in tldr and "Neural Engine" in tldr and " %" in tldr
    assert "**Top layer `fused(bn1+conv1+relu)`:" in tldr
    assert "of the traced run's time" in text and "kernel's time" not in text
    assert (out.parent / "cnn_files").is_dir()


def test_a_folder_of_rank_traces_names_the_straggler_by_duration(tmp_path):
    out = tmp_path / "ranks.md"
    assert main(["report", str(SAMPLES / "rbln_ranks"), "-o", str(out), "--quiet"]) == 0
    text = out.read_text()
    assert "## Ranks (4)" in text and "**rank1.pb** (analysed)" in text
    assert "the straggler is **rank1.pb**" in text and "own device clock" in text


def test_compare_traces_and_their_saved_analyses_with_per_layer_deltas(tmp_path):
    before, after = SAMPLES / "rbln_before_after" / "before.pb", SAMPLES / "rbln_before_after" / "after.pb"
    direct = tmp_path / "direct.md"
    assert main(["compare", str(before), str(after), "-o", str(direct)]) == 0
    saved = []
    for trace in (before, after):
        saved.append(tmp_path / f"{trace.stem}.json")
        assert main(["report", str(trace), "-o", str(saved[-1]), "--quiet"]) == 0
    again = tmp_path / "saved.md"
    assert main(["compare", *map(str, saved), "-o", str(again)]) == 0
    for text in (direct.read_text(), again.read_text()):
        assert "Fixed: `ne-starved-by-transfers`, `dma-bound-layers`" in text  # root causes, larger first
        assert "## Layers: device time" in text and "## Command categories: busy" in text
        task_dma = next(line for line in text.splitlines() if line.startswith("| Task DMA |"))
        assert "better" in task_dma and "-70." in task_dma


# --- bad input --------------------------------------------------------------------------------------


def _packets(*packets: pb.TracePacket) -> bytes:
    trace = pb.Trace()
    trace.packet.extend(packets)
    return trace.SerializeToString()


def _thread(uuid: int, name: str) -> pb.TracePacket:
    p = pb.TracePacket()
    p.track_descriptor.uuid = uuid
    p.track_descriptor.thread.pid, p.track_descriptor.thread.tid = 1000, uuid
    p.track_descriptor.thread.thread_name = name
    return p


def _slice(uuid: int, ts: int, kind: int, name: str = "") -> pb.TracePacket:
    p = pb.TracePacket()
    p.timestamp, p.trusted_packet_sequence_id = ts, 1
    p.track_event.type, p.track_event.track_uuid = kind, uuid
    if name:
        p.track_event.name = name
    return p


BEGIN, END = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
GOOD = _packets(_thread(7, "Neural Engine Clusters"), _slice(7, 1000, BEGIN, "0_conv_0"), _slice(7, 5000, END),
                _slice(7, 6000, BEGIN, "0_conv_1"), _slice(7, 9000, END))


def _run(tmp_path, capsys, data: bytes, name: str = "trace.pb") -> tuple[int, str, str]:
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out.md"
    code = main(["report", str(path), "-o", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code in (0, 2)
    assert (code == 2) == (not out.exists())  # no half-written output on failure
    return code, err, out.read_text() if out.exists() else ""


def test_zero_length_random_bytes_and_json_renamed_are_one_line_errors(tmp_path, capsys):
    for data in (b"", bytes(range(256)) * 8, b'{"traceEvents": "not a trace"}'):
        code, err, _ = _run(tmp_path, capsys, data)
        assert code == 2 and err.startswith("advisor: error: ") and err.count("\n") == 1


def test_a_truncated_trace_is_reported_with_a_note(tmp_path, capsys):
    code, _err, report = _run(tmp_path, capsys, GOOD[:-3])
    assert code == 0 and "ends inside a packet" in report


def test_huge_varint_after_valid_packets_stops_there_with_a_note(tmp_path, capsys):
    code, _err, report = _run(tmp_path, capsys, GOOD + b"\x0a" + b"\xff" * 12)
    assert code == 0 and "byte" in report.split("## Data notes", 1)[1]


def test_unterminated_slices_are_counted_not_invented(tmp_path, capsys):
    data = GOOD + _packets(_slice(7, 10000, BEGIN, "0_conv_2"))
    code, _err, report = _run(tmp_path, capsys, data)
    assert code == 0 and "never ended" in report


def test_a_perfetto_trace_without_rbln_tracks_says_so(tmp_path, capsys):
    other = _packets(_thread(3, "RenderThread"), _slice(3, 1000, BEGIN, "draw"), _slice(3, 2000, END))
    code, err, report = _run(tmp_path, capsys, other)
    said = err if code == 2 else report
    assert "RenderThread" in said or "no RBLN" in said


def test_the_rbln_users_page_lists_every_rule_of_the_pack():
    from tests_support import ROOT

    from advisor.packs.load import load_packs

    page = (ROOT / "docs" / "rbln.md").read_text()
    for rule in load_packs(kind="rbln").rules:
        assert f"[`{rule.name}`](rules/rbln/{rule.name}.md)" in page and rule.id in page

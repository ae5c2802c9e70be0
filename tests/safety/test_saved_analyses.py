"""Issue 22 §2 and §5, checklist: a saved analysis JSON (`advisor report x -o analysis.json`, read back by
`report` and `compare`) is checked against its schema and bounded before anything is built from it.
Every test here was a reproduced defect, or a promise the fix rests on."""

from __future__ import annotations

import copy
import json
import math
import os
import signal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests_support import FIXTURES, ROOT, SAMPLES

from advisor.cli import main
from advisor.core import analysis_schema, serialize, units
from advisor.core.errors import AdvisorError
from advisor.inputs.limits import saved_analysis_limit
from advisor.kinds import get as get_kind
from advisor.kinds.check import check_saved_tables
from advisor.report.render import render

WEIGHT_RELOAD = SAMPLES / "weight_reload" / "summary.json"


@pytest.fixture(scope="module")
def saved_data(tmp_path_factory) -> dict:
    """A real saved analysis, with findings, a chain (`because`) and hardware."""
    path = tmp_path_factory.mktemp("saved") / "analysis.json"
    assert main(["report", str(WEIGHT_RELOAD), "-o", str(path)]) == 0
    return json.loads(path.read_text())


def _error_of(capsys, path: Path, *extra: str) -> str:
    """The one stderr line of a refused `advisor report`; the report file is never written."""
    out = path.with_suffix(".md")
    assert main(["report", str(path), "-o", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"advisor: error: {path}: "), err
    assert "internal error" not in err and not out.exists()
    return err.strip()


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d["findings"][0].__setitem__("severity", 5),
     "findings[0].severity: expected one of info, low, medium, high, critical, got 5"),
    (lambda d: d["findings"][0].__setitem__("severity", "urgent"),
     "findings[0].severity: expected one of info, low, medium, high, critical, got \"urgent\""),
    (lambda d: d["metrics"]["total_time"].__setitem__("value", "NaN"),
     "metrics.total_time.value: expected a number or null, got \"NaN\""),
    (lambda d: d["findings"][0].pop("title"), "findings[0]: missing required field 'title'"),
    (lambda d: d["findings"][0].__setitem__("evidence", [1]), "findings[0].evidence: expected an object, got a list"),
    (lambda d: d.__setitem__("findings", {"findings": d["findings"]}), "findings: expected a list, got an object"),
    (lambda d: d["findings"][0].__setitem__("estimated_speedup", 7), "findings[0].estimated_speedup"),
    (lambda d: d.pop("source"), "missing required field 'source'"),
    (lambda d: d["hardware"]["values"]["hbm_bandwidth"].__setitem__("value", None),
     "hardware.values.hbm_bandwidth.value: expected a number, got null"),
])
def test_a_tampered_analysis_names_the_field(saved_data, tmp_path, capsys, edit, expected):
    """§2 tampered analysis JSON: wrong types, missing parts and extra nesting give one line naming the
    field (it was an internal error, or a KeyError text), never a partly rendered report."""
    data = copy.deepcopy(saved_data)
    edit(data)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data))
    assert expected in _error_of(capsys, path)


def test_huge_and_non_finite_numbers_are_refused_or_rendered(saved_data, tmp_path, capsys):
    """§2 numbers: a 1e400 (infinite once read) is refused naming the field; a 300-digit integer where a
    time belongs is beyond any physical range and refused (it rendered as 300 digits); an entry's odd time renders."""
    text = json.dumps(saved_data)
    path = tmp_path / "inf.json"
    path.write_text(text.replace('"total_time": {"value": ', '"total_time": {"value": 1e400, "x": ', 1))
    assert "metrics.total_time.value: expected a finite number" in _error_of(capsys, path)
    data = copy.deepcopy(saved_data)
    data["metrics"]["total_time"]["value"] = 10**300
    path.write_text(json.dumps(data))
    assert _error_of(capsys, path).endswith("metrics.total_time.value: 1e+300 s is beyond any physical range (a "
                                            "profile's figures in s stay within ±1e+09)")
    data = copy.deepcopy(saved_data)
    data["entries"] = [{"name": "r", "columns": [], "findings": ["x"] * 3, "total_time": -1, "gain": None}]
    data["trace"] = None
    path.write_text(json.dumps(data))
    assert main(["report", str(path), "-o", str(tmp_path / "entries.md")]) == 0


def test_deep_nesting_is_one_line(saved_data, tmp_path, capsys):
    """§2 nesting depth: 100,000 nested lists in an unknown key is one line, not a RecursionError."""
    text = json.dumps(saved_data)
    path = tmp_path / "deep.json"
    path.write_text(text[:-1] + ', "extra": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested too deeply" in _error_of(capsys, path)


def test_an_unsupported_schema_version_is_named(saved_data, tmp_path, capsys):
    """§2: a schema version this advisor does not read (or a 300-digit one) is one line."""
    for version in (4, 10**300, "2"):
        path = tmp_path / "v.json"
        path.write_text(json.dumps({**saved_data, "schema_version": version}))
        assert "is not supported (this advisor reads 1, 2, 3)" in _error_of(capsys, path)


def test_compare_validates_both_sides(saved_data, tmp_path, capsys):
    """§2: `compare` checks a saved analysis before comparing: one line, exit 2, nothing written."""
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(saved_data))
    data = copy.deepcopy(saved_data)
    data["outcomes"][0]["outcome"] = "exploded"
    bad.write_text(json.dumps(data))
    out = tmp_path / "c.md"
    assert main(["compare", str(good), str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"advisor: error: {bad}: outcomes[0].outcome: expected one of fired, passed, "
                           "not_applicable, skipped, got \"exploded\"")
    assert not out.exists()


def test_old_analyses_still_load(tmp_path):
    """§3: an analysis saved before profile kinds (schema 1) and before settings were recorded still reads."""
    analysis = serialize.read_if_analysis(FIXTURES / "analysis_before_kinds.json", *saved_analysis_limit())
    assert analysis is not None and analysis.kind == "neuron" and analysis.settings is None
    assert analysis.entries  # schema 1's overview rows converted


def test_a_saved_analysis_is_bounded_by_max_memory(saved_data, tmp_path, capsys, monkeypatch):
    """§5 saved analysis size: the file is refused past 1/16 of --max-memory, with how to raise it, before
    it is read; the default (2GiB) reads up to 128 MiB."""
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    path = tmp_path / "a.json"
    path.write_text(json.dumps(saved_data))
    size = path.stat().st_size
    err = _error_of(capsys, path, "--max-memory", str(size * 8))
    limit = units.bytes_(size * 8 // 16)
    assert f"a saved analysis larger than the {limit} limit (1/16 of --max-memory); raise --max-memory to read " \
           "it" in err
    assert saved_analysis_limit()[0] == 128 * 2**20
    assert main(["report", str(path), "-o", str(tmp_path / "ok.md"), "--max-memory", str(size * 16)]) == 0


def test_counts_in_a_saved_analysis_are_capped(saved_data, tmp_path, capsys):
    """§5 saved analysis counts: 10,000 findings (1.41 GB in the issue, 98 s and 233 MB here before) are
    refused as more than the 2,000 a saved analysis holds; the cap is checked while decoding."""
    data = copy.deepcopy(saved_data)
    finding = data["findings"][0]
    data["findings"] = [{**finding, "name": f"r{i}", "id": f"X{i}"} for i in range(analysis_schema.MAX_FINDINGS + 1)]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(data))
    assert "findings: more than 2000 entries, the most a saved analysis holds" in _error_of(capsys, path)


def test_a_fifo_is_not_read_as_an_analysis(tmp_path):
    """§2 non-regular inputs: a FIFO named *.json (no writer: opening it for reading would block forever)
    is not read as a saved analysis; the profile readers refuse it with their own line."""
    fifo = tmp_path / "a.json"
    os.mkfifo(fifo)
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("reading a FIFO blocked"))
    signal.alarm(10)
    try:
        assert serialize.read_if_analysis(fifo, *saved_analysis_limit()) is None
    finally:
        signal.alarm(0)
    (tmp_path / "d.json").mkdir()
    assert serialize.read_if_analysis(tmp_path / "d.json", *saved_analysis_limit()) is None  # a folder


# --- property: any mutation of a real saved analysis renders, or is one AdvisorError ----------------------

_ODD = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
                 st.sampled_from([10**300, -(10**300), 1e308, -1e308, 0.0, -1.0, 5e-324]),
                 st.sampled_from(["NaN", "Infinity", "-1e400", "", "high", "x" * 50]),
                 st.just([]), st.just({}), st.just([[1]]), st.just({"value": {"value": 1}}))


def _paths(node: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            out += _paths(v, (*prefix, i))
    return out


RICH = [("weight_reload/summary.json", ()), ("multi_rank", ("--jobs", "1")),  # a chain; ranks (entries)
        ("mp2_energy/summary.json", ("--context", str(SAMPLES / "mp2_energy" / "investigation.yaml"))),
        ("rbln_atom_cnn/trace.pb", ()), ("legacy_trace/profile.json", ())]  # traces with breakdowns, engines


@pytest.fixture(scope="module")
def mutable(tmp_path_factory) -> list[tuple[dict, list[tuple]]]:
    """Saved analyses holding every part of the schema (findings, entries, investigation, traces)."""
    out = []
    for i, (sample, extra) in enumerate(RICH):
        path = tmp_path_factory.mktemp("rich") / f"{i}.json"
        assert main(["report", str(SAMPLES / sample), "-o", str(path), *extra]) == 0
        data = json.loads(path.read_text())
        out.append((data, [p for p in _paths(data) if p]))
    return out


@settings(max_examples=300)
@given(data=st.data())
def test_any_mutation_renders_or_is_one_error(mutable, data):
    """§2 property: drop a key, change a type, insert a huge number or a NaN string anywhere in a real saved
    analysis: it renders (as Markdown) or raises one AdvisorError; never another exception."""
    original, paths = data.draw(st.sampled_from(mutable))
    doc = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = copy.deepcopy(data.draw(_ODD))  # st.just gives one object: never nest it in itself
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced the way there
    raw = json.dumps(doc, allow_nan=False).encode()
    try:
        analysis = serialize.decode_analysis(raw, "a.json")
        if analysis is not None:  # as load_analysis reads one: its tables against its kind's (api._as_saved)
            check_saved_tables(get_kind(analysis.kind, "a.json"), analysis, "a.json")
    except AdvisorError as exc:
        assert exc.where == "a.json" and "\n" not in exc.problem
        return
    if analysis is None:  # the schema_version or advisor_version key was dropped: not an analysis
        assert "schema_version" not in doc or "advisor_version" not in doc
        return
    text = render(analysis, "md", None).main.decode()
    assert text.startswith("# ")
    assert all(math.isfinite(m.value) for m in analysis.metrics.values() if m.value is not None)


def test_the_saved_analysis_renders_as_the_profile(saved_data, tmp_path, monkeypatch):
    """§2: validation changes nothing for a valid analysis: re-rendered Markdown equals the direct one."""
    monkeypatch.chdir(ROOT)
    relative = WEIGHT_RELOAD.relative_to(ROOT)
    saved = tmp_path / "a.json"
    assert main(["report", str(relative), "-o", str(saved)]) == 0
    saved_analysis = serialize.read_if_analysis(saved, *saved_analysis_limit())
    assert saved_analysis is not None
    direct = render(saved_analysis, "md", None).main
    from advisor.api import analyze

    assert direct == render(analyze(relative), "md", None).main


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda t: t["text_columns"].pop(0), "a text entry without one word per text column (1)"),
    (lambda t: t["columns"][0].update(name="sise"), "trace breakdown 'tensor_loads': columns sise, loaded_bytes, "
                                                    "loads, repeat, where its kind has size, loaded_bytes, loads, "
                                                    "repeat"),
    (lambda t: t["rows"][0][1].pop(), "a row without one value per column (4)"),
    # the table's figures (about the whole table) are its kind's too: renamed, one missing, one added
    (lambda t: t["figures"][0].update(name="declard"),
     "trace breakdown 'tensor_loads': figures declard, unnamed_fraction, where its kind has declared, "
     "unnamed_fraction"),
    (lambda t: t["figures"].pop(), "trace breakdown 'tensor_loads': figures declared, where its kind has declared, "
                                   "unnamed_fraction"),
    (lambda t: t["figures"].append({**t["figures"][0], "name": "extra"}),
     "trace breakdown 'tensor_loads': figures declared, unnamed_fraction, extra, where its kind has declared, "
     "unnamed_fraction"),
])
def test_a_saved_table_that_is_not_its_kinds_is_one_error(tmp_path, capsys, edit, problem):
    """A hand-edited saved trace table (a dropped text column, a renamed column, a short row) made the Neuron
    report crash (StopIteration) where the reader expects one line naming the file. Its figures are checked the
    same way (review 4 §4.4 C4: dropping that check survived, no case tampering with figures)."""
    saved = tmp_path / "a.json"
    assert main(["report", str(SAMPLES / "legacy_trace" / "profile.json"), "-o", str(saved), "--quiet"]) == 0
    data = json.loads(saved.read_text())
    edit(next(t for t in data["trace"]["breakdowns"] if t["name"] == "tensor_loads"))
    saved.write_text(json.dumps(data))
    assert main(["report", str(saved), "-o", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"advisor: error: {saved}: ") and problem in err and "\n" not in err
    assert not (tmp_path / "r.md").exists()


# --- trust: a saved analysis is believed only as far as it is consistent (docs/security.md) ------------------

MP2 = SAMPLES / "mp2_energy" / "summary.json"
EVIL = "<img src=y onerror=alert(1)>"


@pytest.fixture(scope="module")
def mp2_data(tmp_path_factory) -> dict:
    """The bundled mp2_energy summary's saved analysis: one finding capped by a bound, hardware figures."""
    path = tmp_path_factory.mktemp("mp2") / "a.json"
    assert main(["report", str(MP2), "-o", str(path)]) == 0
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def trace_data(tmp_path_factory) -> dict:
    """A Neuron trace's saved analysis: its tables (hotspots, tensor loads) are the Neuron report's."""
    path = tmp_path_factory.mktemp("trace") / "a.json"
    assert main(["report", str(SAMPLES / "legacy_trace" / "profile.json"), "-o", str(path)]) == 0
    return json.loads(path.read_text())


def _saved(tmp_path: Path, data: dict, edit=None) -> Path:
    """`data` edited, written as Python writes JSON (NaN and Infinity as bare words)."""
    data = copy.deepcopy(data)
    if edit is not None:
        edit(data)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data, allow_nan=True))
    return path


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d["metrics"]["total_time"].update(unit=EVIL),
     f"metrics.total_time.unit: '{EVIL}' is not a unit advisor knows (s, bytes, FLOP, FLOP/s, bytes/s, FLOP/B, "
     "fraction, ratio, count, cycles, Hz)"),
    (lambda d: d["findings"][0]["evidence"]["dma_active_time_percent"].update(unit="% <b>"),
     "findings[0].evidence.dma_active_time_percent.unit: '% <b>' is not a unit advisor knows"),
    (lambda d: d["findings"][0]["params"]["min_active"].update(unit="[x](javascript:y)"),
     "findings[0].params.min_active.unit: '[x](javascript:y)' is not a unit advisor knows"),
    (lambda d: d["hardware"]["values"]["hbm_bandwidth"].update(unit="bytes/s\n# h"),
     "hardware.values.hbm_bandwidth.unit: 'bytes/s\\n# h' is not a unit advisor knows"),
    (lambda d: d["metrics"]["total_time"].update(unit="warps"),  # a unit, but Nsight Compute's
     "metrics.total_time.unit: 'warps' is not a unit of AWS Neuron analyses"),
])
def test_a_unit_that_is_not_one_is_refused_naming_the_field(mp2_data, tmp_path, capsys, edit, expected):
    """Units reached the Markdown raw (`0.2138 <img src=y onerror=alert(1)>`: a live tag wherever a viewer passes
    HTML). A unit is a generic one or one the analysis's kind adds; any other is one line naming the field."""
    assert expected in _error_of(capsys, _saved(tmp_path, mp2_data, edit))


def _text_everywhere(d: dict) -> None:
    d["source"].update(format=EVIL, shape=EVIL)
    d["source"]["info"]["compiler_version"] = EVIL
    d["hardware"].update(name=EVIL, description=EVIL, chosen_by=EVIL, notes=[EVIL], references=[EVIL])
    d["findings"][0].update(title=EVIL, message=EVIL, recommendation=EVIL, root_cause_text=EVIL, condition=EVIL,
                            category=EVIL, references=[EVIL])
    d["bounds"][0].update(title=EVIL, description=EVIL, formula=EVIL)
    d["metrics"]["total_time"].update(description=EVIL, note=EVIL)
    d["notes"] = [EVIL]


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_text_from_a_saved_analysis_is_text_in_every_format(mp2_data, tmp_path, fmt):
    """Whatever a file passes the checks with, its text is escaped in every format: `source.format` reached the
    Markdown setup table raw."""
    from markdown_it import MarkdownIt

    out = tmp_path / f"r.{fmt}"
    assert main(["report", str(_saved(tmp_path, mp2_data, _text_everywhere)), "-o", str(out)]) == 0
    text = out.read_text()
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text) if fmt == "md" else text
    assert "<img src=y" not in html
    assert html.count("&lt;img src=y onerror=alert(1)&gt;") >= 8  # shown, as text


def _relabelled(kind: str, packs_too: bool = False, hardware: bool = True):
    def edit(d: dict) -> None:
        d["kind"] = kind
        if packs_too:  # the rule pack's name rewritten as well: the hardware, then the tables still tell
            d["packs"] = {kind: "1.0.0"}
            for part in (*d["findings"], *d["bounds"]):
                part["pack"] = kind
        if not hardware:
            d["hardware"] = None
    return edit


@pytest.mark.parametrize(("sample", "edit", "expected"), [
    ("mp2", _relabelled("torch"), "kind: 'torch', but its rule pack 'neuron' applies to neuron profiles only: this "
                                  "is no PyTorch profiler (Kineto) analysis"),
    ("mp2", _relabelled("ncu"), "kind: 'ncu', but its rule pack 'neuron' applies to neuron profiles only: this is "
                                "no NVIDIA Nsight Compute analysis"),
    ("mp2", _relabelled("torch", packs_too=True), "hardware.values.base_clock_hz: not a hardware figure of PyTorch "
                                                  "profiler (Kineto) analyses (sm_count, device_memory, "
                                                  "peak_flops_fp32, peak_flops_tf32, peak_flops_bf16, "
                                                  "peak_flops_fp8, memory_bandwidth)"),
    ("trace", _relabelled("torch", packs_too=True, hardware=False),
     "trace.breakdowns: 'hotspots_hlo' is not a table of PyTorch profiler (Kineto) analyses (steps, kernel_classes, "
     "top_kernels, idle_breakdown, host_pace, operator_families, top_operators, streams)"),
])
def test_an_analysis_relabelled_as_another_kind_is_refused(mp2_data, trace_data, tmp_path, capsys, sample, edit,
                                                           expected):
    """A Neuron analysis relabelled `"kind": "torch"` rendered as a PyTorch report (its TL;DR said "no device
    events"). Its rule packs, hardware figures and tables are checked against the kind: one line naming the first
    that is not the kind's."""
    data = mp2_data if sample == "mp2" else trace_data
    assert _error_of(capsys, _saved(tmp_path, data, edit)).endswith(expected)


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda t: t["columns"][0].update(unit="s"), "column 'size' in 's', where its kind's is in 'bytes'"),
    (lambda t: t["figures"][0].update(unit="bytes"), "figure 'declared' in 'bytes', where its kind's is in 'count'"),
], ids=["column", "figure"])
def test_a_saved_table_whose_units_are_not_its_kinds_is_one_error(trace_data, tmp_path, capsys, edit, expected):
    """A saved table's units are its kind's as its names are: a tensor's size relabelled seconds printed the bytes
    as seconds ("406784 s" in the tensor loads table), with no error."""
    def tamper(d: dict) -> None:
        edit(next(t for t in d["trace"]["breakdowns"] if t["name"] == "tensor_loads"))

    err = _error_of(capsys, _saved(tmp_path, trace_data, tamper))
    assert err.endswith(f"trace breakdown 'tensor_loads': {expected}")


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d["metrics"]["total_time"].update(value=math.nan), "metrics.total_time.value: value NaN is not a "
                                                                  "finite number"),
    (lambda d: d["findings"][0]["evidence"]["dma_active_time_percent"].update(value=math.inf),
     "findings[0].evidence.dma_active_time_percent.value: value Infinity is not a finite number"),
    (lambda d: d["hardware"]["values"]["hbm_bandwidth"].update(value=-math.inf),
     "hardware.values.hbm_bandwidth.value: value -Infinity is not a finite number"),
])
def test_a_non_finite_number_is_refused_as_an_analysis(mp2_data, tmp_path, capsys, edit, expected):
    """NaN and Infinity (Python writes them; JSON has neither) made the strict reader give up and the file be read
    again as a profile: "no Neuron profile metrics in it". A file with advisor's markers is refused as an analysis,
    naming the value."""
    err = _error_of(capsys, _saved(tmp_path, mp2_data, edit))
    assert err.endswith(expected) and "profile" not in err


def test_a_broken_analysis_is_refused_as_an_analysis(mp2_data, tmp_path, capsys):
    """A truncated analysis (both markers at its head) is said to be one, not read as a profile."""
    path = tmp_path / "a.json"
    path.write_text(json.dumps(mp2_data)[:3000])
    assert _error_of(capsys, path).endswith(": an advisor analysis JSON, but not valid JSON (Input data was "
                                            "truncated)")


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d["findings"][0].update(estimated_speedup=7.5),
     "findings[0].estimated_speedup: 7.5 is out of range 0..1 (a share of time)"),
    (lambda d: d["bounds"][0].update(value=1.5), "bounds[0].value: 1.5 is out of range 0..1 (a share of time)"),
    (lambda d: d["bounds"][0].update(value=-0.25), "bounds[0].value: -0.25 is out of range 0..1 (a share of time)"),
])
def test_a_share_of_time_out_of_range_says_so(mp2_data, tmp_path, capsys, edit, expected):
    """`estimated_speedup: 7.5` said "expected a finite number": it is one, but no share of the run."""
    assert _error_of(capsys, _saved(tmp_path, mp2_data, edit)).endswith(expected)


def _passed_rule(d: dict) -> None:
    d["findings"][0]["name"] = next(o["name"] for o in d["outcomes"] if o["outcome"] == "passed")


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d["findings"][0].update(estimated_speedup=0.9),
     "findings[0].estimated_speedup: 90.00 % is above the bound 'vector_engine_fix' it is capped by (70.04 %)"),
    (lambda d: d["findings"][0].update(name="made-up-rule"),
     "findings[0].name: rule 'made-up-rule' is not a rule this analysis ran (no outcome names it)"),
    (_passed_rule, "findings[0].name: rule 'dma-fragmentation' has the outcome 'passed' here, not 'fired'"),
    (lambda d: d["findings"][0].update(pack="mine"), "findings[0].pack: 'mine' is not one of the analysis's packs "
                                                     "(neuron)"),
    (lambda d: d["findings"][0].update(capped_by=["no_such_bound"]),
     "findings[0].capped_by: 'no_such_bound' is not one of the analysis's bounds"),
    (lambda d: d["findings"][0].update(because=["ghost"]), "findings[0].because: 'ghost' is not one of the "
                                                           "analysis's findings"),
    (lambda d: d["findings"][0]["evidence"]["vector_engine_active_time_percent"].update(value=0.5),
     "findings[0].evidence.vector_engine_active_time_percent: 0.5 fraction, where the analysis's metric "
     "vector_engine_active_time_percent is 0.9645396092701302 fraction"),
    (lambda d: d["metrics"]["achieved_flops_rate"].update(value=0),  # missing is unavailable, never 0
     "metrics.achieved_flops_rate.value: 0 FLOP/s although its inputs hardware_flops are missing"),
    (lambda d: d["bounds"][0].update(pack="other"), "bounds[0].pack: 'other' is not one of the analysis's packs "
                                                    "(neuron)"),
    (lambda d: d["hardware"]["values"]["hbm_bandwidth"].update(value=1e300),
     "hardware.values.hbm_bandwidth.value: 1e+300 bytes/s is beyond any physical range (a profile's figures in "
     "bytes/s stay within ±1e+21)"),
    (lambda d: [part["vector_engine_active_time_percent"].update(value=3.0)
                for part in (d["metrics"], d["findings"][0]["evidence"])],
     "metrics.vector_engine_active_time_percent.value: 3 is outside 0..1: AWS Neuron's _percent fields are "
     "shares (at most 100 %)"),
])
def test_an_analysis_that_cannot_be_consistent_is_refused(mp2_data, tmp_path, capsys, edit, expected):
    """A tampered analysis was trusted: an estimate above the bound it records, a finding of a rule that never ran,
    a figure its own evidence contradicts, a 300 % utilisation. Trust means internal consistency; what cannot be
    consistent is one line naming the field."""
    assert _error_of(capsys, _saved(tmp_path, mp2_data, edit)).endswith(expected)


GOLDEN_ANALYSES = sorted(p for p in (ROOT / "tests" / "golden").glob("*.json") if not p.name.startswith("compare__"))


@pytest.mark.parametrize("path", GOLDEN_ANALYSES, ids=lambda p: p.name)
def test_every_analysis_advisor_writes_passes_the_checks(path):
    """The checks refuse no analysis advisor wrote: every kind's golden analyses (folders, traces, contexts)."""
    analysis = serialize.decode_analysis(path.read_bytes(), path.name)
    assert analysis is not None and analysis.findings
    check_saved_tables(get_kind(analysis.kind, path.name), analysis, path.name)


def test_a_profile_with_numbers_past_any_physical_range_shows_them_unavailable(tmp_path):
    """A 300-digit total_time printed as 300 digits (and so did everything derived from it): past its unit's
    physical range a number is unavailable, in figures and in findings' messages."""
    import re

    data = json.loads(MP2.read_text())
    data.update(total_time=10**300, hbm_read_bytes=1e300, vector_engine_instruction_count=10**300)
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "r.md"
    assert main(["report", str(path), "-o", str(out)]) == 0
    text = out.read_text()
    assert "Total time: unavailable." in text
    assert not re.search(r"(?<![\d.])\d{22,}", text.replace(",", "")), "a number printed digit by digit"

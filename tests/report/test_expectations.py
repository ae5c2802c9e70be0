"""What matters in every golden case, in files a reviewer reads: samples/<folder>/expected.yaml holds, for each
case its golden.yaml declares, the verdict, the findings in the report's order with their estimates and bounds,
all findings together, the time-budget bounds and a few key figures with their units; for a comparison its
headline (speedup and its status), the findings fixed, new and persisting, and every metric, kernel and table row
reported better or worse. This test runs each case through the pipeline (`advisor.api.analyze`, `compare_inputs`)
and compares. After an intended change, regenerate and review the diff like code (each changed line is a changed
result):

    pytest tests/report/test_expectations.py --update-expected && git diff samples/*/expected.yaml

Numbers: a fractional number is stored to 9 significant digits and matches within that rounding plus 1e-9
relative (summing in another order moves the 16th digit, never the 9th); a whole number matches exactly; null is
unavailable and matches only unavailable, never 0. A figure name added by hand under a case's `figures:` is kept
by the regeneration and checked like the others.

A finding's `role`: `root cause`; `symptom of X` (X explains it further: act on X); `follows from X` (it fired
because X did); `context` (information, no cause to fix); `finding` otherwise; `; caps only` when its figure only
caps the findings below it, `; catch-all` for a rule that ranks after every specific cause. `estimate` is the share
of total time its fix could give back (`local_estimate`: of one unit's own inefficiency, Nsight Compute's kind),
`bound` what set it (a time-budget bound, or the causes it is capped by; '' its own formula), `capped_by` the
bounds its fix cannot move. The full reports of a few cases are goldens too (tests/report/test_golden.py).
"""

from __future__ import annotations

import fcntl
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from golden_cases import COMPARISONS, REPORTS, ComparisonCase, ReportCase
from tests_support import ROOT, SAMPLES

from advisor.api import AnalyzeOptions, analyze, compare_inputs, default_labels
from advisor.core.comparison import BreakdownChange, Comparison, MetricChange, Series
from advisor.core.model import Analysis, Finding
from advisor.engine.budget import bound_values, together_and_bound
from advisor.report.compare_build import speedup_status
from advisor.report.findings import root_causes

EXPECTED = "expected.yaml"
REGENERATE = "pytest tests/report/test_expectations.py --update-expected"
HEADER = f"""\
# What matters in the reports of this sample's golden cases (golden.yaml declares them): each case's verdict,
# findings in the report's order with their estimates and bounds, all findings together, the time-budget bounds
# and key figures with their units; for a comparison its headline and what got better or worse. Checked against
# the pipeline by tests/report/test_expectations.py (its docstring says what each field means; fractional
# numbers to 9 significant digits, whole numbers exactly, null = unavailable, never 0).
# Regenerate after an intended change: {REGENERATE}
# and review the diff like code: every changed line is a changed result.
"""
REL_TOL = 1e-9
# The figures every case of a kind shows besides what its findings read: the run's time, the busiest unit's share
# and the kind's headline utilisation. A kind not listed shows total_time and its busiest_unit_* figures.
KEY_FIGURES = {
    "neuron": ("total_time", "busiest_unit_active_time_percent", "tensor_engine_active_time_percent",
               "dma_active_time_percent", "hbm_read_bytes", "mm_arithmetic_intensity"),
    "ncu": ("total_time", "busiest_unit_idle_percent", "compute_throughput_percent", "memory_throughput_percent",
            "achieved_occupancy_percent"),
    "rbln": ("total_time", "busiest_unit_busy", "device_busy_fraction", "neural_engine_busy_fraction",
             "dma_busy_fraction"),
    "torch": ("total_time", "device_busy_fraction", "device_idle_fraction", "step_count", "step_time_median"),
}


# --- what matters in a report ------------------------------------------------------------------------------------


def _role(f: Finding, explained_by: Mapping[str, list[str]]) -> str:
    role = ("root cause" if f.root_cause else
            f"symptom of {', '.join(explained_by[f.name])}" if explained_by.get(f.name) else
            f"follows from {', '.join(f.because)}" if f.because else
            "context" if f.severity == "info" else "finding")
    return "; ".join([role, *(tag for tag, on in (("caps only", f.caps_only), ("catch-all", f.catch_all)) if on)])


def _finding(f: Finding, explained_by: Mapping[str, list[str]]) -> dict[str, Any]:
    estimate = "estimate" if f.speedup_scope == "global" else "local_estimate"
    out: dict[str, Any] = {"id": f.id, "rule": f.name, "severity": f.severity, "role": _role(f, explained_by),
                           estimate: f.estimated_speedup, "bound": f.bound, "capped_by": list(f.capped_by)}
    if f.claims:  # a piece of time shared with other findings: counted once together
        out["claims"] = f.claims
    out["reads"] = {name: {"value": e.value, "unit": e.unit} for name, e in f.evidence.items()}
    return out


def _verdict(analysis: Analysis) -> dict[str, Any]:
    """The root cause the report's verdict names (None: no cause to fix), and the gain it claims."""
    causes = root_causes(analysis)
    if not causes:
        return {"rule": None}
    top = causes[0]
    gain = None if top.caps_only else top.estimated_speedup
    return {"rule": top.name, "id": top.id, "gain": gain, "bound": top.bound}


def _figures(analysis: Analysis, names: Iterable[str]) -> dict[str, Any]:
    return {n: ({"value": m.value, "unit": m.unit} if (m := analysis.metrics.get(n)) else "not a metric")
            for n in names}


def _investigation(analysis: Analysis) -> dict[str, Any]:
    inv = analysis.investigation
    assert inv is not None
    out: dict[str, Any] = {}
    if (a := inv.amdahl) is not None:
        out["amdahl"] = {"fraction": a.fraction, "step_speedup": a.step_speedup, "predicted": a.predicted,
                         "measured": a.measured, "ceiling": a.ceiling, "target": a.target,
                         "target_reachable": a.target_reachable}
    out["expectations"] = {e.metric: e.verdict for e in inv.expectations}
    out["hypotheses"] = {h.name: h.verdict for h in inv.hypotheses}
    return out


def report_expected(analysis: Analysis, figure_names: Sequence[str]) -> dict[str, Any]:
    explained_by: dict[str, list[str]] = {}
    for f in analysis.findings:
        for name in f.explains:
            explained_by.setdefault(name, []).append(f.name)
    together, capped = together_and_bound(analysis.findings, bound_values(analysis.bounds))
    out: dict[str, Any] = {
        "kind": analysis.kind,
        "source": {"format": analysis.source.format, "shape": analysis.source.shape},
        "hardware": analysis.hardware.name if analysis.hardware else None,
        "verdict": _verdict(analysis),
        "findings": [_finding(f, explained_by) for f in analysis.findings],
        "together": {"share": together, "bound": capped},
        "bounds": {b.name: b.value for b in analysis.bounds},
        "figures": _figures(analysis, figure_names),
    }
    if analysis.entries:  # the cores, kernels or ranks of the input, each analysed or not
        out["entries"] = [{"name": e.name, "total_time": e.total_time, "analysed": e.analysed,
                           "root_causes": list(e.root_causes), "gain": e.gain} for e in analysis.entries]
    if analysis.investigation is not None:
        out["investigation"] = _investigation(analysis)
    return out


def default_figures(analysis: Analysis) -> list[str]:
    names = KEY_FIGURES.get(analysis.kind) or ("total_time", *sorted(n for n in analysis.metrics
                                                                    if n.startswith("busiest_unit")))
    return [n for n in names if n in analysis.metrics]


# --- what matters in a comparison --------------------------------------------------------------------------------


def _change(m: MetricChange) -> dict[str, Any]:
    return {"before": m.before, "after": m.after, "change": m.change, "unit": m.unit}


def comparison_expected(c: Comparison) -> dict[str, Any]:
    statuses = ("fixed", "new", "persisting", "not comparable")
    out: dict[str, Any] = {
        "labels": [c.before.label, c.after.label],
        "speedup": {"of": c.speedup_of, "value": c.speedup, "status": speedup_status(c)},
        "root_causes": {"before": list(c.root_cause_before), "after": list(c.root_cause_after)},
        "findings": {s.replace(" ", "_"): [f.name for f in c.findings if f.status == s] for s in statuses},
        "warnings": list(c.warnings),
        "better": {n: _change(m) for n, m in c.metrics.items() if m.verdict == "better"},
        "worse": {n: _change(m) for n, m in c.metrics.items() if m.verdict == "worse"},
    }
    if c.entries:  # the kernels of both runs, matched
        out["entries"] = [{"name": e.name, "where": e.where, "before": e.before, "after": e.after,
                           "speedup": e.speedup} for e in c.entries]
    if c.breakdowns:  # the kind's tables, row by row: the rows that changed beyond the noise or exist on one side
        out["breakdowns"] = [_breakdown(b) for b in c.breakdowns]
    return out


def _breakdown(b: BreakdownChange) -> dict[str, Any]:
    """A table's rows better or worse (their relative change), and those on one side only (their value there)."""
    out: dict[str, Any] = {"name": b.name, "column": b.column, "unit": b.unit}
    for verdict in ("better", "worse", "only before", "only after"):
        rows = {r.key: r.change if verdict in ("better", "worse") else r.before if verdict == "only before"
                else r.after for r in b.rows if r.verdict == verdict}
        if rows:
            out[verdict.replace(" ", "_")] = rows
    return out


def series_expected(s: Series) -> dict[str, Any]:
    return {"attempts": {side.label: {"total_time": t} for side, t in zip(s.sides, s.total_times, strict=True)},
            "steps": [comparison_expected(step) for step in s.steps], "overall": comparison_expected(s.overall)}


# --- comparing, with a message that names the field ----------------------------------------------------------------


def _close(got: float, expected: float) -> bool:
    """Within the rounding to 9 significant digits the file was written with, and 1e-9 relative beyond it."""
    if expected == 0 or not math.isfinite(expected):
        return got == expected
    half_digit = 0.5 * 10 ** (math.floor(math.log10(abs(expected))) - 8)
    return abs(got - expected) <= half_digit + REL_TOL * abs(expected)


def _scalar_matches(expected: Any, got: Any) -> bool:
    if expected is None or got is None or isinstance(expected, (bool, str)) or isinstance(got, (bool, str)):
        return type(expected) is type(got) and expected == got  # unavailable never matches 0
    if isinstance(expected, int):  # whole numbers exactly
        return isinstance(got, (int, float)) and got == expected
    return isinstance(got, (int, float)) and _close(float(got), float(expected))


def _name(item: Any) -> str | None:
    """What a list item is called in a message: a finding's rule, an entry's name."""
    return item.get("rule", item.get("name")) if isinstance(item, dict) else None


def _shown(value: Any) -> str:
    return "null (unavailable)" if value is None else repr(value)


def _at(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def differences(expected: Any, got: Any, path: str = "") -> list[str]:
    """Every field where `got` differs from `expected`: 'path: expected X, got Y', a list item named by its rule or
    name (`findings[1 small-dma-payloads].estimate`); a list whose items changed order or number is one line."""
    if isinstance(expected, dict) and isinstance(got, dict):
        found = [f"{_at(path, k)}: expected {_shown(expected[k])}, got nothing" for k in expected if k not in got]
        found += [f"{_at(path, k)}: not expected, got {_shown(got[k])}" for k in got if k not in expected]
        for key in (k for k in expected if k in got):
            found += differences(expected[key], got[key], _at(path, key))
        return found
    if isinstance(expected, list) and isinstance(got, list):
        names = [_name(x) for x in expected], [_name(x) for x in got]
        if len(expected) != len(got) or names[0] != names[1]:
            if any(names[0]) or any(names[1]):
                return [f"{path}: expected {', '.join(map(str, names[0])) or 'none'}; "
                        f"got {', '.join(map(str, names[1])) or 'none'}"]
            return [f"{path}: expected {expected!r}, got {got!r}"]
        return [d for i, (e, g) in enumerate(zip(expected, got, strict=True))
                for d in differences(e, g, f"{path}[{i}{f' {names[0][i]}' if names[0][i] else ''}]")]
    if isinstance(expected, (dict, list)) or isinstance(got, (dict, list)) or not _scalar_matches(expected, got):
        return [f"{path}: expected {_shown(expected)}, got {_shown(got)}"]
    return []


# --- the files -----------------------------------------------------------------------------------------------------


def stored(value: Any) -> Any:
    """As the file holds it: a whole float as an int, a fractional one to 9 significant digits."""
    if isinstance(value, float) and math.isfinite(value):
        return int(value) if value.is_integer() else float(f"{value:.9g}")
    if isinstance(value, dict):
        return {k: stored(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stored(v) for v in value]
    return value


# Mappings written one entry a line however short their values, and lists whose items are each written so;
# any other mapping or list of plain values takes one line.
BLOCK_KEYS = {"reads", "bounds", "figures", "expectations", "hypotheses", "better", "worse", "only_before",
              "only_after", "attempts", "root_causes", "findings"}
BLOCK_ITEMS = {"entries"}


class Block(dict):
    """A mapping written one entry a line."""


def _shaped(value: Any, key: str = "") -> Any:
    """The value with the mappings BLOCK_KEYS and BLOCK_ITEMS name marked, for the file's layout."""
    if isinstance(value, dict):
        shaped = {k: _shaped(v, str(k)) for k, v in value.items()}
        return Block(shaped) if key in BLOCK_KEYS else shaped
    if isinstance(value, list):
        return [Block(v) if key in BLOCK_ITEMS and isinstance(v, dict) else _shaped(v) for v in value]
    return value


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _leaf(value: Any) -> bool:
    return not isinstance(value, (dict, list)) or (isinstance(value, list) and all(map(_leaf, value))
                                                    and not any(isinstance(v, list) for v in value))


def _mapping(dumper: yaml.SafeDumper, data: dict) -> yaml.Node:
    flow = not isinstance(data, Block) and all(map(_leaf, data.values()))
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)


def _sequence(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=all(map(_leaf, data)))


_Dumper.add_representer(dict, _mapping)
_Dumper.add_representer(Block, _mapping)
_Dumper.add_representer(list, _sequence)


def read(folder: Path) -> dict[str, Any]:
    path = ROOT / folder / EXPECTED
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}


def write(folder: Path, section: str, name: str, case: dict[str, Any]) -> None:
    """One case's expectations into its folder's file, cases in golden.yaml's order, undeclared ones left out."""
    with (ROOT / folder / EXPECTED).open("a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # under pytest -n, a folder's cases run in several workers at once
        handle.seek(0)
        data = yaml.safe_load(handle.read()) or {}  # the other cases as written: stored() again would round twice
        data.setdefault(section, {})[name] = stored(case)
        order = {"reports": [c.name for c in REPORTS if c.folder == folder],
                 "comparisons": [c.name for c in COMPARISONS if c.folder == folder]}
        data = {s: {n: data[s][n] for n in order[s] if n in data.get(s, {})} for s in order if order[s]}
        handle.seek(0)
        handle.truncate()
        handle.write(HEADER + yaml.dump(_shaped(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120))


def check(folder: Path, section: str, name: str, build: Callable[[list[str] | None], dict[str, Any]],
          update: bool) -> None:
    """`build` makes the case's expectations from the pipeline, given the figure names the file lists."""
    expected = (read(folder).get(section) or {}).get(name)
    listed = list(expected.get("figures") or ()) if isinstance(expected, dict) else None
    if update:
        write(folder, section, name, build(listed))
        return
    where = f"{folder / EXPECTED}, case {name}"
    assert expected is not None, f"{where}: missing; run {REGENERATE} and review the diff"
    problems = differences(expected, build(listed or []))
    assert not problems, (f"{where} differs from the pipeline's output:\n  " + "\n  ".join(problems)
                          + f"\nIf the change is intended, run {REGENERATE} and review the diff like code.")


# --- the tests ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", REPORTS, ids=[c.name for c in REPORTS])
def test_report_expectations(case: ReportCase, monkeypatch, update_expected):
    monkeypatch.chdir(ROOT)  # source paths stay relative and stable
    analysis = analyze(case.input, AnalyzeOptions(context=case.context))

    def build(listed: list[str] | None) -> dict[str, Any]:
        """The figures the file lists; regenerated, the kind's key figures and then those listed by hand."""
        names = listed or []
        if update_expected:
            names = [*default_figures(analysis), *(n for n in names if n not in default_figures(analysis))]
        return {**case.declared_as(), **report_expected(analysis, names)}

    check(case.folder, "reports", case.name, build, update_expected)


@pytest.mark.parametrize("case", COMPARISONS, ids=[c.name for c in COMPARISONS])
def test_comparison_expectations(case: ComparisonCase, monkeypatch, update_expected):
    monkeypatch.chdir(ROOT)
    paths = list(case.inputs)
    result = compare_inputs(paths, default_labels(paths))
    made = series_expected(result) if isinstance(result, Series) else comparison_expected(result)
    check(case.folder, "comparisons", case.name, lambda _: {"inputs": case.declared_as(), **made}, update_expected)


def test_every_expectation_file_is_declared(update_expected):
    """Each folder with golden cases has its expected.yaml, under the header, listing exactly those cases."""
    if update_expected:
        pytest.skip("checked on the next run, once --update-expected has written every case")
    folders = {c.folder for c in REPORTS} | {c.folder for c in COMPARISONS}
    assert {p.parent.relative_to(ROOT) for p in SAMPLES.glob(f"*/{EXPECTED}")} == folders
    for folder in sorted(folders):
        assert (ROOT / folder / EXPECTED).read_text(encoding="utf-8").startswith(HEADER), folder
        data = read(folder)
        assert list(data.get("reports") or ()) == [c.name for c in REPORTS if c.folder == folder], folder
        assert list(data.get("comparisons") or ()) == [c.name for c in COMPARISONS if c.folder == folder], folder

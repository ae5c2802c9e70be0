"""The schema a saved analysis JSON is checked against before anything is built from it (msgspec Structs),
and its size and count limits. core/schema_errors.py says msgspec's validation errors as one line."""

from __future__ import annotations

from sys import float_info
from typing import Annotated, Any, Literal

import msgspec

from advisor.core.model import READ_SCHEMA_VERSIONS, SEVERITIES

# The schema a saved analysis is checked against before anything is built from it: a hand-edited or
# tampered file gets one line naming the field, never a half-rendered report. Unknown keys are ignored (a
# newer advisor may add some); every list and map is capped, so a file cannot ask for unbounded work.
_FINITE = float_info.max
Num = Annotated[float, msgspec.Meta(ge=-_FINITE, le=_FINITE)]  # finite: JSON has no NaN, and advisor writes none
Count = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
Fraction = Annotated[float, msgspec.Meta(ge=0, le=1)]
MAX_FINDINGS = 2_000  # one per rule at most: the built-in packs have under a hundred
MAX_METRICS = 20_000
MAX_ROWS = 100_000  # entries (ranks, kernels), rows of a table, timeline bins
MAX_ITEMS = 10_000  # any other list or map
DEFAULT_MAX_MEMORY = 2 << 30  # --max-memory's default (kinds.base's; core may not import kinds)
ANALYSIS_MEMORY_SHARE = 16  # a saved analysis may be at most this fraction of --max-memory (2GiB: 128 MiB)


def _list(item: Any, limit: int = MAX_ITEMS) -> Any:
    return Annotated[list[item], msgspec.Meta(max_length=limit)]


def _map(value: Any, limit: int = MAX_ITEMS) -> Any:
    return Annotated[dict[str, value], msgspec.Meta(max_length=limit)]


class _Doc(msgspec.Struct, omit_defaults=True):  # omitted defaults: `from_dict` fills them as it always has
    pass


class _Value(_Doc):
    value: Num | None
    unit: str


class _HardwareValue(_Doc):
    value: Num
    unit: str = ""


class _Hardware(_Doc):
    name: str
    values: _map(_HardwareValue)
    description: str = ""
    chosen_by: str = ""
    references: _list(str) | None = None
    notes: _list(str) | None = None


class _Source(_Doc):
    path: str
    format: str
    shape: str = ""
    entry: str | None = None
    entries: _list(str, MAX_ROWS) | None = None
    converted_with: str | None = None
    info: _map(str) = {}


class _Check(_Doc):
    derived_value: Num | None
    relative_difference: Num | None
    tolerance: Num
    agrees: bool | None


class _Metric(_Doc):
    value: Num | None
    unit: str = ""
    source: Literal["reported", "derived"] = "reported"
    description: str = ""
    formula: str | None = None
    inputs: _list(str) | None = None
    missing: _list(str) | None = None
    check: _Check | None = None
    note: str | None = None
    better: Literal["higher", "lower"] | None = None
    raw_name: str | None = None


class _Finding(_Doc):
    id: str
    name: str
    pack: str
    severity: Literal[SEVERITIES]  # type: ignore[valid-type]
    category: str
    title: str
    message: str
    root_cause: bool
    because: _list(str)
    evidence: _map(_Value)
    params: _map(_Value) = {}
    estimated_speedup: Fraction | None = None
    speedup_scope: Literal["global", "local"] = "global"
    recommendation: str = ""
    root_cause_text: str = ""
    condition: str = ""
    references: _list(str) | None = None
    explains: _list(str) | None = None
    capped_by: _list(str) = []
    bound: str = ""
    claims: str = ""
    catch_all: bool = False


class _Bound(_Doc):
    name: str
    title: str = ""
    value: Fraction | None = None
    unit: Literal["fraction"] = "fraction"
    formula: str = ""
    inputs: _map(_Value) = {}
    description: str = ""
    pack: str = ""


class _NotApplicable(_Doc):
    name: str
    missing: _list(str)
    title: str = ""


class _Outcome(_Doc):
    name: str
    outcome: Literal["fired", "passed", "not_applicable", "skipped"]
    detail: str = ""


class _Amdahl(_Doc):
    baseline: _map(Num)
    optimized: _map(Num)
    changed: _list(str)
    fraction: Num | None
    step_speedup: Num | None
    predicted: Num | None
    measured: Num | None
    ceiling: Num | None
    target: Num | None = None
    needed_step_speedup: Num | None = None
    target_reachable: bool | None = None
    unchanged_needed_speedup: Num | None = None
    kernel_share: Num | None = None


class _Expectation(_Doc):
    metric: str
    expr: str
    expected: Num | None
    actual: Num | None
    unit: str
    tolerance: Num
    relative_difference: Num | None
    verdict: Literal["matches", "differs", "unavailable"]


class _Hypothesis(_Doc):
    name: str
    expect: str
    verdict: Literal["supported", "falsified", "undecided"]
    evidence: _map(_Value)
    note: str = ""


class _Investigation(_Doc):
    title: str | None = None
    tracker: str | None = None
    date: str | None = None
    context: str | None = None
    amdahl: _Amdahl | None = None
    expectations: _list(_Expectation) = []
    hypotheses: _list(_Hypothesis) = []


class _Column(_Doc):
    title: str
    value: Num | None
    unit: str


class _Entry(_Doc):
    name: str
    total_time: Num | None = None
    where: str | None = None
    columns: _list(_Column) | None = None  # absent: schema 1's fixed Neuron columns below
    analysed: bool = False
    findings: _list(str) = []
    root_causes: _list(str) = []
    gain: Num | None = None
    gain_finding: str = ""
    core: str | None = None  # schema 1
    dma_active_time_percent: Num | None = None
    tensor_engine_active_time_percent: Num | None = None
    collective_time: Num | None = None


class _VendorFinding(_Doc):
    rule: str
    section: str
    type: str
    message: str
    title: str = ""
    speedup: Num | None = None
    speedup_scope: str = ""


class _Hotspot(_Doc):
    name: str
    time: Num
    share: Num
    count: Count


class _Gap(_Doc):
    start: Num
    duration: Num


class _Engine(_Doc):
    engine: str
    title: str
    rows: _list(str)
    busy: Num
    compute: bool


class _TensorLoad(_Doc):
    name: str
    kind: str
    size: Num
    loaded_bytes: Num
    loads: Count | None
    repeat: Num
    source: str


class _BreakdownColumn(_Doc):
    name: str
    title: str
    unit: str


class _Breakdown(_Doc):
    name: str
    title: str
    key_title: str
    columns: _list(_BreakdownColumn)
    rows: _list(tuple[str, _list(Num | None)], MAX_ROWS)
    note: str = ""
    total_rows: Count | None = None


class _Trace(_Doc):
    instructions: Count
    dma_transfers: Count
    span: Num
    busy_union: Num | None
    hotspots_hlo: _list(_Hotspot)
    hotspots_nki: _list(_Hotspot)
    dma_size_edges: _list(Num | None)
    dma_size_counts: _list(Count)
    timeline_edges: _list(Num, MAX_ROWS)
    timeline: _map(_list(Num, MAX_ROWS))
    gaps: _list(_Gap)
    warnings: _list(str)
    engines: _list(_Engine) | None = None  # absent: written before rows were grouped into engines
    engine_busy: _map(Num) | None = None
    dma_busy: Num | None = None
    compute_busy: Num | None = None
    dma_exposed: Num | None = None
    tensor_loads: _list(_TensorLoad) = []
    tensors_declared: Count = 0
    dma_unnamed_fraction: Num | None = None
    tensor_note: str | None = None
    skipped_instructions: Count = 0
    skipped_dma: Count = 0
    last_event_end: Num | None = None
    breakdowns: _list(_Breakdown) = []


class _Hidden(_Doc):
    name: str
    title: str
    reason: str


class _Settings(_Doc):
    select: _list(str) = []
    ignore: _list(str) = []
    set: _map(Num) = {}
    hardware: str | None = None
    config: str | None = None
    hidden: _list(_Hidden, MAX_FINDINGS) = []


class AnalysisDoc(_Doc):
    schema_version: Literal[READ_SCHEMA_VERSIONS]  # type: ignore[valid-type]
    source: _Source
    metrics: _map(_Metric, MAX_METRICS)
    advisor_version: str = ""
    kind: str | None = None
    hardware: _Hardware | None = None
    packs: _map(str) = {}
    findings: _list(_Finding, MAX_FINDINGS) = []
    not_applicable: _list(_NotApplicable) = []
    outcomes: _list(_Outcome) = []
    notes: _list(str) = []
    investigation: _Investigation | None = None
    entries: _list(_Entry, MAX_ROWS) = []
    trace: _Trace | None = None
    vendor_findings: _list(_VendorFinding) = []
    settings: _Settings | None = None
    bounds: _list(_Bound) = []


class Header(msgspec.Struct):
    schema_version: Any = msgspec.UNSET
    advisor_version: Any = msgspec.UNSET

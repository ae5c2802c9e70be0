"""The schema a saved analysis JSON is checked against before anything is built from it (msgspec Structs),
and its size and count limits. core/schema_errors.py says msgspec's validation errors as one line."""

from __future__ import annotations

from sys import float_info
from typing import Annotated, Any, Literal, TypeVar

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
MAX_FACT = 2_000  # characters of a fact a trace names in words (an operator stack)


T = TypeVar("T")
# Capped lists and maps (generic aliases, so a type checker reads them as list[T] and dict[str, T]).
Items = Annotated[list[T], msgspec.Meta(max_length=MAX_ITEMS)]
Rows = Annotated[list[T], msgspec.Meta(max_length=MAX_ROWS)]
FindingList = Annotated[list[T], msgspec.Meta(max_length=MAX_FINDINGS)]
ItemMap = Annotated[dict[str, T], msgspec.Meta(max_length=MAX_ITEMS)]
RowMap = Annotated[dict[str, T], msgspec.Meta(max_length=MAX_ROWS)]
MetricMap = Annotated[dict[str, T], msgspec.Meta(max_length=MAX_METRICS)]


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
    values: ItemMap[_HardwareValue]
    description: str = ""
    chosen_by: str = ""
    references: Items[str] | None = None
    notes: Items[str] | None = None


class _Source(_Doc):
    path: str
    format: str
    shape: str = ""
    entry: str | None = None
    entries: Rows[str] | None = None
    converted_with: str | None = None
    info: ItemMap[str] = {}


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
    inputs: Items[str] | None = None
    missing: Items[str] | None = None
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
    because: Items[str]
    evidence: ItemMap[_Value]
    params: ItemMap[_Value] = {}
    estimated_speedup: Fraction | None = None
    speedup_scope: Literal["global", "local"] = "global"
    recommendation: str = ""
    root_cause_text: str = ""
    condition: str = ""
    references: Items[str] | None = None
    explains: Items[str] | None = None
    capped_by: Items[str] = []
    bound: str = ""
    claims: str = ""
    catch_all: bool = False
    caps_only: bool = False


class _Bound(_Doc):
    name: str
    title: str = ""
    value: Fraction | None = None
    unit: Literal["fraction"] = "fraction"
    formula: str = ""
    inputs: ItemMap[_Value] = {}
    description: str = ""
    pack: str = ""


class _NotApplicable(_Doc):
    name: str
    missing: Items[str]
    title: str = ""


class _Outcome(_Doc):
    name: str
    outcome: Literal["fired", "passed", "not_applicable", "skipped"]
    detail: str = ""


class _Amdahl(_Doc):
    baseline: ItemMap[Num]
    optimized: ItemMap[Num]
    changed: Items[str]
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
    evidence: ItemMap[_Value]
    note: str = ""


class _Investigation(_Doc):
    title: str | None = None
    tracker: str | None = None
    date: str | None = None
    context: str | None = None
    amdahl: _Amdahl | None = None
    expectations: Items[_Expectation] = []
    hypotheses: Items[_Hypothesis] = []


class _Column(_Doc):
    title: str
    value: Num | None
    unit: str


class _Entry(_Doc):
    name: str
    total_time: Num | None = None
    where: str | None = None
    columns: Items[_Column] | None = None  # absent: schema 1's fixed Neuron columns below
    analysed: bool = False
    findings: Items[str] = []
    root_causes: Items[str] = []
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


class _Hotspot(_Doc):  # schema 2
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
    rows: Items[str]
    busy: Num
    compute: bool


class _TensorLoad(_Doc):  # schema 2
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


class _BreakdownFigure(_Doc):
    name: str
    title: str
    unit: str
    value: Num | None


class _Breakdown(_Doc):
    name: str
    title: str
    key_title: str
    columns: Items[_BreakdownColumn]
    rows: Rows[tuple[str, Items[Num | None]]]
    note: str = ""
    total_rows: Count | None = None
    text_columns: Items[_BreakdownColumn] = []
    texts: RowMap[Items[str]] = {}
    figures: Items[_BreakdownFigure] = []


class _Trace(_Doc):
    span: Num
    busy_union: Num | None
    dma_size_edges: Items[Num | None]
    dma_size_counts: Items[Count]
    timeline_edges: Rows[Num]
    timeline: ItemMap[Rows[Num]]
    gaps: Items[_Gap]
    warnings: Items[str]
    engines: Items[_Engine] | None = None  # absent: written before rows were grouped into engines
    engine_busy: ItemMap[Num] | None = None
    dma_busy: Num | None = None
    compute_busy: Num | None = None
    dma_exposed: Num | None = None
    events: ItemMap[Count] = {}
    skipped: ItemMap[Count] = {}
    last_event_end: Num | None = None
    breakdowns: Items[_Breakdown] = []
    facts: ItemMap[Annotated[str, msgspec.Meta(max_length=MAX_FACT)]] = {}
    # schema 2, read into the above (core/trace_json.py)
    instructions: Count | None = None
    dma_transfers: Count | None = None
    hotspots_hlo: Items[_Hotspot] | None = None
    hotspots_nki: Items[_Hotspot] | None = None
    tensor_loads: Items[_TensorLoad] | None = None
    tensors_declared: Count | None = None
    dma_unnamed_fraction: Num | None = None
    tensor_note: str | None = None
    skipped_instructions: Count | None = None
    skipped_dma: Count | None = None


class _Hidden(_Doc):
    name: str
    title: str
    reason: str


class _Settings(_Doc):
    select: Items[str] = []
    ignore: Items[str] = []
    set: ItemMap[Num] = {}
    hardware: str | None = None
    config: str | None = None
    hidden: FindingList[_Hidden] = []


class AnalysisDoc(_Doc):
    schema_version: Literal[READ_SCHEMA_VERSIONS]  # type: ignore[valid-type]
    source: _Source
    metrics: MetricMap[_Metric]
    advisor_version: str = ""
    kind: str | None = None
    hardware: _Hardware | None = None
    packs: ItemMap[str] = {}
    findings: FindingList[_Finding] = []
    not_applicable: Items[_NotApplicable] = []
    outcomes: Items[_Outcome] = []
    notes: Items[str] = []
    investigation: _Investigation | None = None
    entries: Rows[_Entry] = []
    trace: _Trace | None = None
    vendor_findings: Items[_VendorFinding] = []
    settings: _Settings | None = None
    bounds: Items[_Bound] = []


class Header(msgspec.Struct):
    schema_version: Any = msgspec.UNSET
    advisor_version: Any = msgspec.UNSET

"""Typed values passed between the stages. Imports nothing from advisor, so every stage can use it.

Numbers are in machine units throughout: seconds, bytes, FLOPs, fractions 0..1 for every
`*_percent`. `None` always means *unavailable*, never zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.core.events import EventTrace
    from advisor.core.trace import TraceSummary

# 2: the profile kind, overview rows with columns (1 still reads, as a Neuron analysis); 3: the trace in one
# vocabulary for every kind (event counts per category, the Neuron tables as breakdowns; core/trace_json.py)
SCHEMA_VERSION = 3
READ_SCHEMA_VERSIONS = (1, 2, 3)
SEVERITIES = ("info", "low", "medium", "high", "critical")  # in increasing order
HARDWARE_PREFIX = "hw_"  # packs and contexts read a hardware figure `x` as `hw_x`


@dataclass(frozen=True)
class SourceInfo:
    """Where a profile came from and how it was read."""

    path: str
    format: str  # the adapter's name for the format: summary-json, summary-text, ntff, …
    shape: str  # how the file was laid out, e.g. "profile-id entries", "flat", "legacy summary list"
    entry: str | None = None  # the entry analysed when the file holds several profiles
    entries: tuple[str, ...] = ()  # every entry the file holds
    converted_with: str | None = None  # the command used to convert an NTFF


@dataclass(frozen=True)
class VendorFinding:
    """A verdict the profiler itself wrote into its output (an Nsight Compute rule result), carried
    beside advisor's findings so a reader sees both and where they agree."""

    rule: str  # the profiler's stable rule id (SOLBottleneck, TheoreticalOccupancy, …)
    section: str  # the section it belongs to, as the profiler names it
    type: str  # OPT | INF | WRN | ERR
    message: str
    title: str = ""
    speedup: float | None = None  # the profiler's estimate as a fraction of time (0.6667), None when none
    speedup_scope: str = ""  # "local" (of the unit's own inefficiency) | "global" (of the kernel's time) | ""


@dataclass(frozen=True)
class Profile:
    """One profile as an adapter read it, normalised to machine units."""

    source: SourceInfo
    values: Mapping[str, float | None]  # numeric fields; None = reported as unavailable
    info: Mapping[str, str]  # text fields: versions, instance type, ...
    notes: tuple[str, ...] = ()  # what the adapter had to interpret (sentinels, NaN, odd ranges)
    trace: EventTrace | None = None  # the event trace, when the input has one
    units: Mapping[str, str] = field(default_factory=dict)  # machine unit of each value, by the kind's conventions
    raw_names: Mapping[str, str] = field(default_factory=dict)  # canonical name -> the vendor's, where they differ
    vendor_findings: tuple[VendorFinding, ...] = ()  # the profiler's own rule results, as read
    kind: str = field(kw_only=True)  # the profile kind that read it: neuron, ncu, rbln, …


@dataclass(frozen=True)
class Hardware:
    """Peak figures of one device (a NeuronCore generation, a GPU), and how they were chosen."""

    name: str
    description: str
    values: Mapping[str, float]  # e.g. tensor_peak_flops_bf16, hbm_bandwidth (bytes/s)
    units: Mapping[str, str]
    chosen_by: str  # e.g. "instance_type trn1.2xlarge", "--hardware trn2", "file hw.yaml"
    references: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def env(self) -> dict[str, float]:
        """The figures under the names packs read them by (`hw_hbm_bandwidth`)."""
        return {HARDWARE_PREFIX + k: v for k, v in self.values.items()}

    def env_units(self) -> dict[str, str]:
        return {HARDWARE_PREFIX + k: v for k, v in self.units.items()}


@dataclass(frozen=True)
class CrossCheck:
    """A reported value compared with the same value derived from other fields."""

    derived_value: float | None
    relative_difference: float | None
    tolerance: float
    agrees: bool | None  # None when the derived value is unavailable


@dataclass(frozen=True)
class Metric:
    """One number with its unit and provenance."""

    name: str
    value: float | None
    unit: str
    source: str  # reported | derived
    description: str = ""
    formula: str | None = None
    inputs: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # inputs that were unavailable, when value is None
    check: CrossCheck | None = None
    note: str | None = None
    better: str | None = None  # higher | lower, when the direction of goodness is known
    raw_name: str | None = None  # the vendor's name for a reported metric, where it differs


@dataclass(frozen=True)
class Evidence:
    value: float | None
    unit: str


@dataclass(frozen=True)
class Finding:
    """A rule that fired, with everything a reader needs to check it."""

    id: str
    name: str
    pack: str
    severity: str
    category: str
    title: str
    message: str
    root_cause: bool
    because: tuple[str, ...]  # names of the required rules that fired
    evidence: Mapping[str, Evidence]
    params: Mapping[str, Evidence]  # thresholds, with the unit of the metric they are compared with
    estimated_speedup: float | None
    recommendation: str
    root_cause_text: str = ""
    condition: str = ""
    references: tuple[str, ...] = ()
    explains: tuple[str, ...] = ()  # fired rules this finding explains (they are not root causes)
    # "global": a share of the profile's whole time; "local": of one unit's own inefficiency (Nsight
    # Compute's distinction), an upper bound that is not a share of time and never enters Amdahl sums
    speedup_scope: str = "global"
    # the time budget (docs/time-budget.md): the bounds the fix cannot move, the one that set the estimate
    # (empty when the rule's own formula was lower), the piece of time it claims (findings with one claim
    # share it: counted once), and whether it is a catch-all that ranks after every specific cause
    capped_by: tuple[str, ...] = ()
    bound: str = ""
    claims: str = ""
    catch_all: bool = False
    caps_only: bool = False  # its figure only caps the findings below it: no gain of its own (issue 36)

    @property
    def claim(self) -> str:
        """The piece of time this finding's estimate is a claim on: its own unless the rule names a shared one."""
        return self.claims or self.name

    @property
    def global_speedup(self) -> float | None:
        """The estimate as a share of the kernel's time, or None (none, or a local one)."""
        return self.estimated_speedup if self.speedup_scope == "global" else None


@dataclass(frozen=True)
class Bound:
    """One floor of the time budget: the most of the run that any fix of one class can give back (a share
    of total time), e.g. a fix that moves the same bytes cannot beat the bytes at peak bandwidth."""

    name: str
    title: str
    value: float | None  # the recoverable share of total time, 0..1; None when an input is unavailable
    formula: str
    inputs: Mapping[str, Evidence]  # the names the formula reads, with their values
    description: str = ""  # which fixes it caps and why they cannot move it
    pack: str = ""


@dataclass(frozen=True)
class NotApplicable:
    name: str
    missing: tuple[str, ...]
    title: str = ""


@dataclass(frozen=True)
class RuleOutcome:
    """How every selected rule ended: fired, passed, not_applicable or skipped."""

    name: str
    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class Amdahl:
    """Amdahl's law over a workload's steps: the changed steps are the fraction f, sped up s times."""

    baseline: Mapping[str, float]  # seconds per step
    optimized: Mapping[str, float]
    changed: tuple[str, ...]  # steps whose time changed
    fraction: float | None  # f: changed steps' share of the baseline total
    step_speedup: float | None  # s: baseline / optimized time of the changed steps
    predicted: float | None  # 1 / ((1 - f) + f / s)
    measured: float | None  # baseline total / optimized total
    ceiling: float | None  # 1 / (1 - f): s -> infinity
    target: float | None = None
    needed_step_speedup: float | None = None  # s that reaches the target; None when unreachable
    target_reachable: bool | None = None
    # with the changed steps as they are now: how much faster the unchanged steps must get for the target
    unchanged_needed_speedup: float | None = None
    kernel_share: float | None = None  # the changed steps' share of the optimized workload


@dataclass(frozen=True)
class Expectation:
    """An analytical prediction checked against the profile."""

    metric: str
    expr: str
    expected: float | None
    actual: float | None
    unit: str
    tolerance: float
    relative_difference: float | None
    verdict: str  # matches | differs | unavailable


@dataclass(frozen=True)
class Hypothesis:
    name: str
    expect: str
    verdict: str  # supported | falsified | undecided
    evidence: Mapping[str, Evidence]
    note: str = ""


@dataclass(frozen=True)
class Investigation:
    """The investigation context (--context) and what the profile says about it."""

    title: str | None = None
    tracker: str | None = None
    date: str | None = None
    context: str | None = None  # the author's Markdown
    amdahl: Amdahl | None = None
    expectations: tuple[Expectation, ...] = ()
    hypotheses: tuple[Hypothesis, ...] = ()


@dataclass(frozen=True)
class OverviewColumn:
    """One figure of a profile in the cross-profile overview, as the kind's report.yaml chooses them."""

    title: str  # "DMA active", "Collective time"
    value: float | None
    unit: str


@dataclass(frozen=True)
class ProfileOverview:
    """One profile of several (cores of one file, ranks of a capture, kernels of a run), as the
    cross-profile overview shows it."""

    name: str
    total_time: float | None
    where: str | None  # where it ran, as the kind names it (for Neuron: "nd_idx 0, nc_idx 1")
    columns: tuple[OverviewColumn, ...] = ()
    analysed: bool = False
    findings: tuple[str, ...] = ()
    root_causes: tuple[str, ...] = ()
    gain: float | None = None  # the largest global estimated speedup of its findings (share of its own time)
    gain_finding: str = ""  # the finding that estimate belongs to

    def column(self, title: str) -> float | None:
        return next((c.value for c in self.columns if c.title == title), None)


@dataclass(frozen=True)
class HiddenFinding:
    """A finding the --ignore'd rules kept out of the report: it fired when they ran."""

    name: str
    title: str
    reason: str  # e.g. "requires ignored rule memory-bound"


@dataclass(frozen=True)
class AnalysisSettings:
    """What the analysis was run with (--select, --ignore, --set, --hardware and the settings file), so a
    reader and `compare` can tell two analyses apart. The pack versions are `Analysis.packs`."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    params: Mapping[str, float] = field(default_factory=dict)  # "rule.param" -> value (--set, `set`)
    hardware: str | None = None  # --hardware or the settings file's `hardware`, as given
    config: str | None = None  # the settings file used, when one was
    hidden: tuple[HiddenFinding, ...] = ()  # findings the ignored rules hid


@dataclass(frozen=True)
class Analysis:
    """The saved contract: everything later stages (reports, compare) read."""

    advisor_version: str
    source: SourceInfo
    info: Mapping[str, str]
    hardware: Hardware | None
    metrics: Mapping[str, Metric]
    findings: tuple[Finding, ...] = ()
    not_applicable: tuple[NotApplicable, ...] = ()
    outcomes: tuple[RuleOutcome, ...] = ()
    packs: Mapping[str, str] = field(default_factory=dict)  # pack name -> version
    notes: tuple[str, ...] = ()
    investigation: Investigation | None = None
    entries: tuple[ProfileOverview, ...] = ()  # every profile of the input, when it holds several
    trace: TraceSummary | None = None  # from a full event trace
    vendor_findings: tuple[VendorFinding, ...] = ()  # the profiler's own verdicts, as read
    settings: AnalysisSettings | None = None  # None: unknown (saved before advisor recorded them)
    bounds: tuple[Bound, ...] = ()  # the time budget the findings' estimates are capped by
    schema_version: int = SCHEMA_VERSION
    kind: str = field(kw_only=True)  # the profile kind, which brings the report sections and compare groups

    def value(self, name: str) -> float | None:
        metric = self.metrics.get(name)
        return None if metric is None else metric.value

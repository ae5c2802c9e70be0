"""Nsight Compute's own rule results beside advisor's findings, with their agreement marked.

Every rule result in the input becomes a row, and so does every advisor finding no ncu result
matched: a reader sees both verdicts and never loses one. The mapping between ncu's rules and
advisor's is data (data/verdicts.yaml).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis, Finding, VendorFinding
from advisor.profilers.ncu import KIND

SAME = "same diagnosis"
ROOT_CAUSE = "advisor adds a root cause"
DISAGREE = "disagree"
NOT_MODELLED = "not modelled by advisor"  # an ncu result no advisor rule diagnoses: shown as ncu gave it
ADVISOR_ONLY = "advisor only"
NOT_EVALUATED = "ncu could not evaluate"
ADVISOR_NOT_EVALUATED = "not evaluated"  # advisor's counterparts lacked inputs: no verdict to set against ncu's
FORMULA_DIFFERS = "formula differs by version"  # same diagnosis; ncu's release computed the estimate differently
EVALUATED = ("fired", "passed", "skipped")  # outcomes in which advisor decided (skipped: a prerequisite failed)
_VERSION = re.compile(r"^\s*(\d{1,4})\.(\d{1,3})")  # "2023.3.0.0" -> (2023, 3); anchored, no backtracking
INPUT_PATTERNS = {"ncu release": (_VERSION, (" ", "1", "."))}
INFORMATIONAL = "informational"


@dataclass(frozen=True)
class Verdict:
    vendor: VendorFinding | None  # None: an advisor finding no ncu result matched
    ours: tuple[Finding, ...]  # advisor's findings that make the same diagnosis, as fired
    status: str
    note: str


@dataclass(frozen=True)
class _Mapping:
    rule: str
    sections: tuple[str, ...]
    message: re.Pattern[str] | None
    ours: tuple[str, ...]
    modelled: bool = True  # False: advisor has no rule for this result (data/verdicts.yaml `modelled: false`)

    def matches(self, vendor: VendorFinding) -> bool:
        same_rule = vendor.rule == self.rule if vendor.rule else vendor.section in self.sections
        return same_rule and (self.message is None or bool(self.message.search(vendor.message)))


@dataclass(frozen=True)
class _FormulaChange:
    rule: str
    before: tuple[int, int]  # ncu releases older than this computed the estimate the old way
    was: str  # how, as the reference observed it


def _formula_changes(data: dict[str, Any]) -> list[_FormulaChange]:
    changes = []
    for e in data.get("formula_changes") or ():
        version = _release(str(e["before"]))
        if version is not None:
            changes.append(_FormulaChange(str(e["rule"]), version, str(e.get("was", ""))))
    return changes


def _release(text: str) -> tuple[int, int] | None:
    found = _VERSION.match(text[:40])
    return (int(found.group(1)), int(found.group(2))) if found else None


def _formula_change(analysis: Analysis, vendor: VendorFinding, changes: list[_FormulaChange]) -> _FormulaChange | None:
    """The change of ncu's formula for this rule that the profile's ncu release predates, if the export
    names its release (without it no change can be told from a real disagreement)."""
    release = _release(str(analysis.info.get("profiler_version", "")))
    if release is None:
        return None
    return next((c for c in changes if c.rule == vendor.rule and release < c.before), None)


def _mappings(data: dict[str, Any]) -> list[_Mapping]:
    return [_Mapping(str(e["rule"]), tuple(e.get("sections") or ()),
                     re.compile(e["message"]) if e.get("message") else None, tuple(e.get("ours") or ()),
                     bool(e.get("modelled", True)))
            for e in data.get("rules") or ()]


def estimate_inputs(findings: Sequence[VendorFinding]) -> dict[str, float]:
    """ncu's estimates of the mechanisms data/verdicts.yaml lists under `estimates`, as profile inputs (a later
    result of one rule wins). A local one caps too: ncu's global estimate is never above its local one, and a local
    0 is ncu finding no time to give back (UncoalescedGlobalAccess without L2 cycle counters, as in 2023.2)."""
    entries = KIND.data("verdicts.yaml").get("estimates") or ()
    wanted = [(m, str(e["input"])) for m, e in zip(_mappings({"rules": entries}), entries, strict=True)]
    found: dict[str, float] = {}
    for vendor in findings:
        if vendor.speedup is None:
            continue
        for mapping, name in wanted:
            if mapping.matches(vendor):
                found[name] = vendor.speedup
    return found


def estimate(speedup: float | None, scope: str, none: str = "no estimate") -> str:
    """"66.67 % local", "0.71 % global", or `none`."""
    if speedup is None:
        return none
    return f"{fmt.percent(speedup)} {scope or 'global'}"


def _outcome_text(analysis: Analysis, names: tuple[str, ...]) -> str:
    """Why advisor's counterpart rules did not fire: passed, or not evaluated for want of what."""
    by_name = {o.name: o for o in analysis.outcomes}
    parts = []
    for name in names:
        outcome = by_name.get(name)
        if outcome is not None:
            detail = f" ({outcome.detail})" if outcome.detail else ""
            parts.append(f"{name}: {outcome.outcome.replace('_', ' ')}{detail}")
    return "; ".join(parts) or "no advisor rule of that name ran"


def _same_size(analysis: Analysis, vendor: VendorFinding, ours: tuple[Finding, ...], tolerance: float) -> str:
    """A note comparing the two estimates where both exist."""
    estimated = [f for f in ours if f.estimated_speedup is not None]
    if vendor.speedup is None or not estimated:
        return ""
    best = max(estimated, key=lambda f: f.estimated_speedup or 0.0)
    ncu_text = estimate(vendor.speedup, vendor.speedup_scope)
    our_text = estimate(best.estimated_speedup, best.speedup_scope)
    same_scope = best.speedup_scope == (vendor.speedup_scope or "global")
    if same_scope and abs((best.estimated_speedup or 0.0) - vendor.speedup) <= tolerance:
        return f"Estimates agree: ncu {ncu_text}, advisor {our_text}."
    capped = ""
    if best.bound:  # advisor's figure was set by a bound of the time budget that ncu's formula does not apply
        title = next((b.title for b in analysis.bounds if b.name == best.bound), best.bound)
        capped = f", capped by {title} ({best.bound})"
    return f"Estimates differ: ncu {ncu_text}, advisor {our_text} ({best.name}{capped})."


def verdicts(analysis: Analysis) -> list[Verdict]:
    """One row per ncu rule result, then one per advisor finding none of them matched."""
    if not analysis.vendor_findings:
        return []
    data = KIND.data("verdicts.yaml")
    mappings = _mappings(data)
    unusable = re.compile(str(data.get("could_not_evaluate") or r"(?!)"))
    tolerance = float(data.get("speedup_tolerance", 0.0005))
    changes = _formula_changes(data)
    outcomes = {o.name: o.outcome for o in analysis.outcomes}
    fired = {f.name: f for f in analysis.findings}
    matched: set[str] = set()
    rows = []
    for vendor in analysis.vendor_findings:
        mapping = next((m for m in mappings if m.matches(vendor)), None)
        if vendor.type == "ERR" or unusable.search(vendor.message):
            rows.append(Verdict(vendor, (), NOT_EVALUATED, "Nsight Compute reported it could not evaluate this "
                                                           "rule; advisor's own rules ran on the metrics present."))
            continue
        if mapping is None or not mapping.modelled:
            rule = vendor.rule or vendor.section
            what = f" ({vendor.title})" if vendor.title else ""
            rows.append(Verdict(vendor, (), NOT_MODELLED, f"advisor has no rule for ncu's {rule}{what}: it is shown as "
                                                          "ncu gave it, and its estimate enters none of advisor's "
                                                          "sums."))
            continue
        if not mapping.ours:
            rows.append(Verdict(vendor, (), INFORMATIONAL, "ncu states a fact here, not a problem."))
            continue
        ours = tuple(fired[n] for n in mapping.ours if n in fired)
        matched.update(f.name for f in ours)
        if not ours:
            # "disagree" needs a verdict from both tools: counterparts that could not run (missing inputs) give none
            evaluated = any(outcomes.get(n) in EVALUATED for n in mapping.ours)
            rows.append(Verdict(vendor, (), DISAGREE if evaluated else ADVISOR_NOT_EVALUATED,
                                f"ncu: {estimate(vendor.speedup, vendor.speedup_scope)}. "
                                f"advisor: {_outcome_text(analysis, mapping.ours)}."))
            continue
        causes = sorted({c for f in ours if not f.root_cause for c in _explainers(analysis, f.name)})
        size = _same_size(analysis, vendor, ours, tolerance)
        change = _formula_change(analysis, vendor, changes) if size.startswith("Estimates differ") else None
        if change is not None:
            release = analysis.info.get("profiler_version", "")
            rows.append(Verdict(vendor, ours, FORMULA_DIFFERS, f"{size} ncu {release} predates a change of this "
                                                               f"rule's formula ({change.was}); advisor follows "
                                                               "the current one."))
        elif causes:
            note = f"advisor traces it to {', '.join(causes)}. {size}".strip()
            rows.append(Verdict(vendor, ours, ROOT_CAUSE, note))
        else:
            rows.append(Verdict(vendor, ours, SAME, size))
    known = {name for m in mappings for name in m.ours}
    for finding in analysis.findings:
        if finding.name not in matched:
            note = ("Nsight Compute has no rule for this." if finding.name not in known else
                    "The ncu rule for this did not report it (or was not run).")
            rows.append(Verdict(None, (finding,), ADVISOR_ONLY, note))
    return rows


def _explainers(analysis: Analysis, name: str) -> list[str]:
    """The fired findings that make `name` a consequence (as the engine decides root causes): those
    that explain it, and those that require it (the deeper cause of a required symptom)."""
    return [f.name for f in analysis.findings if name in f.explains or name in f.because]

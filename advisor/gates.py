"""CI gates: whether an analysis or a comparison should fail a build, and why.

Each gate returns the failure messages (empty when it passes), so the command line, the Python API and
a fleet run judge alike and each decides how to show them (`advisor: gate: <message>` on the command
line, exit 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol, TypeVar

from advisor.core.comparison import STEP_WORK_WARNING, Comparison, Series
from advisor.core.errors import AdvisorError, suggest
from advisor.core.model import SEVERITIES


class _Severe(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def severity(self) -> str: ...


F = TypeVar("F", bound=_Severe)


def _rank(severity: str, where: str) -> int:
    severity = severity.lower() if isinstance(severity, str) else severity  # HIGH is high
    if severity not in SEVERITIES:
        raise AdvisorError(where, f"unknown severity '{severity}'{suggest(severity, SEVERITIES)}; "
                                  f"known: {', '.join(SEVERITIES)}")
    return SEVERITIES.index(severity)


def findings_at_or_above(findings: Iterable[F], severity: str) -> list[F]:
    """The findings (or compare's finding changes) whose severity is `severity` or worse, in order."""
    gate = _rank(severity, "severity")
    return [f for f in findings if SEVERITIES.index(f.severity) >= gate]


def _names(findings: Iterable[_Severe]) -> str:
    return ", ".join(f"{f.name} ({f.severity})" for f in findings)


def severity_gate(findings: Iterable[_Severe], fail_on: str | None) -> list[str]:
    """`report --fail-on SEVERITY`: fails when any finding at or above it fired."""
    if not fail_on:
        return []
    hits = findings_at_or_above(findings, fail_on)
    return [f"{len(hits)} finding(s) at or above {fail_on}: {_names(hits)}"] if hits else []


def overall(result: Comparison | Series) -> Comparison:
    """What compare's gates judge: the pair itself, or a series' first attempt against its last."""
    return result.overall if isinstance(result, Series) else result


def regression_gate(result: Comparison | Series, max_slowdown_percent: float | None) -> list[str]:
    """`compare --fail-on-regression PCT`: fails when total time got worse by more than PCT % from the
    first input to the last. A comparison without both total times cannot be judged: that is an error
    (AdvisorError), never a pass."""
    if max_slowdown_percent is None:
        return []
    if (isinstance(max_slowdown_percent, bool) or not isinstance(max_slowdown_percent, (int, float))
            or not math.isfinite(max_slowdown_percent) or max_slowdown_percent < 0):
        # NaN would trip on every comparison and infinity never: either silently changes what CI checks
        raise AdvisorError("--fail-on-regression", f"must be a finite percentage, 0 or more, got "
                                                   f"{max_slowdown_percent!r}")
    max_slowdown_percent += 0.0  # `=-0` parses as -0.0, which adding 0.0 makes 0.0: never "more than -0 %"
    pair = overall(result)
    if pair.speedup is None or not math.isfinite(pair.speedup) or pair.speedup <= 0:
        raise AdvisorError("--fail-on-regression", f"total time is unavailable for {pair.before.label} or "
                                                   f"{pair.after.label}, so a regression cannot be judged")
    different = next((w for w in pair.warnings if w.startswith(STEP_WORK_WARNING)), None)
    if different is not None:  # another model or other shapes: a time ratio is no regression of the same work
        changes = different.split(": ", 1)[-1].split(", more than", 1)[0]
        raise AdvisorError("--fail-on-regression", f"{pair.before.label} and {pair.after.label} ran different work "
                                                   f"per step ({changes}), so a regression cannot be judged")
    slower = (1 / pair.speedup - 1) * 100
    if slower <= max_slowdown_percent + 1e-9:  # exactly at the allowance passes, whatever the float rounding
        return []
    return [f"{pair.speedup_title.lower()} {slower:+.1f} % ({pair.before.label} → {pair.after.label}), "
            f"more than {max_slowdown_percent:g} %"]


def new_findings_gate(result: Comparison | Series, fail_on_new: str | None) -> list[str]:
    """`compare --fail-on-new SEVERITY`: fails when a finding at or above it is new in the last input
    (it did not fire on the first)."""
    if not fail_on_new:
        return []
    new = findings_at_or_above((f for f in overall(result).findings if f.status == "new"), fail_on_new)
    return [f"new finding(s) at or above {fail_on_new}: {_names(new)}"] if new else []


def compare_gates(result: Comparison | Series, fail_on_regression: float | None = None,
                  fail_on_new: str | None = None) -> list[str]:
    """Every compare gate, in order: regression, then new findings."""
    return [*regression_gate(result, fail_on_regression), *new_findings_gate(result, fail_on_new)]


__all__ = ["compare_gates", "findings_at_or_above", "new_findings_gate", "overall", "regression_gate",
           "severity_gate"]

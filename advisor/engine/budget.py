"""The time budget: every estimate is a claim on a piece of the measured time (docs/time-budget.md).

Bounds are the floors a kind's metrics support, each the most of the run that one class of fix can
give back. A rule names the bounds its fix cannot move (`capped_by`) and its estimate is capped by
each; a catch-all rule is capped by every bound a fired rule named; findings that claim the same time
(`claims`) are counted once when gains are added up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from advisor.core.model import SEVERITIES, Bound, Evidence, Finding
from advisor.packs.model import BoundDef


def _fraction(value: object) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if number != number else min(1.0, max(0.0, number))


def bounds(defs: Sequence[BoundDef], env: Mapping[str, float | None], units: Mapping[str, str]) -> tuple[Bound, ...]:
    """Every bound's value, computed once from the metrics, with the inputs its formula read."""
    return tuple(Bound(name=d.name, title=d.title, value=_fraction(d.recoverable.evaluate(env)),
                       formula=d.recoverable.text, description=d.description, pack=d.pack,
                       inputs={n: Evidence(env.get(n), units.get(n, "")) for n in d.recoverable.names})
                 for d in defs)


def capped(speedup: float | None, names: Iterable[str], values: Mapping[str, float | None]) -> tuple[float | None, str]:
    """The estimate capped by each named bound that has a value, and the bound that set it ('' when the
    rule's own formula was the lowest)."""
    binding = ""
    if speedup is None:
        return None, binding
    for name in names:
        value = values.get(name)
        if value is not None and value <= speedup:
            speedup, binding = value, name
    return speedup, binding


def cap_catch_alls(findings: Sequence[Finding], values: Mapping[str, float | None]) -> list[Finding]:
    """A catch-all rule names no mechanism of its own, so it can give back no more than the tightest bound the
    specific findings that explain it established (any fired rule's, when none explains it)."""
    everywhere = {n for f in findings if not f.catch_all for n in f.capped_by}
    by_name = {f.name: f for f in findings}
    causes = _causes(findings)
    out = []
    for f in findings:
        if f.catch_all and f.estimated_speedup is not None:
            # the findings that explain it say where its time goes; with none, any fired rule's bound applies
            mine = {n for c in causes.get(f.name, ()) if not by_name[c].catch_all for n in by_name[c].capped_by}
            established = mine or everywhere
            speedup, binding = capped(f.estimated_speedup, sorted(established - set(f.capped_by)), values)
            if binding:
                f = replace(f, estimated_speedup=speedup, bound=binding)
        out.append(f)
    return out


def _causes(findings: Sequence[Finding]) -> dict[str, list[str]]:
    """Each explained finding's direct causes: the findings that explain it or require it."""
    names = {f.name for f in findings}
    causes: dict[str, list[str]] = {}
    for f in findings:
        for name in (*f.because, *f.explains):
            if name in names and name != f.name:
                causes.setdefault(name, []).append(f.name)
    return causes


def symptoms_within_causes(findings: Sequence[Finding], values: Mapping[str, float | None]) -> list[Finding]:
    """A symptom's time is its causes' time: its estimate is capped by what its causes recover together, and
    when none of them can name a share of time it claims none; `bound` then names those causes. A symptom that
    shares a cause's claim is the same time by the pack's word and keeps its estimate (counted once in sums)."""
    by_name = {f.name: f for f in findings}
    causes = _causes(findings)
    for _ in range(len(findings)):  # causes first, down the longest chain
        changed = False
        for name, names in causes.items():
            f = by_name[name]
            if f.global_speedup is None:
                continue
            if any(by_name[c].claim == f.claim for c in names):
                continue  # the same time as a cause's, by the pack's word: one claim, counted once in sums
            known = [by_name[c] for c in names if by_name[c].global_speedup is not None]
            cap, _ = together_and_bound(known, values, roots_only=False) if known else (None, "")
            if cap is None:
                by_name[name] = replace(f, estimated_speedup=None, bound=names[0])
                changed = True
            elif cap < f.global_speedup - 1e-12:
                by_name[name] = replace(f, estimated_speedup=cap, bound=",".join(c.name for c in known))
                changed = True
        if not changed:
            break
    return [by_name[f.name] for f in findings]


def severities_below_causes(findings: Sequence[Finding]) -> list[Finding]:
    """A symptom is never more severe than the most severe finding that explains it (through any chain)."""
    causes = _causes(findings)
    level = {f.name: SEVERITIES.index(f.severity) for f in findings}
    for _ in range(len(findings)):  # a longest chain is no longer than the findings
        changed = False
        for name, names in causes.items():
            ceiling = max(level[c] for c in names)
            if level[name] > ceiling:
                level[name], changed = ceiling, True
        if not changed:
            break
    return [replace(f, severity=SEVERITIES[level[f.name]]) if SEVERITIES[level[f.name]] != f.severity else f
            for f in findings]


def claimed_together(findings: Iterable[Finding], bound_values: Mapping[str, float | None]) -> float | None:
    """What the findings could recover together, each piece of time once (see `together_and_bound`)."""
    return together_and_bound(findings, bound_values)[0]


def together_and_bound(findings: Iterable[Finding], bound_values: Mapping[str, float | None],
                       roots_only: bool = True) -> tuple[float | None, str]:
    """What the findings could recover together and the bound that capped the sum ('' when none did): only the
    claims of root causes count (a symptom's time is its causes'; one that shares a cause's claim is that claim),
    a claim counts as its findings' largest estimate and distinct claims add up. The sum stays within the tightest bound
    that every one of them names (none of the fixes moves that floor); with no bound in common, within the
    loosest bound any names; and if it would take the whole run, the claims cannot be separate time: only the
    largest counts."""
    findings = list(findings)
    counted = {f.claim for f in findings if f.root_cause or not roots_only}
    best: dict[str, float] = {}
    named: list[set[str]] = []
    for f in findings:
        gain = f.global_speedup
        if gain is None or f.claim not in counted:  # a symptom's own claim is inside its causes' time
            continue
        best[f.claim] = max(best.get(f.claim, 0.0), gain)
        named.append({n for n in f.capped_by if bound_values.get(n) is not None})
    if not best:
        return None, ""
    total, binding = sum(best.values()), ""
    common = set.intersection(*named)
    candidates = sorted(common or set.union(*named), key=lambda n: (bound_values[n], n))
    if candidates:
        cap = candidates[0] if common else candidates[-1]
        if bound_values[cap] <= total:  # type: ignore[operator]
            total, binding = bound_values[cap], cap  # type: ignore[assignment]
    if total >= 1.0:
        total, binding = max(best.values()), ""
    return total, binding


def bound_values(found: Iterable[Bound]) -> dict[str, float | None]:
    return {b.name: b.value for b in found}

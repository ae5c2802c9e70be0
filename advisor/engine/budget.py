"""The time budget: every estimate is a claim on a piece of the measured time (docs/time-budget.md).

Bounds are the floors a kind's metrics support, each the most of the run that one class of fix can
give back. A rule names the bounds its fix cannot move (`capped_by`) and its estimate is capped by
each; a catch-all rule is capped by every bound a fired rule named; a symptom by what its causes give. When
gains are added up, only root causes count and findings that claim the same time (`claims`) count once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from advisor.core.model import SEVERITIES, Bound, Evidence, Finding
from advisor.packs.model import BoundDef

ROUNDING = 1e-9  # a ratio of two measured times can pass 1 by a few units in the last place


def share_of_time(value: object) -> tuple[float | None, str]:
    """A pack expression's value read as a share of the run (0..1), and the problem when it cannot be one.
    Below 0 is 0: a fix cannot give back less than nothing, and formulas such as `a - b` go negative when there
    is nothing to recover. Above 1 is no share of time at all (the formula, or a figure it reads, is wrong), so it
    is unavailable with the problem said, never clamped to 100 %: a clamped 1e300 would claim the whole run."""
    if value is None or isinstance(value, bool):
        return None, ""
    number = float(value)  # type: ignore[arg-type]
    if number != number:
        return None, "evaluated to NaN, which is no share of time"
    if number > 1.0 + ROUNDING:
        return None, f"evaluated to {number:.4g}, more than the whole run (a share of time is 0..1)"
    return min(1.0, max(0.0, number)), ""


NOTE = "advisor:"  # begins every note the engine adds to a pack's text: the reader knows it is not the pack's


def bounds(defs: Sequence[BoundDef], env: Mapping[str, float | None], units: Mapping[str, str]) -> tuple[Bound, ...]:
    """Every bound's value, computed once from the metrics, with the inputs its formula read."""
    return bounds_and_notes(defs, env, units)[0]


def bounds_and_notes(defs: Sequence[BoundDef], env: Mapping[str, float | None],
                     units: Mapping[str, str]) -> tuple[tuple[Bound, ...], dict[str, str]]:
    """The bounds, and a note for each whose formula gives no share of time here, by name. Such a bound is
    unavailable (it caps nothing, as when an input is missing); its description and the findings it would cap
    carry the note, so the report says why instead of showing a clamped 100 %."""
    found: list[Bound] = []
    notes: dict[str, str] = {}
    for d in defs:
        value, problem = share_of_time(d.recoverable.evaluate(env))
        if problem:
            notes[d.name] = f"{NOTE} bound {d.name} (pack {d.pack}): recoverable {problem}; it caps nothing."
        found.append(Bound(name=d.name, title=d.title, value=value, formula=d.recoverable.text,
                           description=f"{d.description} {notes.get(d.name, '')}".strip(), pack=d.pack,
                           inputs={n: Evidence(env.get(n), units.get(n, "")) for n in d.recoverable.names}))
    return tuple(found), notes


def estimate_note(rule: str, problem: str) -> str:
    """The note a finding carries when its rule's estimate is no share of time (`share_of_time`)."""
    return f"{NOTE} rule {rule}: estimated_speedup {problem}; the estimate is unavailable."


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
    when none of them can name a share of time it claims none; `bound` then names those causes. This holds for
    a symptom that shares a cause's claim too: sharing a claim says the time is the same, so the symptom cannot
    give back more of it than its causes do."""
    by_name = {f.name: f for f in findings}
    causes = _causes(findings)
    for _ in range(len(findings)):  # causes first, down the longest chain
        changed = False
        for name, names in causes.items():
            f = by_name[name]
            if f.global_speedup is None:
                continue
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
    """What the findings could recover together and the bound that capped the sum ('' when none did).

    Only root causes' estimates count (`roots_only`): a symptom's time is its causes' time, whatever it claims,
    and context (info) is no cause's. A claim counts as its largest estimate and distinct claims add up, so each
    piece of time is counted once. The sum stays within the tightest bound that every claim's largest estimate
    names (none of those fixes moves that floor); with no bound in common, within the loosest bound any names;
    and if it would take the whole run, the claims cannot be separate time: only the largest counts. A finding
    below its claim's largest estimate, or at 0 %, gives no time back, so its bounds take no part either: a 0 %
    rule that shares a claim, or names a loose bound, cannot raise the sum."""
    best: dict[str, float] = {}
    held: dict[str, set[str]] = {}  # each claim's bounds: those its largest estimate names
    for f in findings:
        gain = f.global_speedup
        if gain is None or (roots_only and not f.root_cause):
            continue
        named = {n for n in f.capped_by if bound_values.get(n) is not None}
        if f.claim not in best or gain > best[f.claim]:
            best[f.claim], held[f.claim] = gain, named
        elif gain == best[f.claim]:
            held[f.claim] |= named  # either fix gives this time back, so each one's bounds hold it
    if not best:
        return None, ""
    total, binding = sum(best.values()), ""
    named_sets = [held[c] for c, gain in best.items() if gain > 0]
    common = set.intersection(*named_sets) if named_sets else set()
    candidates = sorted(common or set().union(*named_sets), key=lambda n: (bound_values[n], n))
    if candidates:
        cap = candidates[0] if common else candidates[-1]
        if bound_values[cap] <= total:  # type: ignore[operator]
            total, binding = bound_values[cap], cap  # type: ignore[assignment]
    if total >= 1.0:
        total, binding = max(best.values()), ""
    return total, binding


def bound_values(found: Iterable[Bound]) -> dict[str, float | None]:
    return {b.name: b.value for b in found}

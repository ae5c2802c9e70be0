"""The investigation context (`--context FILE`): title, tracker, the author's notes, workload step
timings for the Amdahl picture, analytical expectations and hypotheses, judged against the
profile's metrics."""

from __future__ import annotations

import datetime
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError, Problems, suggest
from advisor.core.expr import ExprError, Expression, compile_expression, fraction_mistakes
from advisor.core.model import Amdahl, Evidence, Expectation, Hypothesis, Investigation, Metric
from advisor.core.numbers import EXPECTATION_TOLERANCE, as_number, relative_difference
from advisor.core.yamlsafe import load_yaml_file
from advisor.investigation.scalars import checked_date

KEYS = ("title", "tracker", "date", "context", "workload", "expectations", "hypotheses")
WORKLOAD_KEYS = ("baseline", "optimized", "target_speedup")
# A step's time, in any unit the steps share: within this range every Amdahl quantity is a finite float
# (1e300 s against 1e-300 s made the speedup infinite and its prediction a division by zero).
STEP_SECONDS = (1e-15, 1e15)


@dataclass(frozen=True)
class Context:
    """A parsed, checked context file, before the profile judges it."""

    path: str
    title: str | None
    tracker: str | None
    date: str | None
    text: str | None
    baseline: dict[str, float]
    optimized: dict[str, float]
    target: float | None
    expectations: tuple[tuple[str, Expression, float], ...]  # metric, expression, tolerance
    hypotheses: tuple[tuple[str, Expression, str], ...]  # name, expect, note


def _text(where: str, data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, (datetime.date, int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise AdvisorError(where, f"'{key}' must be text")
    return value.strip()


def _steps(where: str, raw: Any, which: str) -> dict[str, float]:
    if not isinstance(raw, dict) or not raw:
        raise AdvisorError(where, f"workload.{which} must map step names to seconds, e.g. {{gemm: 5.2}}")
    steps = {}
    for name, value in raw.items():
        number = as_number(value)
        if number is None or not STEP_SECONDS[0] <= number <= STEP_SECONDS[1]:
            raise AdvisorError(where, f"workload.{which}.{name} must be a time in seconds (> 0) from "
                                      f"{STEP_SECONDS[0]:g} to {STEP_SECONDS[1]:g}, not {value!r}")
        steps[str(name)] = number
    return steps


def _expression(where: str, what: str, text: Any, known: Collection[str]) -> Expression:
    try:
        return compile_expression(text, known)
    except ExprError as exc:
        raise AdvisorError(where, f"{what}: {exc.pointed()}") from None


def load_context(path: Path, known: Collection[str], units: Mapping[str, str] | None = None) -> Context:
    """Read and check a context file; `known` are the names expressions may use, `units` their units
    (to catch a percent written where a fraction belongs)."""
    where = str(path)
    data = load_yaml_file(path)  # a date no calendar holds is one line naming its line and field (yamlsafe)
    if not isinstance(data, dict):
        raise AdvisorError(where, "a context file must be a YAML mapping (see docs/context.md)")
    unknown = [str(k) for k in data if k not in KEYS]
    if unknown:
        raise AdvisorError(where, f"unknown key '{unknown[0]}'{suggest(unknown[0], KEYS)}")
    baseline, optimized, target = _workload(where, data.get("workload"))
    expectations = _expectations(where, data.get("expectations") or {}, known)
    hypotheses, mistakes = _hypotheses(where, data.get("hypotheses") or [], known, units or {})
    if mistakes:
        raise Problems([f"{where}: {m}" for m in mistakes], where)
    date = _text(where, data, "date")
    return Context(path=where, title=_text(where, data, "title"), tracker=_text(where, data, "tracker"),
                   date=None if date is None else checked_date(where, date), text=_text(where, data, "context"),
                   baseline=baseline, optimized=optimized, target=target, expectations=tuple(expectations),
                   hypotheses=tuple(hypotheses))


def _workload(where: str, workload: Any) -> tuple[dict[str, float], dict[str, float], float | None]:
    """The workload's step timings before and after (the same steps in both) and its target speedup."""
    if workload is None:
        return {}, {}, None
    if not isinstance(workload, dict) or any(k not in WORKLOAD_KEYS for k in workload):
        raise AdvisorError(where, f"workload takes only {', '.join(WORKLOAD_KEYS)}")
    baseline = _steps(where, workload.get("baseline"), "baseline")
    optimized = _steps(where, workload.get("optimized"), "optimized")
    extra, lost = sorted(set(optimized) - set(baseline)), sorted(set(baseline) - set(optimized))
    if extra or lost:
        parts = ([f"optimized has steps not in baseline: {', '.join(extra)}"] if extra else []) + (
            [f"baseline has steps not in optimized: {', '.join(lost)}"] if lost else [])
        raise AdvisorError(where, "workload steps differ: " + "; ".join(parts))
    target = None
    if workload.get("target_speedup") is not None:
        target = as_number(workload["target_speedup"])
        if target is None or target <= 1:
            raise AdvisorError(where, "workload.target_speedup must be a number above 1")
    return baseline, optimized, target


def _expectations(where: str, raw_expect: Any, known: Collection[str]) -> list[tuple[str, Expression, float]]:
    """What the metrics should be: (metric, expression, tolerance) each."""
    if not isinstance(raw_expect, dict):
        raise AdvisorError(where, "expectations must map metric names to {expr, tolerance}")
    expectations = []
    for metric, spec in raw_expect.items():
        if metric not in known:
            raise AdvisorError(where, f"expectations: unknown metric '{metric}'{suggest(metric, known)}")
        spec = spec if isinstance(spec, dict) else {"expr": spec}
        tolerance = as_number(spec.get("tolerance", EXPECTATION_TOLERANCE))
        if tolerance is None or tolerance < 0:
            raise AdvisorError(where, f"expectations.{metric}.tolerance must be a fraction such as 0.02")
        expectations.append((str(metric), _expression(where, f"expectations.{metric}", spec.get("expr"), known),
                             tolerance))
    return expectations


def _hypotheses(where: str, raw_hyp: Any, known: Collection[str],
                units: Mapping[str, str]) -> tuple[list[tuple[str, Expression, str]], list[str]]:
    """The hypotheses (name, expect, note) each, and the fractions their conditions compare with percents."""
    if not isinstance(raw_hyp, list):
        raise AdvisorError(where, "hypotheses must be a list of {name, expect}")
    hypotheses = []
    mistakes: list[str] = []
    for i, item in enumerate(raw_hyp):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or "expect" not in item:
            raise AdvisorError(where, f"hypotheses[{i}] needs a name and an expect condition")
        expect = _expression(where, f"hypotheses[{i}].expect", item["expect"], known)
        mistakes += [f"hypotheses[{i}].expect: {m}" for m in fraction_mistakes(expect, units)]
        hypotheses.append((item["name"].strip(), expect, str(item.get("note", "") or "").strip()))
    return hypotheses, mistakes


def amdahl(baseline: Mapping[str, float], optimized: Mapping[str, float], target: float | None) -> Amdahl:
    changed = tuple(s for s in baseline if not math.isclose(baseline[s], optimized[s], rel_tol=1e-12, abs_tol=0))
    total_before, total_after = sum(baseline.values()), sum(optimized.values())
    before_changed = sum(baseline[s] for s in changed)
    after_changed = sum(optimized[s] for s in changed)
    f = before_changed / total_before if total_before > 0 else None
    s = before_changed / after_changed if after_changed > 0 else None
    predicted = None
    if f is not None and s is not None:
        predicted = 1 / ((1 - f) + f / s)
    elif f == 0:
        predicted = 1.0
    ceiling = 1 / (1 - f) if f is not None and f < 1 else None
    measured = total_before / total_after if total_after > 0 else None
    needed, reachable, unchanged_needed = None, None, None
    if target is not None and f is not None:
        room = 1 / target - (1 - f)  # f / s must shrink to this
        reachable = room > 0
        needed = f / room if reachable else None
        unchanged_before = total_before - before_changed
        unchanged_budget = total_before / target - after_changed  # time left for the unchanged steps
        if unchanged_before > 0 and unchanged_budget > 0:
            unchanged_needed = unchanged_before / unchanged_budget
    return Amdahl(baseline=dict(baseline), optimized=dict(optimized), changed=changed, fraction=f,
                  step_speedup=s, predicted=predicted, measured=measured, ceiling=ceiling, target=target,
                  needed_step_speedup=needed, target_reachable=reachable, unchanged_needed_speedup=unchanged_needed,
                  kernel_share=after_changed / total_after if total_after > 0 else None)


def judge(context: Context, env: Mapping[str, float | None], metrics: Mapping[str, Metric]) -> Investigation:
    expectations = []
    for metric, expr, tolerance in context.expectations:
        expected = expr.evaluate(env)
        expected = None if expected is None or isinstance(expected, bool) else float(expected)
        actual = env.get(metric)
        difference = None if expected is None or actual is None else relative_difference(actual, expected)
        verdict = "unavailable" if difference is None else "matches" if difference <= tolerance else "differs"
        unit = metrics[metric].unit if metric in metrics else ""
        expectations.append(Expectation(metric=metric, expr=expr.text, expected=expected, actual=actual, unit=unit,
                                        tolerance=tolerance, relative_difference=difference, verdict=verdict))
    hypotheses = []
    for name, expr, note in context.hypotheses:
        result = expr.evaluate(env)
        verdict = "undecided" if result is None else "supported" if result else "falsified"
        evidence = {n: Evidence(env.get(n), metrics[n].unit if n in metrics else "") for n in expr.names}
        hypotheses.append(Hypothesis(name=name, expect=expr.text, verdict=verdict, evidence=evidence, note=note))
    workload = amdahl(context.baseline, context.optimized, context.target) if context.baseline else None
    return Investigation(title=context.title, tracker=context.tracker, date=context.date, context=context.text,
                         amdahl=workload, expectations=tuple(expectations), hypotheses=tuple(hypotheses))

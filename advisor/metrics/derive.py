"""Metric derivation: reported fields plus the packs' derived metrics, each with unit and provenance.

A derived metric is computed once all its inputs are available (a fixpoint over the definitions,
so a pair such as active time <-> active percent fills whichever side the profile left out).
A value the profile reports is kept; its derivation from other *reported* values becomes a
cross-check, flagged when they disagree by more than the tolerance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from advisor.core.model import HARDWARE_PREFIX, CrossCheck, Hardware, Metric, Profile
from advisor.core.numbers import CROSS_CHECK_TOLERANCE, relative_difference
from advisor.packs.model import MetricDef, RuleSet


def hardware_env(hardware: Hardware | None) -> dict[str, float | None]:
    return {**hardware.env()} if hardware else {}


def _reported(profile: Profile, ruleset: RuleSet, definitions: Mapping[str, MetricDef]) -> dict[str, Metric]:
    out = {}
    for name, value in profile.values.items():
        declared = ruleset.inputs.get(name)
        definition = definitions.get(name)
        unit = declared.unit if declared else definition.unit if definition else profile.units.get(name, "")
        description = declared.description if declared else definition.description if definition else ""
        note = None if value is not None else "reported as unavailable"
        better = (definition.better if definition else None) or (declared.better if declared else None)
        out[name] = Metric(name=name, value=value, unit=unit, source="reported", description=description,
                           note=note, better=better, raw_name=profile.raw_names.get(name))
    return out


def derive(profile: Profile, hardware: Hardware | None, ruleset: RuleSet,
           from_events: Mapping[str, float | None] | None = None) -> dict[str, Metric]:
    """Every metric, sorted by name: reported fields, metrics measured on the event trace, then
    what the packs derive from them."""
    definitions = {d.name: d for d in ruleset.metrics}
    metrics = _reported(profile, ruleset, definitions)
    reported = {n for n, m in metrics.items() if m.value is not None}
    for name, value in (from_events or {}).items():
        declared = ruleset.inputs.get(name)
        metrics[name] = Metric(name=name, value=value, unit=declared.unit if declared else "",
                               source="derived", description=declared.description if declared else "",
                               formula="measured on the event trace", better=declared.better if declared else None)
    env: dict[str, float | None] = {**hardware_env(hardware), **{n: m.value for n, m in metrics.items()}}

    pending = {d.name: d for d in ruleset.metrics if d.name not in reported}
    progress = True
    while pending and progress:  # a definition is ready once none of its inputs is still pending
        progress = False
        for name, definition in list(pending.items()):
            if not any(n in pending and n != name for n in definition.expr.names):
                env[name] = _number(definition.expr.evaluate(env))
                del pending[name]
                progress = True
    for name, definition in pending.items():  # cycles of unreported metrics: whatever can be computed
        env[name] = _number(definition.expr.evaluate(env))

    for definition in ruleset.metrics:
        inputs = definition.expr.names
        missing = tuple(n for n in inputs if env.get(n) is None)
        formula = definition.expr.text
        if definition.name in reported:
            metrics[definition.name] = _checked(metrics[definition.name], definition, env, reported)
            continue
        value = env.get(definition.name)
        missing = missing if value is None else ()
        previous = metrics.get(definition.name)
        note = "the profile reported it as unavailable; derived instead" if previous and value is not None else None
        if previous and value is None:
            note = "reported as unavailable, and not derivable"
        metrics[definition.name] = Metric(
            name=definition.name, value=value, unit=definition.unit, source="derived",
            description=definition.description, formula=formula, inputs=inputs, missing=missing,
            note=note, better=definition.better,
        )
    return dict(sorted(metrics.items()))


def _number(value: object) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    return float(value)  # type: ignore[arg-type]


def _checked(metric: Metric, definition: MetricDef, env: Mapping[str, float | None], reported: set[str]) -> Metric:
    """Attach a cross-check when the derivation reads only reported fields (and hardware figures);
    a derivation through other derived values would only check the formula against itself."""
    inputs = definition.expr.names
    independent = all(n in reported or n.startswith(HARDWARE_PREFIX) for n in inputs)
    if not independent or any(env.get(n) is None for n in inputs) or metric.value is None:
        return replace(metric, formula=definition.expr.text, inputs=inputs)
    derived = _number(definition.expr.evaluate(env))
    difference = None if derived is None else relative_difference(metric.value, derived)
    agrees = None if difference is None else difference <= CROSS_CHECK_TOLERANCE
    check = CrossCheck(derived_value=derived, relative_difference=difference,
                       tolerance=CROSS_CHECK_TOLERANCE, agrees=agrees)
    return replace(metric, formula=definition.expr.text, inputs=inputs, check=check)

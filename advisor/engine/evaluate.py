"""Forward chaining over the rule packs: every rule ends fired, passed, not applicable or skipped.

Rules come in dependency order (rulepack orders them with graphlib), and rules only add facts,
so one pass reaches the fixpoint. A fired rule none of whose dependants fired is a root cause, unless it is
info (context).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from advisor import kinds
from advisor.core.errors import AdvisorError, suggest
from advisor.core.expr import annotated
from advisor.core.model import SEVERITIES, Bound, Evidence, Finding, Hardware, Metric, NotApplicable, RuleOutcome
from advisor.engine import budget
from advisor.metrics.derive import hardware_env
from advisor.packs.message import format_message, format_text
from advisor.packs.model import RuleDef, RuleSet, split_kind
from advisor.packs.thresholds import param_problem


@dataclass(frozen=True)
class Selection:
    """Which rules run and with which parameters (--select, --ignore, --set, advisor.toml)."""

    # names, ids, aliases, categories, packs or globs, bare or KIND/…; empty = all
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    params: Mapping[str, float] = field(default_factory=dict)  # "rule.param" -> value

    def resolve(self, ruleset: RuleSet) -> set[str]:
        """The names of the rules to run. A selected rule brings the rules it requires (it cannot
        fire without them); a pattern that matches no rule is an error, so a typo in CI cannot
        silently switch a gate off. A bare pattern is matched within the rule set's kind; KIND/PATTERN
        only on a profile of that kind (on another kind's it matches nothing, and that is no error, unless
        no rule is left to run: then a gate would judge nothing, and that is an error)."""

        def matching(pattern: str, option: str) -> set[str]:
            kind, bare = split_kind(pattern)
            found = {r.name for r in ruleset.rules if _in_kind(ruleset, r, kind)
                     and any(fnmatch.fnmatchcase(k, bare) for k in (*r.keys, r.category, r.pack))}
            if found:
                return found
            if kind is not None and not any(fnmatch.fnmatchcase(k, kind) for k in kinds.names()):
                raise AdvisorError(option, f"'{pattern}': no profile kind '{kind}' (installed: "
                                           f"{', '.join(kinds.names())}){suggest(kind, kinds.names())}")
            if kind is not None and ruleset.kind is not None and not fnmatch.fnmatchcase(ruleset.kind, kind):
                return set()  # another kind's rule: checked when a profile of that kind is analysed
            raise AdvisorError(option, f"'{pattern}' matches no rule, id, alias, category or pack "
                                       "(see `advisor rules list`)")

        chosen = set().union(*(matching(p, "--select") for p in self.select)) if self.select else {
            r.name for r in ruleset.rules}
        by_name = {r.name: r for r in ruleset.rules}
        pending = list(chosen)
        while pending:
            for required in by_name[pending.pop()].requires:
                if required not in chosen:
                    chosen.add(required)
                    pending.append(required)
        ignored = set().union(*(matching(p, "--ignore") for p in self.ignore)) if self.ignore else set()
        if ruleset.rules and not chosen - ignored:  # no rule runs: a gate would pass having checked nothing
            raise self._nothing_left(ruleset, "--select" if not chosen else "--ignore")
        return chosen - ignored

    def _nothing_left(self, ruleset: RuleSet, option: str) -> AdvisorError:
        """The one line for a selection that leaves the profile no rule (`--select torch/NAME` on a Neuron
        profile), naming the patterns, the profile's kind and where its rules are listed."""
        patterns = ", ".join(repr(p) for p in (self.select if option == "--select" else self.ignore))
        kind = ruleset.kind
        listed = f"`advisor rules list --kind {kind}`" if kind else "`advisor rules list`"
        return AdvisorError(option, f"{patterns} leaves no rule to run on this {kind or 'kind of'} profile, so "
                                    "nothing would be checked (a rule of another kind runs only on that kind's "
                                    f"profiles); {listed} lists its rules")


@dataclass(frozen=True)
class EngineResult:
    findings: tuple[Finding, ...]
    not_applicable: tuple[NotApplicable, ...]
    outcomes: tuple[RuleOutcome, ...]
    bounds: tuple[Bound, ...] = ()


def _in_kind(ruleset: RuleSet, rule: RuleDef, kind: str | None) -> bool:
    """A rule is in the kind (a glob) a pattern names: always for a bare pattern, or a rule of every kind."""
    named_in = ruleset.kinds_of(rule)
    return kind is None or not named_in or any(fnmatch.fnmatchcase(k, kind) for k in named_in)


def resolve_params(ruleset: RuleSet, overrides: Mapping[str, float]) -> dict[str, dict[str, float]]:
    """Each rule's params with the overrides applied; an override naming an unknown rule or param
    is an error, so a typo never silently leaves a threshold unchanged. `KIND/RULE.PARAM` for another
    kind than the rule set's applies to that kind's profiles only."""
    params = {r.name: dict(r.params) for r in ruleset.rules}
    for key, value in overrides.items():
        rule_key, _, param = key.rpartition(".")
        kind, _ = split_kind(rule_key)
        rule = ruleset.rule(rule_key)
        if rule is None and kind in kinds.names() and ruleset.kind not in (None, kind):
            continue  # another kind's rule: checked when a profile of that kind is analysed
        if rule is None:
            hint = suggest(rule_key, ruleset.names)
            raise AdvisorError("--set", f"{key}: no rule named '{rule_key}'{hint}")
        if param not in rule.params:
            known = ", ".join(rule.params) or "none"
            raise AdvisorError("--set", f"{key}: rule {rule.name} has no param '{param}' (its params: {known})")
        problem = param_problem(param, float(value), rule.param_units.get(param, ""))
        if problem:
            raise AdvisorError("--set", f"{key}: {problem}")
        params[rule.name][param] = float(value)
    return params


def _condition_text(rule: RuleDef, env: Mapping[str, float | None], units: Mapping[str, str]) -> str:
    """The `when` with each name followed by its value, so a reader can check it."""
    return annotated(rule.when.text, {n: (env.get(n), units.get(n, "")) for n in rule.when.names})


def _global(speedup: float | None, scope: str) -> float:
    """A global estimate as a sort figure: -1 for none or a local one."""
    return speedup if speedup is not None and scope == "global" else -1.0


def _message(rule: RuleDef, env: Mapping[str, object], units: Mapping[str, str]) -> str:
    """Placeholders become numbers with units (or a pack-given format spec), through the bounded
    formatter the loader checked them with: a rule built without the loader cannot blow up either."""
    return format_message(rule.message, env, units)


def _root_inputs(names: list[str], metrics: Mapping[str, Metric]) -> tuple[str, ...]:
    """What to capture: a missing derived metric is replaced by the inputs it is missing, down to
    profile fields and hardware figures."""
    out: list[str] = []
    stack = list(reversed(names))
    seen: set[str] = set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        metric = metrics.get(name)
        if metric is not None and metric.source == "derived" and metric.missing:
            stack.extend(reversed(metric.missing))
        else:
            out.append(name)
    return tuple(out)


def evaluate(ruleset: RuleSet, metrics: Mapping[str, Metric], hardware: Hardware | None,
             selection: Selection | None = None, info: Mapping[str, str] | None = None) -> EngineResult:
    """The rules of `selection` over the metrics; `info` (the profile's text fields) chooses the packs' terms,
    which only a finding's texts read."""
    selection = selection or Selection()
    texts = ruleset.texts(info or {})
    params_by_rule = resolve_params(ruleset, selection.params)
    base_env: dict[str, float | None] = {**hardware_env(hardware), **{n: m.value for n, m in metrics.items()}}
    hw_units = hardware.env_units() if hardware else {}
    units = {**hw_units, **{n: m.unit for n, m in metrics.items()}}
    fired: dict[str, Finding] = {}
    outcomes: list[RuleOutcome] = []
    not_applicable: list[NotApplicable] = []
    by_name = {r.name: r for r in ruleset.rules}
    if len(by_name) < len(ruleset.rules):  # a catalogue whose kinds share names: a profile is of one kind
        raise ValueError("rules of several kinds share names: evaluate one kind's rule set (RuleSet.for_kind)")
    chosen_names = selection.resolve(ruleset)
    chosen = [r for r in ruleset.rules if r.name in chosen_names]
    bounds, bound_notes = budget.bounds_and_notes(ruleset.bounds, base_env, units)
    caps = _Caps(budget.bound_values(bounds), bound_notes, by_name)

    for rule in chosen:
        unmet = [req for req in rule.requires if req not in fired]
        if unmet:
            why = ", ".join(f"{r} ({'not selected' if r not in chosen_names else 'did not fire'})" for r in unmet)
            outcomes.append(RuleOutcome(rule.name, "skipped", f"requires {why}"))
            continue
        params = params_by_rule[rule.name]
        env = {**base_env, **params}
        result = rule.when.evaluate(env)
        if result is None:
            missing = _root_inputs([n for n in rule.when.names if env.get(n) is None], metrics)
            not_applicable.append(NotApplicable(rule.name, missing, rule.title))
            outcomes.append(RuleOutcome(rule.name, "not_applicable", "missing " + ", ".join(missing)))
            continue
        if not result:
            outcomes.append(RuleOutcome(rule.name, "passed"))
            continue
        fired[rule.name] = _finding(rule, env, params, units, texts, caps.estimate(rule, env, fired))
        outcomes.append(RuleOutcome(rule.name, "fired"))
    return EngineResult(findings=tuple(_ranked(fired, caps)), not_applicable=tuple(not_applicable),
                        outcomes=tuple(outcomes), bounds=bounds)


@dataclass(frozen=True)
class _Estimate:
    """A fired rule's estimated speedup with every cap applied, and what the finding says about them."""

    speedup: float | None
    scope: str  # global | local
    binding: str  # the bound that set it ("" for none)
    notes: tuple[str, ...]  # why it is unavailable, or a bound that caps nothing


@dataclass
class _Caps:
    """What caps the fired rules' estimates, filled as they fire: the time budget's bounds, and each fired
    rule's estimate as a ceiling for the rules below it."""

    bound_values: Mapping[str, float | None]
    bound_notes: Mapping[str, str]
    by_name: Mapping[str, RuleDef]
    ceilings: dict[str, float | None] = field(default_factory=dict)  # each fired rule's estimate, for those below
    own: dict[str, float | None] = field(default_factory=dict)  # global estimates before the budget: ties rank by waste

    def estimate(self, rule: RuleDef, env: Mapping[str, float | None], fired: Mapping[str, Finding]) -> _Estimate:
        """The rule's estimate, capped by its parents' and (a global one) by the time budget's bounds."""
        # an estimate that is no share of time (1e300) is unavailable and the finding says why: never clamped
        speedup, problem = budget.share_of_time(rule.estimated_speedup.evaluate(env) if rule.estimated_speedup
                                                else None)
        notes = [budget.estimate_note(rule.name, problem)] if problem else []
        for parent in rule.requires:  # a child's estimate is capped by its parent's (Nsight Compute)
            cap = self.ceilings[parent]
            if cap is None and self.by_name[parent].estimated_speedup is not None:
                speedup = None  # the parent's bound is unknown, so this one cannot be bounded either
            elif speedup is not None and cap is not None:
                speedup = min(speedup, cap)
        scope = rule.speedup_scope
        parents = [c for c in (self.ceilings[p] for p in rule.global_with if p in fired) if c is not None]
        if scope == "local" and parents and speedup is not None:  # Nsight Compute: min(parent, local), global
            speedup, scope = min(speedup, *parents), "global"
        # bounds are shares of total time: they cap a global estimate, never a local one (Nsight Compute)
        binding = ""
        self.own[rule.name] = speedup if scope == "global" else None
        if scope == "global":
            speedup, binding = budget.capped(speedup, rule.capped_by, self.bound_values)
            notes += [self.bound_notes[n] for n in rule.capped_by if n in self.bound_notes]  # caps nothing
        self.ceilings[rule.name] = speedup
        return _Estimate(speedup, scope, binding, tuple(notes))


def _finding(rule: RuleDef, env: Mapping[str, float | None], params: Mapping[str, float], units: Mapping[str, str],
             texts: Mapping[str, str], estimate: _Estimate) -> Finding:
    """A fired rule's finding: its texts worded with the values, the evidence its condition read."""
    rule_units = {**units, **rule.param_units}
    evidence = {n: Evidence(env.get(n), units.get(n, "")) for n in rule.when.names if n not in params}
    worded: dict[str, object] = {**env, **texts}
    speedup, binding = estimate.speedup, estimate.binding
    if rule.caps_only:  # a ceiling for its causes, no gain of its own: no estimate shown, summed or ranked
        speedup, binding = None, ""
    return Finding(
        id=rule.id, name=rule.name, pack=rule.pack, severity=rule.severity, category=rule.category,
        title=rule.title, message=" ".join([_message(rule, worded, rule_units), *estimate.notes]), root_cause=False,
        because=rule.requires, evidence=evidence, estimated_speedup=speedup, speedup_scope=estimate.scope,
        params={k: Evidence(params[k], rule_units.get(k, "")) for k in sorted(params)},
        recommendation=format_text(rule.recommendation, worded, rule_units),
        root_cause_text=format_text(rule.root_cause, worded, rule_units),
        condition=_condition_text(rule, env, rule_units), references=rule.references,
        capped_by=rule.capped_by, bound=binding, claims=rule.claims, catch_all=rule.catch_all,
        caps_only=rule.caps_only,
    )


def _ranked(fired: Mapping[str, Finding], caps: _Caps) -> list[Finding]:
    """The findings with their root causes and what they explain, capped as a whole, in report order."""
    by_name = caps.by_name
    explained_by: dict[str, list[str]] = {}
    for f in fired.values():
        for name in (*f.because, *by_name[f.name].explains):
            if name in fired:
                explained_by.setdefault(name, []).append(f.name)
    # an info finding is context (inherent work, a metric to read differently), never a cause to fix
    findings = [replace(f, root_cause=f.name not in explained_by and f.severity != "info",
                        explains=tuple(n for n in by_name[f.name].explains if n in fired))
                for f in fired.values()]
    findings = budget.cap_catch_alls(findings, caps.bound_values)
    findings = budget.severities_below_causes(budget.symptoms_within_causes(findings, caps.bound_values))
    # root causes before the symptoms they explain, a catch-all after every specific cause (a symptom or a
    # catch-all with a larger estimate never leads), then by estimated gain and severity; two gains one bound
    # caps alike rank by the waste their own formulas measured (issue 36: a 16-way bank conflict before the
    # occupancy its stalls cap, both at one 31.10 % floor)
    findings.sort(key=lambda f: (not f.root_cause, f.catch_all, -_global(f.estimated_speedup, f.speedup_scope),
                                 -SEVERITIES.index(f.severity), -_global(caps.own.get(f.name), "global"), f.id))
    return findings

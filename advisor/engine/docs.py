"""The rule reference (docs/rules/), generated from the packs so it cannot drift from them: an index, and
a page per rule at PACK/NAME.md (rule names are per kind, and a pack's names are unique), each the
Markdown rendering of the rule's explanation (engine/explain.py)."""

from __future__ import annotations

from advisor.engine.explain import CATCH_ALL, Explanation, RuleLink, explain
from advisor.packs.model import Pack, RuleSet

TIME_BUDGET = "../../time-budget.md"  # from a page; the index is one folder up


def page_path(pack: str, name: str) -> str:
    return f"{pack}/{name}.md"


def _kinds(kinds: tuple[str, ...]) -> str:
    return ", ".join(f"`{k}`" for k in kinds) or "all"


def _links(links: tuple[RuleLink, ...]) -> str:
    return ", ".join(f"[`{r.name}`](../{page_path(r.pack, r.name)})" for r in links)


def _number(value: float | None) -> str:
    return "null" if value is None else f"{value:g}"


def _estimate(e: Explanation) -> list[str]:
    """What the estimate is a share of, and the time budget it lives in (docs/time-budget.md)."""
    est = e.estimate
    assert est is not None
    lines = ["## Estimated speedup", "", f"Scope **{est.scope}**. {est.meaning}", "", "```", est.formula, "```", ""]
    if est.global_with:
        lines += ["Global with: " + _links(est.global_with), ""]
    if est.capped_by:
        lines += [f"Capped by (the [time budget]({TIME_BUDGET}): bounds the fix cannot move):", ""]
        lines += [f"- `{b.name}`: {b.title}. {b.description}" if b.title else f"- `{b.name}`" for b in est.capped_by]
        lines.append("")
    if est.claims:
        lines += [f"Claims the piece of time `{est.claims}`: findings with the same claim count once together.", ""]
    return lines


def rule_page(e: Explanation) -> str:
    """One rule's page: every field of its explanation but `where` (explain.HIDDEN_IN)."""
    lines = [f"# {e.id} `{' '.join(e.qualified)}`: {e.title}", "",
             f"Pack `{e.pack}` · kinds {_kinds(e.kinds)} · severity **{e.severity}** · category `{e.category}`", ""]
    if e.aliases:
        lines += ["Also accepted under its former names: " + ", ".join(f"`{a}`" for a in e.aliases), ""]
    if e.requires:
        lines += ["Requires (fires only after): " + _links(e.requires), ""]
    if e.explains:
        lines += ["Explains (not root causes when this fires): " + _links(e.explains), ""]
    if e.catch_all:
        lines += [CATCH_ALL, ""]
    lines += ["## Condition", "", "```", e.condition, "```", ""]
    if e.params:
        lines += ["| param | default | unit |", "|---|---:|---|"]
        lines += [f"| `{p.name}` | {p.default:g} | {p.unit} |" for p in e.params]
        lines += ["", f"Change with `--set {e.name}.PARAM=VALUE`.", ""]
    lines += ["## Message", "", e.message, ""]
    if e.root_cause:
        lines += ["## Root cause", "", e.root_cause, ""]
    lines += ["## Recommendation", "", e.recommendation, ""]
    if e.estimate is not None:
        lines += _estimate(e)
    if e.references:
        lines += ["## References", ""] + [f"- {r}" for r in e.references] + [""]
    if e.examples:
        lines += ["## Examples", "", "| expect | hardware | metrics | params |", "|---|---|---|---|"]
        for ex in e.examples:
            metrics = ", ".join(f"`{k}`={_number(v)}" for k, v in ex.metrics.items())
            params = ", ".join(f"`{k}`={v:g}" for k, v in ex.params.items())
            lines.append(f"| {ex.expect} | {ex.hardware or '—'} | {metrics or '—'} | {params or '—'} |")
        lines.append("")
    return "\n".join(lines)


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two packs' kinds meet (no kinds: every kind)."""
    return not a or not b or bool(set(a) & set(b))


def _pack_section(pack: Pack, explained: list[Explanation]) -> list[str]:
    rows = sorted((e for e in explained if e.pack == pack.name), key=lambda e: e.id)
    lines = ["", f"## Pack `{pack.name}` {pack.version}", "", f"Kinds: {_kinds(pack.kinds)}. {pack.description}", "",
             "| id | name | severity | category | title | requires |", "|---|---|---|---|---|---|"]
    lines += [f"| {e.id} | [`{e.name}`]({page_path(e.pack, e.name)})"
              f"{' (formerly ' + ', '.join(f'`{a}`' for a in e.aliases) + ')' if e.aliases else ''} | {e.severity} | "
              f"{e.category} | {e.title} | {', '.join(r.name for r in e.requires) or '—'} |" for e in rows]
    if pack.bounds:
        lines += ["", "Its time budget ([how bounds cap estimates](../time-budget.md)):", "",
                  "| bound | title | recoverable at most | caps |", "|---|---|---|---|"]
        for bound in pack.bounds:
            caps = [e for e in sorted(explained, key=lambda e: e.id) if e.estimate is not None
                    and bound.name in {b.name for b in e.estimate.capped_by} and _overlap(e.kinds, pack.kinds)]
            lines.append(f"| `{bound.name}` | {bound.title} | `{bound.recoverable.text}` | "
                         f"{', '.join(f'[`{e.name}`]({page_path(e.pack, e.name)})' for e in caps) or '—'} |")
    return lines


def generate(ruleset: RuleSet) -> dict[str, str]:
    """File name (relative to the folder) -> content: index.md plus one page per rule."""
    explained = [explain(rule, ruleset) for rule in ruleset.rules]
    pages = {page_path(e.pack, e.name): rule_page(e) for e in explained}
    index = ["# Rule reference", "",
             "Generated by `advisor rules docs docs/rules` from the built-in packs; a test fails when it is stale.", "",
             "A rule is named `KIND/NAME` (`ncu/memory-bound`); where the profile's kind is known (`--select`, "
             "`--ignore`, `--set`, `requires:` in a pack of that kind) its bare name is enough."]
    for pack in ruleset.packs:
        index += _pack_section(pack, explained)
    pages["index.md"] = "\n".join(index) + "\n"
    return dict(sorted(pages.items()))

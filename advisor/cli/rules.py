"""`advisor rules list|show|validate|test|docs`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from advisor.core.errors import AdvisorError, suggest
from advisor.packs.load import load_packs
from advisor.packs.model import AmbiguousRule, RuleSet


def _table(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def _list(ruleset: RuleSet) -> int:
    rows = [("ID", "NAME", "SEVERITY", "CATEGORY", "PACK", "KINDS", "TITLE")]
    rows += [(r.id, r.name, r.severity, r.category, r.pack, ",".join(r.kinds) or "all", r.title)
             for r in sorted(ruleset.rules, key=lambda r: r.id)]
    print(_table(rows))
    return 0


def _show(args: argparse.Namespace) -> int:
    """One rule's explanation. A bare name is looked up in --kind's rules, or in every kind's: a name that
    rules of several kinds answer to is refused there, naming each as KIND/NAME."""
    from advisor.engine.explain import as_json, as_text, explain

    ruleset = load_packs(args.rules, kind=args.kind)
    try:
        rule = ruleset.rule(args.rule)
    except AmbiguousRule as exc:
        raise AdvisorError(exc.where, f"{exc.problem} or give --kind") from None
    if rule is None:
        hint = suggest(args.rule, [k for r in ruleset.rules for k in (r.name, *r.aliases)])
        where = f" of kind {args.kind}" if args.kind else ""
        raise AdvisorError(args.rule, f"no such rule{where}{hint} (see `advisor rules list`)")
    explanation = explain(rule, ruleset)
    print(json.dumps(as_json(explanation), indent=2, ensure_ascii=False) if args.json else as_text(explanation))
    return 0


def _named_by(pack, paths: list[Path]) -> bool:
    return any(Path(pack.path).resolve() == path.resolve() for path in paths)


def _test(ruleset: RuleSet, paths: list[Path]) -> int:
    from advisor.engine.examples import run_examples

    wanted = {p.name for p in ruleset.packs if not paths or _named_by(p, paths)}
    results = run_examples(ruleset, wanted)
    failures = [r for r in results if not r.ok]
    for r in failures:
        detail = f" ({r.detail})" if r.detail else ""
        print(f"FAIL {r.example.where}: expected {r.example.expect}, got {r.outcome}{detail}")
    untested = [r.name for r in ruleset.rules if r.pack in wanted and not r.examples]
    for name in untested:
        print(f"note: rule {name} has no examples")
    print(f"{len(results) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


def _docs(ruleset: RuleSet, folder: Path) -> int:
    """The pages, all or nothing; pages of an earlier run that no rule has now are removed, and nothing
    else in the folder is touched (core/owned.py)."""
    from advisor.core.owned import write_owned
    from advisor.engine.docs import generate

    pages = generate(ruleset)
    result = write_owned(folder, "advisor rules docs", {name: text.encode("utf-8") for name, text in pages.items()})
    print(f"wrote {len(pages)} pages to {folder}")
    if result.note():
        print(f"advisor: note: {result.note()}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    action = args.rules_command
    if action == "validate":
        ruleset = load_packs(args.paths)  # raises PackError listing every problem
        own = [p for p in ruleset.packs if _named_by(p, args.paths)]
        for pack in own:
            print(f"{pack.path}: pack {pack.name} {pack.version}: {len(pack.rules)} rules, "
                  f"{len(pack.metrics)} metrics, {sum(len(r.examples) for r in pack.rules)} examples: ok")
        return 0
    if action == "test":
        return _test(load_packs(args.paths), args.paths)
    if action == "docs":
        return _docs(load_packs(), args.folder)
    if action == "list":
        return _list(load_packs(args.rules, kind=args.kind))
    return _show(args)

"""SARIF 2.1.0 (OASIS), the format GitHub code scanning and other CI viewers read: one run of the tool
`advisor`, a rule descriptor per rule that fired and one result per finding.

- `ruleId` is the qualified rule name `KIND/NAME` (`ncu/uncoalesced-global-access`), as `--select` takes it;
- `level` from the severity: critical and high are `error`, medium `warning`, low and info `note`;
- the location is the profile as given on the command line (a relative path stays relative, so CI viewers
  resolve it against the checkout; an absolute one becomes a `file:` URI);
- a rule's `helpUri` is its page in the rule reference, `docs/rules/PACK/NAME.md`, relative to the root of
  advisor's repository (advisor has no published documentation site); its `help` carries the root cause and
  the recommendation, so a viewer needs no link at all. Rules of a user's own packs have no page: no helpUri.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import quote

from advisor.core.model import Analysis, Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
BUILTIN_PACKS = frozenset({"ncu", "neuron", "rbln", "torch"})  # the packs docs/rules/ documents


def artifact_uri(path: str) -> str:
    """The profile's path as a URI reference: relative stays relative (percent-encoded, `/` separated),
    absolute becomes `file:///…`."""
    pure: PurePath = PureWindowsPath(path) if "\\" in path and "/" not in path else PurePosixPath(path)
    if pure.is_absolute():
        return pure.as_uri()
    return quote(pure.as_posix(), safe="/")


def rule_id(kind: str, finding: Finding) -> str:
    return f"{kind}/{finding.name}"


def help_uri(finding: Finding, builtin: Collection[str] = BUILTIN_PACKS) -> str | None:
    return f"docs/rules/{finding.pack}/{finding.name}.md" if finding.pack in builtin else None


def _rule(kind: str, finding: Finding) -> dict[str, Any]:
    cause = finding.root_cause_text or finding.title
    help_text = "\n\n".join(t for t in (finding.root_cause_text and f"Root cause: {finding.root_cause_text}",
                                        finding.recommendation and f"Recommendation: {finding.recommendation}") if t)
    markdown = "\n\n".join(t for t in (finding.root_cause_text and f"**Root cause.** {finding.root_cause_text}",
                                       finding.recommendation and f"**Recommendation.** {finding.recommendation}",
                                       help_uri(finding) and f"Rule reference: `{help_uri(finding)}` "
                                                             "(in advisor's repository)") if t)
    rule: dict[str, Any] = {
        "id": rule_id(kind, finding), "name": finding.name,
        "shortDescription": {"text": finding.title},
        "fullDescription": {"text": cause},
        "help": {"text": help_text or finding.title, "markdown": markdown or finding.title},
        "defaultConfiguration": {"level": LEVELS.get(finding.severity, "warning")},
        "properties": {"severity": finding.severity, "category": finding.category, "advisor_id": finding.id,
                       "pack": finding.pack, "tags": sorted({"performance", finding.category})},
    }
    uri = help_uri(finding)
    if uri is not None:
        rule["helpUri"] = uri
    return rule


def _result(kind: str, finding: Finding, index: int, artifact: str) -> dict[str, Any]:
    return {
        "ruleId": rule_id(kind, finding), "ruleIndex": index,
        "level": LEVELS.get(finding.severity, "warning"),
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(artifact)}}}],
        "partialFingerprints": {"advisorRule/v1": f"{rule_id(kind, finding)}:{artifact_uri(artifact)}"},
        "properties": {"estimated_speedup": _finite(finding.estimated_speedup), "speedup_scope": finding.speedup_scope,
                       "root_cause": finding.root_cause, "severity": finding.severity,
                       "category": finding.category},
    }


def _finite(value: float | None) -> float | None:
    """A fraction JSON can hold: NaN or infinity (never expected) is null, as an unknown estimate."""
    return value if value is not None and math.isfinite(value) else None


def sarif_log(analysis: Analysis, artifact: str) -> dict[str, Any]:
    """The SARIF log of one analysis; `artifact` is the profile's path as the user gave it."""
    rules: dict[str, int] = {}
    descriptors: list[dict[str, Any]] = []
    for finding in analysis.findings:
        key = rule_id(analysis.kind, finding)
        if key not in rules:
            rules[key] = len(descriptors)
            descriptors.append(_rule(analysis.kind, finding))
    driver = {"name": "advisor", "version": analysis.advisor_version, "semanticVersion": analysis.advisor_version,
              "rules": descriptors}
    run = {
        "tool": {"driver": driver},
        "invocations": [{"executionSuccessful": True}],
        "artifacts": [{"location": {"uri": artifact_uri(artifact)}, "roles": ["analysisTarget"]}],
        "results": [_result(analysis.kind, f, rules[rule_id(analysis.kind, f)], artifact) for f in analysis.findings],
        "properties": {"profile_kind": analysis.kind, "packs": dict(analysis.packs)},
    }
    return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def render_sarif(analysis: Analysis, artifact: str) -> bytes:
    return (json.dumps(sarif_log(analysis, artifact), indent=2, ensure_ascii=False, allow_nan=False)
            + "\n").encode("utf-8")

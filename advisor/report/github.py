"""GitHub Actions workflow commands (`::error file=…,title=…::message`): one annotation per line, which
GitHub shows on the run's summary and, for a file in the repository, beside it.

Escaping is GitHub's own (actions/toolkit, command.ts): in the message `%`, CR and LF become `%25`, `%0D`
and `%0A`; in a property value `:` and `,` become `%3A` and `%2C` as well. Nothing a profile holds can so
end a command early or start a second one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from advisor.core.comparison import Comparison, FindingChange, Series
from advisor.core.model import SEVERITIES, Analysis, Finding
from advisor.report.junit import Gate

# severity -> workflow command: the same mapping as SARIF's levels (error, warning, note)
COMMANDS = {"critical": "error", "high": "error", "medium": "warning", "low": "notice", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, properties: Mapping[str, str | None]) -> str:
    """One workflow command line, properties in the given order (those that are None left out)."""
    given = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + given if given else ''}::{escape_data(message)}"


def at_or_above(severity: str, threshold: str | None) -> bool:
    """Whether `severity` is `threshold` or worse (every severity when there is no threshold)."""
    if threshold is None:
        return True
    return severity in SEVERITIES and SEVERITIES.index(severity) >= SEVERITIES.index(threshold)


def _lines(lines: Iterable[str]) -> bytes:
    text = "\n".join(lines)
    return (text + "\n").encode("utf-8") if text else b""


def finding_message(finding: Finding) -> str:
    """The finding's message and, on the next line, what to do about it."""
    if finding.recommendation:
        return f"{finding.message}\nRecommendation: {finding.recommendation}"
    return finding.message


def report_annotations(analysis: Analysis, artifact: str, fail_on: str | None) -> bytes:
    """`advisor report --format github`: one line per finding at or above `fail_on` (every finding without
    it), its command from the severity, `file=` the profile as given on the command line."""
    return _lines(command(COMMANDS.get(f.severity, "warning"), finding_message(f),
                          {"file": artifact, "title": f"advisor {analysis.kind}/{f.name} ({f.severity}): {f.title}"})
                  for f in analysis.findings if at_or_above(f.severity, fail_on))


def comparison_annotations(result: Comparison | Series, artifact: str, gates: Sequence[Gate],
                           fail_on_new: str | None) -> bytes:
    """`advisor compare --format github`: each failed gate (regression, new findings) as ::error, each new
    finding that no failed gate names as ::warning, each fixed finding as ::notice; `file=` the last input."""
    pair = result.overall if isinstance(result, Series) else result
    lines = [command("error", failure, {"file": artifact, "title": f"advisor compare: {gate.title} gate failed"})
             for gate in gates for failure in gate.failures]
    new_gate_failed = any(gate.name == "new" and gate.failures for gate in gates)
    for change in pair.findings:
        if change.status == "new" and not (new_gate_failed and at_or_above(change.severity, fail_on_new)):
            lines.append(command("warning", _change_message(change, pair),
                                 {"file": artifact, "title": f"advisor compare: new finding {change.name} "
                                                             f"({change.severity})"}))
        elif change.status == "fixed":
            lines.append(command("notice", _change_message(change, pair),
                                 {"file": artifact, "title": f"advisor compare: fixed {change.name} "
                                                             f"({change.severity})"}))
    return _lines(lines)


def _change_message(change: FindingChange, pair: Comparison) -> str:
    if change.status == "fixed":
        return f"{change.title}: fired on {pair.before.label}, not on {pair.after.label}"
    finding = change.after
    detail = finding_message(finding) if finding is not None else change.title
    return f"{change.title}: new in {pair.after.label} (not on {pair.before.label})\n{detail}"


def fleet_annotations(profiles: Sequence[Mapping[str, Any]], findings: Sequence[Mapping[str, Any]]) -> bytes:
    """`advisor fleet --format github`: each profile that failed to analyse as ::error, and each stored
    finding by the severity mapping (fleet has no --fail-on: every finding), `file=` the profile's path."""
    lines = [command("error", text(row.get("error")) or "analysis failed",
                     {"file": text(row.get("path")), "title": "advisor fleet: analysis failed"})
             for row in profiles if text(row.get("status")) == "error"]
    for row in findings:
        severity = text(row.get("severity"))
        name = f"{text(row.get('kind'))}/{text(row.get('rule'))}"
        what = "root cause" if row.get("root_cause") is True else "finding"
        lines.append(command(COMMANDS.get(severity, "warning"), f"{text(row.get('title'))} ({what}, {severity})",
                             {"file": text(row.get("path")), "title": f"advisor {name} ({severity})"}))
    return _lines(lines)


def text(value: object) -> str:
    """A store cell as text: missing (None, pandas' NA or NaN) is empty."""
    return value if isinstance(value, str) else ""

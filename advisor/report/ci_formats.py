"""The CI-native outputs of the commands (docs/ci.md), beside the documents of render.py:

    report   --format sarif   (also from -o x.sarif)   SARIF 2.1.0 for code scanning (sarif.py)
    report   --format github                           workflow-command annotations (github.py)
    compare  --format github | junit (also -o x.xml)   the gates as annotations or as JUnit test cases
    fleet    --format github | junit (also -o x.xml)   the stored profiles and findings, likewise (junit.py)

Each returns a `Rendered` the command writes like any document (staged, atomic, only the asked path); nothing
is written here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.core.comparison import Comparison, Series
from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis
from advisor.report.junit import Gate
from advisor.report.render import Rendered

REPORT_FORMATS = ("sarif", "github")
COMPARE_FORMATS = ("github", "junit")
FLEET_FORMATS = ("github", "junit")
# extensions that name a CI format, per command (the documents' own are report/output.py's FORMATS)
REPORT_EXTENSIONS = {".sarif": "sarif"}
GATE_EXTENSIONS = {".xml": "junit"}


def implied_format(output: Path | None, explicit: str | None, extensions: Mapping[str, str]) -> str | None:
    """The format --format names, else the CI format -o's extension names (`findings.sarif`), else None
    (output.format_for then takes the document formats from the extension)."""
    if explicit is not None or output is None:
        return explicit
    return extensions.get(output.suffix.lower())


def report_ci(analysis: Analysis, fmt: str, artifact: str, fail_on: str | None) -> Rendered:
    """`advisor report` as SARIF or GitHub annotations; `artifact` is the input as given."""
    if fmt == "sarif":
        from advisor.report.sarif import render_sarif

        return Rendered(render_sarif(analysis, artifact))
    if fmt == "github":
        from advisor.report.github import report_annotations

        return Rendered(report_annotations(analysis, artifact, fail_on))
    raise AdvisorError("--format", f"{fmt} is not a CI format of advisor report")


def compare_gates(regression: Sequence[str], regression_option: str | None, new: Sequence[str],
                  new_option: str | None) -> tuple[Gate, Gate]:
    """compare's two gates as the CI formats show them: each with its option as given (None: not asked)."""
    return (Gate("regression", "regression", regression_option, tuple(regression)),
            Gate("new", "new findings", new_option, tuple(new)))


def comparison_ci(result: Comparison | Series, fmt: str, artifact: str, gates: Sequence[Gate],
                  fail_on_new: str | None) -> Rendered:
    """`advisor compare` as GitHub annotations or JUnit XML; `artifact` is the last input as given."""
    if fmt == "github":
        from advisor.report.github import comparison_annotations

        return Rendered(comparison_annotations(result, artifact, gates, fail_on_new))
    if fmt == "junit":
        from advisor.report.junit import compare_junit

        pair = result.overall if isinstance(result, Series) else result
        return Rendered(compare_junit(gates, pair.before.label, pair.after.label))
    raise AdvisorError("--format", f"{fmt} is not a CI format of advisor compare")


def fleet_ci(profiles: Sequence[Mapping[str, Any]], findings: Sequence[Mapping[str, Any]], fmt: str) -> Rendered:
    """`advisor fleet` as GitHub annotations or JUnit XML, from the store's rows (latest per profile)."""
    if fmt == "github":
        from advisor.report.github import fleet_annotations

        return Rendered(fleet_annotations(profiles, findings))
    if fmt == "junit":
        from advisor.report.junit import fleet_junit

        return Rendered(fleet_junit(profiles, findings))
    raise AdvisorError("--format", f"{fmt} is not a CI format of advisor fleet")

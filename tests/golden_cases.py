"""The golden cases each sample folder declares in its golden.yaml, shared by the two tests that read them:
tests/report/test_expectations.py checks what matters in every case against the folder's expected.yaml, and
tests/report/test_golden.py compares the full reports of the few cases it keeps with tests/golden/."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from tests_support import ROOT, SAMPLES


@dataclass(frozen=True)
class ReportCase:
    """`advisor report INPUT [--context CONTEXT]` on one input of a sample folder (paths relative to ROOT)."""

    folder: Path
    input: Path
    context: Path | None = None

    @property
    def name(self) -> str:
        """<folder>__<file stem>, <folder>__folder for a folder input (`.`: its per-rank files as one), and
        __context appended when the case has an investigation."""
        base = (f"{self.input.name}__folder" if (ROOT / self.input).is_dir()
                else f"{self.input.parent.name}__{self.input.stem}")
        return base + ("__context" if self.context else "")

    def declared_as(self) -> dict[str, str]:
        """The input (and context) as golden.yaml names them, relative to the sample folder."""
        names = {"input": os.path.relpath(self.input, self.folder)}
        return names | ({"context": os.path.relpath(self.context, self.folder)} if self.context else {})


@dataclass(frozen=True)
class ComparisonCase:
    """`advisor compare INPUT...`: two inputs a before/after comparison, more a series of attempts."""

    folder: Path
    name: str  # compare__<name in golden.yaml>
    inputs: tuple[Path, ...]

    def declared_as(self) -> list[str]:
        return [os.path.relpath(p, self.folder) for p in self.inputs]


def declared() -> tuple[list[ReportCase], list[ComparisonCase]]:
    """Every folder's `reports:` (an input, or {input, context} with an investigation) and `comparisons:`
    (name -> inputs), paths relative to the folder, so a new sample or kind needs no edit in the tests."""
    reports: list[ReportCase] = []
    comparisons: list[ComparisonCase] = []
    for spec in sorted(SAMPLES.glob("*/golden.yaml")):
        folder = spec.parent.relative_to(ROOT)
        data = yaml.safe_load(spec.read_text(encoding="utf-8")) or {}
        for entry in data.get("reports") or ():
            entry = entry if isinstance(entry, dict) else {"input": entry}
            context = entry.get("context")
            reports.append(ReportCase(folder, Path(os.path.normpath(folder / entry["input"])),
                                      folder / context if context else None))
        for name, inputs in (data.get("comparisons") or {}).items():
            comparisons.append(ComparisonCase(folder, f"compare__{name}",
                                              tuple(Path(os.path.normpath(folder / p)) for p in inputs)))
    return reports, comparisons


REPORTS, COMPARISONS = declared()

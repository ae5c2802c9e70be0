"""The Python entry points: `advisor.analyze(path, **options)` and `advisor.compare(paths, **options)`.

Their results show themselves in a Jupyter cell (`_repr_html_`), give the findings and a metrics table, and
render or save like the CLI's outputs: the CLI is a layer over the same `advisor.api` calls. pandas is imported
only when `.metrics` is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from advisor import api
from advisor.comparing.diff import DEFAULT_NOISE
from advisor.core.comparison import Comparison, Series
from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis, Finding
from advisor.engine.evaluate import Selection
from advisor.kinds import LoadOptions
from advisor.report.output import FORMATS, checked_format, write_report
from advisor.report.render import Rendered, render, render_comparison

if TYPE_CHECKING:
    import pandas


class _Report:
    """What a result shows and saves: its report in each format, by the one renderer it names. `read` is every
    file and folder the result was made from: `save` never writes onto, into or beside one of them."""

    read: tuple[Path, ...]

    def _render(self, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
        raise NotImplementedError

    def to_markdown(self) -> str:
        """The report as Markdown, without chart files (`save` writes those beside a .md)."""
        return self._render("md", None).main.decode("utf-8")

    def to_html(self, page_size: str = "a4") -> str:
        """The report as one self-contained HTML page, charts inline."""
        return self._render("html", None, page_size).main.decode("utf-8")

    def save(self, path: str | Path, format: str | None = None) -> Path:
        """Write it by the file's ending (.md with its charts, .html, .pdf or .json) or by `format`, all or
        nothing, under the CLI's output rules (report.output.checked_format): never onto an input, inside a
        folder read, or with a chart folder that holds an input; `result.save("findings.md")`."""
        target = Path(path)
        if format is not None and format not in set(FORMATS.values()):
            raise AdvisorError("format=", f"'{format}' is not one of md, json, html, pdf")
        fmt = checked_format(target, format, self.read, target.name, flag="format=")
        rendered = self._render(fmt, target)
        write_report(target, rendered.main, rendered.files, rendered.folder)
        return target

    def _repr_html_(self) -> str:
        return self.to_html()


@dataclass(frozen=True)
class Result(_Report):
    """One input's analysis, as `advisor report` would write it."""

    analysis: Analysis
    read: tuple[Path, ...] = ()

    def _render(self, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
        return render(self.analysis, fmt, output, page_size)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Root causes first, then the symptoms they explain (the report's order)."""
        return self.analysis.findings

    @property
    def metrics(self) -> pandas.DataFrame:
        """Every metric with its value in machine units, unit, source and formula, indexed by name."""
        import pandas

        rows = [{"name": m.name, "value": m.value, "unit": m.unit, "source": m.source, "formula": m.formula}
                for m in self.analysis.metrics.values()]
        return pandas.DataFrame(rows).set_index("name")


@dataclass(frozen=True)
class ComparisonResult(_Report):
    """Two attempts compared (before, after), or a series of three or more."""

    comparison: Comparison | Series
    read: tuple[Path, ...] = ()

    def _render(self, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
        return render_comparison(self.comparison, fmt, output, page_size)


def _options(hardware: str | None, rules: Sequence[str | Path], select: Sequence[str], ignore: Sequence[str],
             params: Mapping[str, float] | None, context: str | Path | None, kind: str | None,
             entry: str | None) -> api.AnalyzeOptions:
    return api.AnalyzeOptions(load=LoadOptions(entry=entry), hardware=hardware,
                              rule_paths=tuple(Path(r) for r in rules),
                              selection=Selection(select=tuple(select), ignore=tuple(ignore),
                                                  params=dict(params or {})),
                              context=Path(context) if context is not None else None, kind=kind)


def analyze(path: str | Path, *, hardware: str | None = None, rules: Sequence[str | Path] = (),
            select: Sequence[str] = (), ignore: Sequence[str] = (), params: Mapping[str, float] | None = None,
            context: str | Path | None = None, kind: str | None = None, entry: str | None = None,
            jobs: int | None = None) -> Result:
    """Analyse a profile of any kind (or re-read a saved analysis JSON). The keywords are the CLI's options:
    `params={"weight-reload.min_ratio": 4}` is `--set weight-reload.min_ratio=4`."""
    options = _options(hardware, rules, select, ignore, params, context, kind, entry)
    return Result(api.load_analysis(Path(path), options, jobs), tuple(api.paths_read([Path(path)], options)))


def compare(paths: Sequence[str | Path], *, labels: Sequence[str] | None = None, noise: float = DEFAULT_NOISE,
            hardware: str | None = None, rules: Sequence[str | Path] = (), select: Sequence[str] = (),
            ignore: Sequence[str] = (), params: Mapping[str, float] | None = None,
            kind: str | None = None) -> ComparisonResult:
    """Compare two attempts (before, after) or a series of three or more, as `advisor compare` does."""
    api.check_compare_inputs(paths, labels)
    found = [Path(p) for p in paths]
    options = _options(hardware, rules, select, ignore, params, None, kind, None)
    names = list(labels) if labels is not None else api.default_labels(found)
    return ComparisonResult(api.compare_inputs(found, names, options, noise), tuple(api.paths_read(found, options)))

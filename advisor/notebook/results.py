"""What the Python entry points return: a result that shows itself in a notebook (a short `repr`, a rich
`_repr_html_`), gives its tables as pandas DataFrames beside the typed objects they come from, and renders or
saves like the CLI's outputs (the CLI is a layer over the same calls). pandas is imported only when a table is
asked for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.core.comparison import Comparison, Series
from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis
from advisor.notebook import display, frames
from advisor.report.findings import root_causes
from advisor.report.output import FORMATS, checked_format, write_report
from advisor.report.render import Rendered, render, render_comparison

if TYPE_CHECKING:
    import pandas

    from advisor.fleet.history import History
    from advisor.fleet.run import RunResult
    from advisor.fleet.store import Store
    from advisor.fleet.summary import FleetSummary


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
            raise AdvisorError("format=", f"'{format}' is not one of {', '.join(sorted(set(FORMATS.values())))}")
        fmt = checked_format(target, format, self.read, target.name, flag="format=")
        rendered = self._render(fmt, target)
        write_report(target, rendered.main, rendered.files, rendered.folder)
        return target

    def _repr_html_(self) -> str:
        return display.framed(self.to_html())


@dataclass(frozen=True, repr=False)
class Result(_Report):
    """One input's analysis, as `advisor report` would write it: `result.findings` (a DataFrame, root causes
    first), `result.metrics`, `result.bounds`, `result.tables` (the kind's breakdowns), `result.analysis` (the
    typed objects), `result.save("findings.md")`."""

    analysis: Analysis
    read: tuple[Path, ...] = ()

    def _render(self, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
        return render(self.analysis, fmt, output, page_size)

    def __repr__(self) -> str:
        return display.analysis_repr(self.analysis)

    def _repr_html_(self) -> str:
        return display.analysis_html(self.analysis)

    @property
    def verdict(self) -> str | None:
        """The top root cause's rule name, as the report's verdict names it; None when no cause was found."""
        return next((f.name for f in root_causes(self.analysis)), None)

    @property
    def findings(self) -> pandas.DataFrame:
        """One row per finding, indexed by rule: severity, role, estimated gain (a fraction), message, action."""
        return frames.findings(self.analysis)

    @property
    def metrics(self) -> pandas.DataFrame:
        """Every metric with its value in machine units, unit, source and formula, indexed by name."""
        return frames.metrics(self.analysis)

    @property
    def bounds(self) -> pandas.DataFrame:
        """The time budget: what each class of fix can give back at most, tightest first."""
        return frames.bounds(self.analysis)

    @property
    def tables(self) -> dict[str, pandas.DataFrame]:
        """The kind's breakdowns by name (layers, kernel classes, operators, idle gaps …), and `profiles` for an
        input of several profiles and `vendor_findings` for the profiler's own verdicts, where present."""
        out = frames.breakdowns(self.analysis)
        if self.analysis.entries:
            out["profiles"] = frames.entries(self.analysis)
        if self.analysis.vendor_findings:
            out["vendor_findings"] = frames.vendor_findings(self.analysis)
        return out


@dataclass(frozen=True, repr=False)
class ComparisonResult(_Report):
    """Two attempts compared (before, after), or a series of three or more: `.metrics` and `.findings` of the
    first against the last as DataFrames, `.comparison` the typed object."""

    comparison: Comparison | Series
    read: tuple[Path, ...] = ()

    def _render(self, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
        return render_comparison(self.comparison, fmt, output, page_size)

    @property
    def _pair(self) -> Comparison:
        return self.comparison.overall if isinstance(self.comparison, Series) else self.comparison

    def __repr__(self) -> str:
        pair = self._pair
        speed = "speedup unavailable" if pair.speedup is None else f"{pair.speedup:.3g}× ({pair.speedup_title})"
        status = {s: sum(f.status == s for f in pair.findings) for s in ("fixed", "new", "persisting")}
        lines = [f"<advisor.ComparisonResult {pair.before.label} → {pair.after.label}: {speed}>",
                 ", ".join(f"{n} {s}" for s, n in status.items())]
        return "\n".join(lines + [f"warning: {w}" for w in pair.warnings[:2]])

    @property
    def metrics(self) -> pandas.DataFrame:
        return frames.metric_changes(self._pair)

    @property
    def findings(self) -> pandas.DataFrame:
        return frames.finding_changes(self._pair)


@dataclass(frozen=True, repr=False)
class FleetResult(_Report):
    """A fleet store's overview: `.profiles` (one row per stored profile), `.root_causes` and `.offenders` as
    DataFrames, `.summary` the typed overview, `.run` what this call analysed (None when only read)."""

    store: Store
    summary: FleetSummary
    run: RunResult | None = None
    noise: float = 0.02
    top: int = 10
    read: tuple[Path, ...] = ()

    def _render(self, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
        from advisor.fleet.render import render_fleet

        return render_fleet(self.store, fmt, output, page_size, self.noise, self.top, self.summary)

    def __repr__(self) -> str:
        s = self.summary
        top = next((c for c in s.root_causes if c.recoverable_time is not None), None)
        lines = [f"<advisor.FleetResult {s.store}: {s.profiles} profiles ({s.ok} analysed, {s.failed} failed)>"]
        if top is not None:
            lines.append(f"biggest recoverable time: {top.kind}/{top.rule}, {top.recoverable_time:.4g} s over "
                         f"{top.profiles} profile(s)")
        return "\n".join(lines)

    @property
    def profiles(self) -> pandas.DataFrame:
        return self.store.profiles()

    @property
    def root_causes(self) -> pandas.DataFrame:
        return _records(self.summary.root_causes, {"recoverable_time": "s", "share": "fraction"})

    @property
    def offenders(self) -> pandas.DataFrame:
        return _records(self.summary.offenders, {"recoverable_time": "s", "total_time": "s", "gain": "fraction"})


@dataclass(frozen=True, repr=False)
class HistoryResult(_Report):
    """One name's stored attempts in order: `.attempts` as a DataFrame, `.history` the typed object."""

    store: Store
    history: History
    read: tuple[Path, ...] = ()

    def _render(self, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
        from advisor.fleet.history import render_history

        return render_history(self.store, self.history.name, fmt, output, page_size, self.history.noise,
                              self.history)

    def __repr__(self) -> str:
        h = self.history
        last = h.attempts[-1] if h.attempts else None
        trend = f"; last {last.label}: {last.vs_first:.3g}× the first" if last and last.vs_first else ""
        return f"<advisor.HistoryResult {h.name}: {len(h.attempts)} attempts{trend}>"

    @property
    def attempts(self) -> pandas.DataFrame:
        return _records(self.history.attempts, {"total_time": "s", "vs_first": "ratio", "vs_previous": "ratio"})


def _records(items: Any, units: dict[str, str]) -> pandas.DataFrame:
    """Dataclass rows as a table, tuples of names joined with commas."""
    from dataclasses import asdict, fields

    rows = [{k: ", ".join(map(str, v)) if isinstance(v, tuple) else v for k, v in asdict(item).items()}
            for item in items]
    columns = [f.name for f in fields(items[0])] if items else list(units)
    return frames.frame(rows, columns, units)

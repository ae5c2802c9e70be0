"""Analyses and comparisons -> the bytes of each output file. Nothing is written here: the caller
writes everything only once all of it rendered."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.core.collector import collector_paused
from advisor.core.comparison import Comparison, Series
from advisor.core.model import Analysis
from advisor.report.document import Chart, Document, link_target
from advisor.report.output import charts_folder

if TYPE_CHECKING:  # the drawing machinery (a process pool, matplotlib's loader) is imported where charts are drawn
    from advisor.report.drawing import Drawer


@dataclass(frozen=True)
class Rendered:
    main: bytes
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> bytes (Markdown's charts)
    folder: str | None = None  # the chart folder, relative to the main file


def _charts(doc: Document) -> list[Chart]:
    return [block for section in doc.sections for block in section.blocks if isinstance(block, Chart)]


def render_document(doc: Document, fmt: str, output: Path | None, page_size: str = "a4",
                    drawer: Drawer | None = None) -> Rendered:
    """`drawer` draws the charts (default: in this process)."""
    # matplotlib's and WeasyPrint's imports and the PDF's layout make hundreds of thousands of objects that
    # live until the document is written: a collector pass over them all finds nothing (0.15 s of a PDF)
    from advisor.report.drawing import LocalDrawer

    with collector_paused():
        return _render_document(doc, fmt, output, page_size, drawer or LocalDrawer())


def _render_document(doc: Document, fmt: str, output: Path | None, page_size: str, drawer: Drawer) -> Rendered:
    from advisor.report.charts import ChartJob, key

    if fmt == "md":
        from advisor.report.markdown import render_markdown

        if output is None:  # Markdown on stdout: no place for chart files
            return Rendered(render_markdown(doc).encode("utf-8"))
        charts = _charts(doc)
        folder = charts_folder(output)
        paths = [f"{folder}/{c.name}-{key(c.spec)}.png" for c in charts]  # named from the spec's hash
        drawing = drawer.start([ChartJob(c.spec) for c in charts])
        files = {path: chart() for path, chart in zip(paths, drawing, strict=True)}
        links = {c.name: link_target(path) for c, path in zip(charts, paths, strict=True)}
        return Rendered(render_markdown(doc, links).encode("utf-8"), files, folder)
    from advisor.report.html import chart_job, render_html

    embed = "svg" if fmt == "html" else "png"
    specs = [c.spec for c in _charts(doc)]
    drawn = dict(zip(map(key, specs), drawer.start([chart_job(spec, embed) for spec in specs]), strict=True))
    if fmt == "html":
        svgs = {chart_key: chart() for chart_key, chart in drawn.items()}
        return Rendered(render_html(doc, page_size, drawn=svgs).encode("utf-8"))
    from advisor.report.pdf import render_pdf

    # WeasyPrint asks for each chart once it is loaded and has styled the page: drawn meanwhile elsewhere
    return Rendered(render_pdf(render_html(doc, page_size, embed), lambda chart_key: drawn[chart_key]()))


def render(analysis: Analysis, fmt: str, output: Path | None, page_size: str = "a4",
           drawer: Drawer | None = None) -> Rendered:
    if fmt == "json":
        from advisor.core.serialize import dumps

        return Rendered(dumps(analysis).encode("utf-8"))
    from advisor.report.build import build_document

    return render_document(build_document(analysis), fmt, output, page_size, drawer)


def render_comparison(result: Comparison | Series, fmt: str, output: Path | None, page_size: str = "a4",
                      drawer: Drawer | None = None) -> Rendered:
    if fmt == "json":
        from advisor.core.comparison_json import comparison_json

        return Rendered(comparison_json(result).encode("utf-8"))
    from advisor.report.compare_build import comparison_document, series_document

    doc = series_document(result) if isinstance(result, Series) else comparison_document(result)
    return render_document(doc, fmt, output, page_size, drawer)

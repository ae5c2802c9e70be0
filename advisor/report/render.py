"""Analyses and comparisons -> the bytes of each output file. Nothing is written here: the caller
writes everything only once all of it rendered."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from advisor.core.comparison import Comparison, Series
from advisor.core.model import Analysis
from advisor.report.document import Chart, Document


@dataclass(frozen=True)
class Rendered:
    main: bytes
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> bytes (Markdown's charts)
    folder: str | None = None  # the chart folder, relative to the main file


def charts_folder(output: Path) -> str:
    return f"{output.stem}_files"


def _chart_files(doc: Document, folder: str) -> tuple[dict[str, str], dict[str, bytes]]:
    """Chart name -> relative link, and the PNG files, named from a hash of their spec."""
    from advisor.report import charts

    links: dict[str, str] = {}
    files: dict[str, bytes] = {}
    for section in doc.sections:
        for block in section.blocks:
            if isinstance(block, Chart):
                digest = hashlib.sha256(json.dumps(block.spec, sort_keys=True).encode()).hexdigest()[:10]
                relative = f"{folder}/{block.name}-{digest}.png"
                links[block.name] = relative
                files[relative] = charts.png(block.spec)
    return links, files


def render_document(doc: Document, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
    if fmt == "md":
        from advisor.report.markdown import render_markdown

        if output is None:  # Markdown on stdout: no place for chart files
            return Rendered(render_markdown(doc).encode("utf-8"))
        folder = charts_folder(output)
        links, files = _chart_files(doc, folder)
        return Rendered(render_markdown(doc, links).encode("utf-8"), files, folder)
    from advisor.report.html import render_html

    if fmt == "html":
        return Rendered(render_html(doc, page_size).encode("utf-8"))
    from advisor.report.pdf import render_pdf

    return Rendered(render_pdf(render_html(doc, page_size, embed="png")))


def render(analysis: Analysis, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
    if fmt == "json":
        from advisor.core.serialize import dumps

        return Rendered(dumps(analysis).encode("utf-8"))
    from advisor.report.build import build_document

    return render_document(build_document(analysis), fmt, output, page_size)


def render_comparison(result: Comparison | Series, fmt: str, output: Path | None, page_size: str = "a4") -> Rendered:
    if fmt == "json":
        from advisor.core.serialize import comparison_json

        return Rendered(comparison_json(result).encode("utf-8"))
    from advisor.report.compare_build import comparison_document, series_document

    doc = series_document(result) if isinstance(result, Series) else comparison_document(result)
    return render_document(doc, fmt, output, page_size)

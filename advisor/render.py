"""Analysis -> bytes in the requested format."""

from __future__ import annotations

from pathlib import Path

from advisor.errors import AdvisorError
from advisor.model import Analysis


def render(analysis: Analysis, fmt: str, output: Path | None) -> bytes:
    if fmt == "json":
        from advisor.serialize import dumps

        return dumps(analysis).encode("utf-8")
    if fmt == "md":
        from advisor.report.build import build_document
        from advisor.report.markdown import render_markdown

        return render_markdown(build_document(analysis)).encode("utf-8")
    raise AdvisorError(str(output or fmt), f"the {fmt} format is not available yet; use .md or .json")

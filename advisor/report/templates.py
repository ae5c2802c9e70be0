"""The jinja2 environment over the shipped report_templates/ folder."""

from __future__ import annotations

import jinja2

from advisor.core.resources import shipped_dir


def environment(kind: str, autoescape: bool) -> jinja2.Environment:
    """Templates are ours (trusted); what they print is data the builder already escaped."""
    loader = jinja2.FileSystemLoader(str(shipped_dir("report_templates") / kind))
    return jinja2.Environment(loader=loader, autoescape=autoescape, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True, undefined=jinja2.StrictUndefined)

"""Where the shipped data lives: inside the installed wheel, or beside the package in a checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from advisor.core.yamlsafe import load_yaml_text


def shipped_dir(name: str) -> Path:
    """`rules` or `report_templates`: packaged into advisor/ by the wheel, top-level in a checkout."""
    installed = Path(str(resources.files("advisor"))) / name
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / name


def load_yaml_resource(relative: str, allow_aliases: bool = False) -> Any:
    """A YAML file shipped in the advisor package itself (advisor/data/...)."""
    text = (resources.files("advisor") / relative).read_text(encoding="utf-8")
    return load_yaml_text(text, f"advisor/{relative}", allow_aliases=allow_aliases)

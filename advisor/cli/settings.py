"""Project settings: `advisor.toml`, or `[tool.advisor]` in pyproject.toml, found from the working
directory upwards. Command-line options override them."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.model import SEVERITIES
from advisor.core.numbers import as_number

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KEYS = ("rules", "select", "ignore", "set", "fail_on", "hardware")


@dataclass(frozen=True)
class Settings:
    path: Path | None = None  # the file they came from
    rules: tuple[Path, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    params: dict[str, float] = field(default_factory=dict)
    fail_on: str | None = None
    hardware: str | None = None


def rule_param(key: str, value: object) -> tuple[str, float] | None:
    """A rule-parameter override, `RULE.PARAM` and a finite number (`--set` on the command line, the
    `set` table in settings), or None when it is not one. The rule is a name, id or alias (kebab-case,
    so the param is what follows the last dot); both parts must be given."""
    key = key.strip()
    rule, _, param = key.rpartition(".")
    number = as_number(value.strip() if isinstance(value, str) else value)
    if not rule.strip() or not param.strip() or number is None:
        return None
    return key, number


def _strings(where: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AdvisorError(where, f"'{key}' must be a list of strings")
    return tuple(value)


def parse_settings(data: dict[str, Any], path: Path) -> Settings:
    where = str(path)
    unknown = [k for k in data if k not in KEYS]
    if unknown:
        raise AdvisorError(where, f"unknown setting '{unknown[0]}'; known: {', '.join(KEYS)}")
    params: dict[str, float] = {}
    raw_set = data.get("set", {})
    if not isinstance(raw_set, dict):
        raise AdvisorError(where, "'set' must be a table of \"rule.param\" = number")
    for key, value in raw_set.items():
        param = rule_param(key, value)
        if param is None:
            raise AdvisorError(where, f"set: '{key}' must be \"rule.param\" = number")
        params[param[0]] = param[1]
    fail_on = data.get("fail_on")
    fail_on = fail_on.strip().lower() if isinstance(fail_on, str) else fail_on
    if fail_on is not None and fail_on not in SEVERITIES:
        raise AdvisorError(where, f"fail_on must be one of {', '.join(SEVERITIES)}")
    hardware = data.get("hardware")
    if hardware is not None and not isinstance(hardware, str):
        raise AdvisorError(where, "'hardware' must be a name or a file path")
    if hardware and hardware.endswith((".yaml", ".yml")):
        hardware = str((path.parent / hardware).resolve())
    return Settings(
        path=path, rules=tuple((path.parent / p).resolve() for p in _strings(where, "rules", data.get("rules", []))),
        select=_strings(where, "select", data.get("select", [])),
        ignore=_strings(where, "ignore", data.get("ignore", [])),
        params=params, fail_on=fail_on, hardware=hardware,
    )


MAX_SETTINGS_BYTES = 4 * 2**20  # a settings file is a few lines; past this it is not one


def _read_toml(path: Path) -> dict[str, Any]:
    from advisor.core.regular import read_regular

    data = read_regular(path, MAX_SETTINGS_BYTES, "a settings file")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise AdvisorError(str(path), "cannot read: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise AdvisorError(str(path), f"invalid TOML: {exc}") from None
    except RecursionError:
        raise AdvisorError(str(path), "invalid TOML: nested too deeply") from None


def find_settings(start: Path) -> Settings:
    """The nearest advisor.toml, or pyproject.toml with [tool.advisor], from `start` upwards."""
    for folder in [start, *start.parents]:
        own = folder / "advisor.toml"
        if own.is_file():
            return parse_settings(_read_toml(own), own)
        project = folder / "pyproject.toml"
        if project.is_file():
            table = _advisor_table(_read_toml(project), project)
            if table is not None:
                return parse_settings(table, project)
    return Settings()


def _advisor_table(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """pyproject.toml's [tool.advisor], None when absent; `tool = 5` or `[tool] advisor = 5` name the file."""
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise AdvisorError(str(path), "'tool' must be a table ([tool.advisor] holds advisor's settings)")
    table = tool.get("advisor")
    if table is not None and not isinstance(table, dict):
        raise AdvisorError(str(path), "[tool.advisor] must be a table")
    return table


def load_settings(explicit: Path | None, start: Path) -> Settings:
    if explicit is None:
        return find_settings(start)
    data = _read_toml(explicit)
    if explicit.name == "pyproject.toml":
        data = _advisor_table(data, explicit) or {}
    return parse_settings(data, explicit)

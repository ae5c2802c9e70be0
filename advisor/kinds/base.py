"""A profile kind: everything one profiler brings (formats, field conventions, hardware table, rule
packs, report sections, compare groups, overview columns), found by name in the kind's package.

The descriptor imports nothing of its kind's code: the adapters, event analysis and report sections
are modules of the kind's package, imported when a stage asks for them, so each stage imports only
its own layer (docs/architecture.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.model import HARDWARE_PREFIX
from advisor.core.yamlsafe import load_yaml_file
from advisor.kinds.contract import Adapters, Events, Report, adapters_of, events_of, report_of
from advisor.kinds.data_schema import check_file
from advisor.kinds.options import LoadOptions as LoadOptions  # re-exported: stages import it from here
from advisor.kinds.options import Progress as Progress

DEFAULT_MAX_RANKS = 4096  # per-rank files in one folder; a capture of more ranks raises it with --max-ranks


def check_rank_count(folder: Path, count: int, limit: int, at_least: bool = False) -> None:
    """A folder's members (`members(folder, limit)` of a kind's adapters) refused past `limit`, before any is read;
    `at_least`: the count stopped at `count` (more may follow)."""
    if count > limit:
        counted = f"at least {count:,}" if at_least else f"{count:,}"
        raise AdvisorError(str(folder), f"{counted} rank files, more than the limit of {limit:,} in one folder; "
                                        "raise it with --max-ranks N")


@dataclass(frozen=True)
class ProfileKind:
    """One profiler. The kind's package holds, by convention:

    - `adapters`: `detect(path, head) -> bool` (cheap: the first bytes, or a folder's names),
      `load(path, options) -> list[Profile]`, and `members(folder) -> [(name, path)] | None` for folders
      whose files are profiled separately (per-rank captures);
    - `events` (optional): `summarize(trace, total_time) -> (TraceSummary, metrics)` for full traces;
    - `report` (each function optional): `sections(analysis) -> {place: [Section]}` (places: utilisation,
      memory, roofline, trace), `tldr(analysis) -> [(priority, text)]`, `setup_rows(analysis)` and
      `hardware_rows(analysis) -> [(item, value)]`;
    - `data/`: conventions.yaml, hardware.yaml, report.yaml, compare.yaml, options.yaml.
    """

    name: str  # neuron | ncu | rbln | …
    title: str  # "AWS Neuron"
    formats: str  # what it reads, for the error on a file no kind recognises
    package: str  # dotted module path of the kind's package
    folder: Path  # the kind's data files
    packs: tuple[Path, ...] = ()  # rule packs the kind brings besides the built-in rules/ folder

    def module(self, name: str) -> ModuleType | None:
        """The kind's module `name` (adapters, events, report), or None when the kind has none."""
        qualified = f"{self.package}.{name}"
        try:
            return importlib.import_module(qualified)
        except ModuleNotFoundError as exc:
            if exc.name == qualified:
                return None
            raise

    def adapters(self) -> Adapters:
        """The kind's adapters, checked against the contract the first time they are asked for."""
        return _part(self, "adapters")

    def events(self) -> Events | None:
        """The kind's event analysis (None: the kind reads no event traces)."""
        return _part(self, "events")

    def report(self) -> Report:
        """The kind's report parts (empty ones where the kind has no report module)."""
        return _part(self, "report") or Report(self.name, self.package)

    def hardware_names(self) -> tuple[str, ...]:
        """The `hw_*` names packs may read for this kind: the figures its hardware table has units for."""
        return tuple(HARDWARE_PREFIX + name for name in self.data("hardware.yaml").get("units") or {})

    def option_dests(self) -> frozenset[str]:
        """The command-line options the kind declares (data/options.yaml), by the key they have in
        `LoadOptions.kind_options`: `dest`, else the flag without dashes (`--neuron-profile`: neuron_profile)."""
        entries = self.data("options.yaml").get("options") or ()
        return frozenset(e.get("dest") or str(e.get("flag", ""))[2:].replace("-", "_")
                         for e in entries if isinstance(e, dict))

    def entry_option_dests(self) -> tuple[str, ...]:
        """The kind's options that pick the profile analysed in full, as --entry does (`entry: true`)."""
        entries = self.data("options.yaml").get("options") or ()
        return tuple(e.get("dest") or str(e.get("flag", ""))[2:].replace("-", "_")
                     for e in entries if isinstance(e, dict) and e.get("entry") is True)

    def data(self, name: str) -> dict[str, Any]:
        """One of the kind's data files (`hardware.yaml`, …); empty when the kind has none. A file shared
        modules read is checked against its shape the first time (kinds.data_schema.check_file)."""
        return _checked(self, name)


@cache
def _part(kind: ProfileKind, name: str) -> Any:
    module = kind.module(name)
    if module is None:
        if name == "adapters":
            raise AdvisorError(f"profile kind '{kind.name}' ({kind.package})", "has no adapters module")
        return None
    return {"adapters": adapters_of, "events": events_of, "report": report_of}[name](kind.name, module)


@cache
def _checked(kind: ProfileKind, name: str) -> dict[str, Any]:
    data = _data(kind.folder / name)
    check_file(kind.name, kind.folder, name, data)
    return data


@cache
def _data(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    loaded = load_yaml_file(path, allow_aliases=True)  # shipped data: anchors share hardware figures
    return loaded if isinstance(loaded, dict) else {}

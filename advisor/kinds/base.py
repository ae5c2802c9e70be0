"""A profile kind: everything one profiler brings (formats, field conventions, hardware table, rule
packs, report sections, compare groups, overview columns), found by name in the kind's package.

The descriptor imports nothing of its kind's code: the adapters, event analysis and report sections
are modules of the kind's package, imported when a stage asks for them, so each stage imports only
its own layer (docs/architecture.md).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from advisor.core.model import HARDWARE_PREFIX
from advisor.core.yamlsafe import load_yaml_file

if TYPE_CHECKING:
    from advisor.kinds.contract import Adapters, Events, Report

Progress = Callable[[str], None]
DEFAULT_MAX_MEMORY = 2 << 30  # bytes: the budget when the machine does not say how much memory is available
MEMORY_SHARE = 0.5  # --max-memory's default: this share of the memory available when advisor starts, …
MEMORY_FLOOR, MEMORY_CEILING = 1 << 30, 16 << 30  # … kept within these (bytes; a trace decoded in memory
# peaks at about 1.5× its size, so half the budget read whole peaks under the budget)
DEFAULT_MAX_RANKS = 4096  # per-rank files in one folder; a capture of more ranks raises it with --max-ranks


def machine_max_memory(meminfo: Path = Path("/proc/meminfo"), cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """The memory budget for this machine (bytes): MEMORY_SHARE of the memory available now (Linux's
    MemAvailable, within a container's cgroup limit), between MEMORY_FLOOR and MEMORY_CEILING;
    DEFAULT_MAX_MEMORY when the machine does not say."""
    available = _available(meminfo, cgroup)
    if available is None:
        return DEFAULT_MAX_MEMORY
    return int(min(max(available * MEMORY_SHARE, MEMORY_FLOOR), MEMORY_CEILING))


@cache
def default_max_memory() -> int:
    """--max-memory's default, read once per process (a run keeps one budget)."""
    return machine_max_memory()


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None  # absent, or "max": no limit


def _available(meminfo: Path, cgroup: Path) -> int | None:
    try:
        found = re.search(r"^MemAvailable:\s+(\d+) kB", meminfo.read_text(), re.MULTILINE)
    except OSError:
        found = None
    if found:
        available = int(found.group(1)) * 1024
    else:
        try:  # free pages (no reclaimable cache): other Unixes
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    for limit, used in (("memory.max", "memory.current"),  # cgroup v2, then v1: a container's own limit
                        ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        cap, usage = _read_int(cgroup / limit), _read_int(cgroup / used)
        if cap is not None:
            available = min(available, max(cap - (usage or 0), 0))
    return available


def check_rank_count(folder: Path, count: int, limit: int) -> None:
    """A folder's members (`members(folder, limit)` of a kind's adapters) refused past `limit`, before any is read."""
    from advisor.core.errors import AdvisorError

    if count > limit:
        raise AdvisorError(str(folder), f"{count:,} rank files, more than the limit of {limit:,} in one folder; "
                                        "raise it with --max-ranks N")


@dataclass(frozen=True)
class LoadOptions:
    """How to read an input; `kind_options` holds a kind's own command-line options by their dest
    (for Neuron: neuron_profile, neff, trace)."""

    entry: str | None = None  # which entry of a file that holds several profiles
    # bytes; full traces above half of it are streamed instead of loaded whole
    max_memory: int = field(default_factory=default_max_memory)
    progress: Progress | None = None  # progress lines for long ingests (a terminal is watching)
    kind_options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, name: str, default: Any = None) -> Any:
        return self.kind_options.get(name, default)


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
        from advisor.kinds.contract import Report

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
        modules read is checked against its shape the first time (kinds.check.check_file)."""
        return _checked(self, name)


@cache
def _part(kind: ProfileKind, name: str) -> Any:
    from advisor.core.errors import AdvisorError
    from advisor.kinds.contract import adapters_of, events_of, report_of

    module = kind.module(name)
    if module is None:
        if name == "adapters":
            raise AdvisorError(f"profile kind '{kind.name}' ({kind.package})", "has no adapters module")
        return None
    return {"adapters": adapters_of, "events": events_of, "report": report_of}[name](kind, module)


@cache
def _checked(kind: ProfileKind, name: str) -> dict[str, Any]:
    from advisor.kinds.check import check_file

    data = _data(kind.folder / name)
    check_file(kind, name, data)
    return data


@cache
def _data(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    loaded = load_yaml_file(path, allow_aliases=True)  # shipped data: anchors share hardware figures
    return loaded if isinstance(loaded, dict) else {}

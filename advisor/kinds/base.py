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
# The least budget, given or default: the interpreter and its libraries take tens of MiB before any input,
# and the limits derived from the budget have floors of up to 64 MiB, so less is a budget nothing keeps
MEMORY_MINIMUM = 64 << 20
DEFAULT_MAX_RANKS = 4096  # per-rank files in one folder; a capture of more ranks raises it with --max-ranks
_CGROUP_FILES = (("", "memory.max", "memory.current"),  # cgroup v2, then v1's memory controller
                 ("memory", "memory.limit_in_bytes", "memory.usage_in_bytes"))


def _address_room() -> int | None:
    """What RLIMIT_AS (`ulimit -v`) leaves of the address space: the limit less what the process maps now
    (Linux's /proc/self/statm); None when there is no limit."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):  # not a Unix
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    try:
        mapped = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        mapped = 0
    return max(soft - mapped, 0)


def machine_max_memory(meminfo: Path = Path("/proc/meminfo"), cgroup: Path = Path("/sys/fs/cgroup"),
                       self_cgroup: Path = Path("/proc/self/cgroup"),
                       address_room: Callable[[], int | None] = _address_room) -> int:
    """The memory budget for this machine (bytes): MEMORY_SHARE of the memory available now (Linux's
    MemAvailable) between MEMORY_FLOOR and MEMORY_CEILING, DEFAULT_MAX_MEMORY when the machine does not say;
    then never more than MEMORY_SHARE of what the hard limits leave (the cgroups the process runs in, and
    RLIMIT_AS), which are not raised to the floor: past them is a killed process or a MemoryError, where
    MemAvailable undercounts (the kernel reclaims caches). Never under MEMORY_MINIMUM."""
    available = _available(meminfo)
    budget = DEFAULT_MAX_MEMORY if available is None else int(
        min(max(available * MEMORY_SHARE, MEMORY_FLOOR), MEMORY_CEILING))
    hard = [room for room in (_cgroup_room(cgroup, self_cgroup), address_room()) if room is not None]
    if hard:
        budget = min(budget, int(min(hard) * MEMORY_SHARE))
    return max(budget, MEMORY_MINIMUM)


@cache
def default_max_memory() -> int:
    """--max-memory's default, read once per process (a run keeps one budget)."""
    return machine_max_memory()


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None  # absent, or "max": no limit


def _available(meminfo: Path) -> int | None:
    try:
        found = re.search(r"^MemAvailable:\s+(\d+) kB", meminfo.read_text(), re.MULTILINE)
    except OSError:
        found = None
    if found:
        return int(found.group(1)) * 1024
    try:  # free pages (no reclaimable cache): other Unixes
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _own_cgroups(self_cgroup: Path) -> dict[str, str]:
    """The process's cgroup path per hierarchy ("" for v2, "memory" for v1's controller), from
    /proc/self/cgroup; "/" where it names none, or climbs out of the namespace's root (`/..`)."""
    own = {"": "/", "memory": "/"}
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        hierarchy = "" if controllers == "" else "memory" if "memory" in controllers.split(",") else None
        if hierarchy is not None and path.startswith("/") and ".." not in path.split("/"):
            own[hierarchy] = path
    return own


def _cgroup_room(root: Path, self_cgroup: Path) -> int | None:
    """What the tightest memory limit among the process's cgroup and its parents leaves (limit less usage):
    on a host the process runs in a nested cgroup (a systemd slice, a batch job's), in a container the mount's
    root is its own; None when no limit is set."""
    rooms, own = [], _own_cgroups(self_cgroup)
    for hierarchy, limit, used in _CGROUP_FILES:
        base = root / hierarchy if hierarchy else root
        folder = base / own[hierarchy].lstrip("/")
        for level in (folder, *(p for p in folder.parents if p == base or base in p.parents)):
            cap = _read_int(level / limit)
            if cap is not None:
                rooms.append(max(cap - (_read_int(level / used) or 0), 0))
    return min(rooms, default=None)


def check_rank_count(folder: Path, count: int, limit: int, at_least: bool = False) -> None:
    """A folder's members (`members(folder, limit)` of a kind's adapters) refused past `limit`, before any is read;
    `at_least`: the count stopped at `count` (more may follow)."""
    from advisor.core.errors import AdvisorError

    if count > limit:
        counted = f"at least {count:,}" if at_least else f"{count:,}"
        raise AdvisorError(str(folder), f"{counted} rank files, more than the limit of {limit:,} in one folder; "
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

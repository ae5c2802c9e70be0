"""The memory budget (--max-memory) and every limit derived from it, in one place: the budget's default for
this machine, and what share of it each reader may take (text, a trace read whole, a member read whole, a
trace's columns, a saved analysis), so one option raises them all. A refusal names the limit and the option.

Parsing text costs several times its size (the str, the list of lines, the rows built from them),
hence the fractions below; at the default --max-memory (2 GiB) a text export may be 256 MiB,
16 million lines, lines of 4 MiB.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.numbers import size_or_reason
from advisor.core.units import bytes_

TEXT_SIZE_SHARE = 8  # a text export may be an eighth of --max-memory
BYTES_PER_LINE = 128  # a line held in a list costs about this much besides its characters
LINE_SHARE = 512  # one line may be this fraction of --max-memory
MAX_JSON_DEPTH = 64  # a summary nests 3 levels, a full trace 4: deeper is not a profile
MAX_STRING_CHARS = 1 << 20  # one text value (a kernel name, a label); the longest real one is a few KiB
# What str.splitlines splits on: a file of form feeds is as many lines as a file of newlines.
_LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
RAISE = "raise it with --max-memory SIZE"

# The budget itself: its default on this machine (machine_max_memory) and the range a given one must be in
DEFAULT_MAX_MEMORY = 2 << 30  # bytes: the budget when the machine does not say how much memory is available
MEMORY_SHARE = 0.5  # --max-memory's default: this share of the memory available when advisor starts, …
MEMORY_FLOOR, MEMORY_CEILING = 1 << 30, 16 << 30  # … kept within these (bytes; a trace decoded in memory
# peaks at about 1.5× its size, so half the budget read whole peaks under the budget)
# The least budget, given or default: the interpreter and its libraries take tens of MiB before any input,
# and the limits derived from the budget have floors of up to 64 MiB, so less is a budget nothing keeps
MEMORY_MINIMUM = 64 << 20
MAX_MEMORY_CEILING = 2**60  # 1 EiB, as docs/security.md says: past any machine, a typo

# What each reader of a large input may take of the budget (bytes); a share never goes under its floor, which
# any real input of that part fits in.
WHOLE_TRACE_SHARE = 2  # a trace read whole peaks at about 1.5x its size: above half the budget it is streamed
MEMBER_SHARE, MEMBER_FLOOR = 16, 64 << 20  # streamed, one member (a JSON value) read whole (decoded: a few times it)
COLUMN_SHARE, COLUMN_FLOOR = 4, 32 << 20  # a trace's columns: the analysis peaks at about three times them
INFLATED_FLOOR = 64 << 20  # a gzip trace may inflate to the whole budget, and at least this
ANALYSIS_SHARE = 16  # a saved analysis: reading one costs a few times its size (2 GiB: 128 MiB)
_CGROUP_FILES = (("", "memory.max", "memory.current"),  # cgroup v2, then v1's memory controller
                 ("memory", "memory.limit_in_bytes", "memory.usage_in_bytes"))


@dataclass(frozen=True)
class TextLimits:
    """How much text a reader takes: bytes, lines and characters in one line."""

    max_bytes: int
    max_lines: int
    max_line_chars: int

    @classmethod
    def for_memory(cls, max_memory: int) -> TextLimits:
        """The limits under `max_memory`, never below floors any real summary fits in (a small file is
        read whatever the budget: --max-memory decides only how large traces are read)."""
        return cls(max_bytes=max(max_memory // TEXT_SIZE_SHARE, 1 << 20),
                   max_lines=max(max_memory // BYTES_PER_LINE, 100_000),
                   max_line_chars=max(max_memory // LINE_SHARE, 1 << 16))

    def check_lines(self, text: str, where: str) -> None:
        """Refuse text with more lines, or a longer line, than the limits allow; counted before any
        list of lines is built."""
        lines = sum(text.count(brk) for brk in _LINE_BREAKS) + 1
        if lines > self.max_lines:
            raise AdvisorError(where, f"{lines:,} lines, over the line-count limit of {self.max_lines:,} "
                                      f"(set by --max-memory; {RAISE})")
        if len(text) <= self.max_line_chars:
            return
        longest = max(map(len, text.splitlines()), default=0)
        if longest > self.max_line_chars:
            raise AdvisorError(where, f"a line of {longest:,} characters, over the line-length limit of "
                                      f"{self.max_line_chars:,} (set by --max-memory; {RAISE})")


def budget(text: str) -> int:
    """A --max-memory given as text (`4GiB`) in bytes, from MEMORY_MINIMUM to MAX_MEMORY_CEILING."""
    size = size_or_reason(text)
    if isinstance(size, str):
        raise AdvisorError("--max-memory", size)
    if size < MEMORY_MINIMUM:  # `--max-memory 4` meant 4 GiB: a budget advisor cannot keep is a typo
        raise AdvisorError("--max-memory", f"'{text.strip()}' is {bytes_(size)}, less than the least budget of "
                                           f"{bytes_(MEMORY_MINIMUM)} (advisor alone takes tens of MiB); sizes "
                                           "take a unit, e.g. 4GiB")
    if size > MAX_MEMORY_CEILING:  # past any machine: a typo, and sizes derived from it must stay integers
        raise AdvisorError("--max-memory", f"'{text.strip()}' is more than 1 EiB")
    return size


def whole_trace_limit(max_memory: int) -> int:
    """The largest trace read whole (larger ones are streamed)."""
    return max_memory // WHOLE_TRACE_SHARE


def member_limit(max_memory: int) -> int:
    """The largest member of a streamed trace (one JSON value) read whole."""
    return max(max_memory // MEMBER_SHARE, MEMBER_FLOOR)


def column_limit(max_memory: int) -> int:
    """The most a trace's columns may take."""
    return max(max_memory // COLUMN_SHARE, COLUMN_FLOOR)


def inflated_limit(max_memory: int) -> int:
    """The most a compressed trace may inflate to."""
    return max(max_memory, INFLATED_FLOOR)


def saved_analysis_limit(max_memory: int = DEFAULT_MAX_MEMORY) -> tuple[int, str]:
    """The largest saved analysis read under `max_memory` (bytes), and where that limit comes from, in words."""
    return max(1, max_memory // ANALYSIS_SHARE), f"1/{ANALYSIS_SHARE} of --max-memory"


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


def check_json_value(value: Any, where: str, max_depth: int = MAX_JSON_DEPTH,
                     max_string: int = MAX_STRING_CHARS) -> None:
    """Refuse a decoded JSON value nested deeper than `max_depth` or holding a string (key or value)
    longer than `max_string`; iterative, so depth costs no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if len(item) > max_string:
                raise AdvisorError(where, f"a text value of {len(item):,} characters, over the string-length "
                                          f"limit of {max_string:,} (no profile field is that long)")
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > max_depth:
            raise AdvisorError(where, depth_refusal(max_depth))
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)


def depth_refusal(max_depth: int | None = MAX_JSON_DEPTH) -> str:
    """The refusal of a value nested past `max_depth`; None: past msgspec's recursion guard (about 1,000 levels,
    less the caller's stack), which holds where a streamed file's members are checked and skipped, not kept."""
    limit = f"the nesting-depth limit of {max_depth} levels" if max_depth else "the depth the JSON decoder follows"
    return f"JSON nested too deeply: past {limit} (a profile nests at most 4 levels)"

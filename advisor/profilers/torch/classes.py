"""What the torch kind knows about names in a Kineto trace (data/kernels.yaml): kernel classes by name pattern
(first match wins), device events that are waits rather than work, the runtime calls that launch or
synchronise, profiler steps, the data loader's mark and the thresholds. One loader, checked on first use: a
missing or misspelt key is an error naming the file and the key."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor.core.errors import AdvisorError, suggest
from advisor.profilers.torch import KIND

FILE = "kernels.yaml"
COMMUNICATION, MEMORY, OTHER = "communication", "memory", "other"
US = 1e3  # ns per µs
KEYS = ("classes", "other", "device_waits", "launches", "syncs", "step", "dataloader", "comm_annotations",
        "not_collectives", "kernel_wait_threshold_us", "untraced_host_work_us", "low_occupancy", "top_kernels")


@dataclass(frozen=True)
class KernelClass:
    key: str
    title: str
    patterns: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class Knowledge:
    classes: tuple[KernelClass, ...]  # in match order, `other` last (it has no patterns)
    device_waits: tuple[re.Pattern[str], ...]  # full match
    launches: frozenset[str]
    syncs: frozenset[str]
    step: re.Pattern[str]  # a ProfilerStep annotation; group 1 is the step number
    dataloader: tuple[re.Pattern[str], ...]
    comm_annotations: tuple[re.Pattern[str], ...]
    not_collectives: frozenset[str]
    kernel_wait_threshold: float  # ns
    untraced_host_work: float  # ns: a stretch between host events at least this long is CPU work, not launching
    low_occupancy: float  # fraction 0..1
    top_kernels: int

    def index(self, key: str) -> int:
        return next(i for i, c in enumerate(self.classes) if c.key == key)

    def class_of(self, name: str) -> int:
        """The index of the first class whose pattern is found in the name, else `other`'s."""
        for i, c in enumerate(self.classes):
            if any(p.search(name) for p in c.patterns):
                return i
        return len(self.classes) - 1

    def classify(self, names: Sequence[str]) -> Any:
        """The class index of each distinct name (a Python loop over names, never over events)."""
        import numpy as np

        return np.fromiter((self.class_of(n) for n in names), dtype=np.int8, count=len(names))

    def waits(self, names: Sequence[str]) -> Any:
        import numpy as np

        return np.fromiter((any(p.fullmatch(n) for p in self.device_waits) for n in names), dtype=bool,
                           count=len(names))


def matching(names: Sequence[str], patterns: Sequence[re.Pattern[str]]) -> Any:
    """Which of the distinct names any pattern is found in (bool per name)."""
    import numpy as np

    return np.fromiter((any(p.search(n) for p in patterns) for n in names), dtype=bool, count=len(names))


def named(names: Sequence[str], wanted: frozenset[str]) -> Any:
    """Which of the distinct names is one of `wanted` exactly (bool per name)."""
    import numpy as np

    return np.fromiter((n in wanted for n in names), dtype=bool, count=len(names))


def _fail(key: str, problem: str) -> AdvisorError:
    return AdvisorError(f"profile kind 'torch' ({KIND.folder / FILE})", f"{key}: {problem}")


def _patterns(key: str, value: Any) -> tuple[re.Pattern[str], ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(key, "expected a list of regular expressions")
    try:
        return tuple(re.compile(v, re.IGNORECASE) for v in value)
    except re.error as exc:
        raise _fail(key, f"not a regular expression ({exc})") from None


def _names(key: str, value: Any) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(key, "expected a list of names")
    return frozenset(value)


def _number(key: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise _fail(key, f"expected a number in [{low}, {high}], got {value!r}")
    return float(value)


def _classes(data: Mapping[str, Any]) -> tuple[KernelClass, ...]:
    found = []
    for i, entry in enumerate(data["classes"] or ()):
        if not isinstance(entry, dict) or set(entry) != {"key", "title", "patterns"}:
            raise _fail(f"classes[{i}]", "expected {key, title, patterns}")
        found.append(KernelClass(str(entry["key"]), str(entry["title"]),
                                 _patterns(f"classes[{i}].patterns", entry["patterns"])))
    other = data["other"]
    if not isinstance(other, dict) or set(other) != {"key", "title"}:
        raise _fail("other", "expected {key, title}")
    found.append(KernelClass(str(other["key"]), str(other["title"]), ()))
    keys = [c.key for c in found]
    for needed in (COMMUNICATION, MEMORY, OTHER):
        if needed not in keys:
            raise _fail("classes", f"no class '{needed}' (the analysis reads it)")
    if len(set(keys)) != len(keys):
        raise _fail("classes", "a key is listed twice")
    return tuple(found)


@cache
def knowledge() -> Knowledge:
    """data/kernels.yaml, checked and compiled (once)."""
    return parse(KIND.data(FILE))


def parse(data: Mapping[str, Any]) -> Knowledge:
    """kernels.yaml's content, checked: an unknown or missing key, or a bad value, is an AdvisorError naming it."""
    for key in data:
        if key not in KEYS:
            raise _fail(key, f"unknown key{suggest(str(key), KEYS)}")
    for key in KEYS:
        if key not in data:
            raise _fail(key, "missing")
    if not isinstance(data["step"], str):
        raise _fail("step", "expected a regular expression")
    return Knowledge(
        classes=_classes(data), device_waits=_patterns("device_waits", data["device_waits"]),
        launches=_names("launches", data["launches"]), syncs=_names("syncs", data["syncs"]),
        step=_patterns("step", [data["step"]])[0],
        dataloader=_patterns("dataloader", data["dataloader"]),
        comm_annotations=_patterns("comm_annotations", data["comm_annotations"]),
        not_collectives=_names("not_collectives", data["not_collectives"]),
        kernel_wait_threshold=_number("kernel_wait_threshold_us", data["kernel_wait_threshold_us"], 0, 1e9) * US,
        untraced_host_work=_number("untraced_host_work_us", data["untraced_host_work_us"], 0, 1e12) * US,
        low_occupancy=_number("low_occupancy", data["low_occupancy"], 0, 1),
        top_kernels=int(_number("top_kernels", data["top_kernels"], 1, 10_000)),
    )

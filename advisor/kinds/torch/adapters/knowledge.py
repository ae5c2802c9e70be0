"""What the reader knows about Kineto traces (kineto.yaml beside this module), loaded and compiled once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.yamlsafe import load_yaml_file

FILE = Path(__file__).with_name("kineto.yaml")


@dataclass(frozen=True)
class Vendor:
    vendor: str
    categories: frozenset[str]
    runtime: re.Pattern[str] | None
    device_name: re.Pattern[str] | None


@dataclass(frozen=True)
class Kineto:
    categories: Mapping[str, str]  # event category -> table
    marker_keys: tuple[str, ...]
    marker_categories: tuple[str, ...]
    vendors: tuple[Vendor, ...]
    direction: re.Pattern[str]
    pageable: re.Pattern[str]
    pinned: re.Pattern[str]
    rank_file: re.Pattern[str]
    dtype_bytes: Mapping[str, float]
    max_time_us: float
    filtered_coverage_below: float


def _pattern(text: object, flags: int = re.IGNORECASE) -> re.Pattern[str] | None:
    return re.compile(str(text), flags) if text else None


@cache
def kineto() -> Kineto:
    data = load_yaml_file(FILE)
    try:
        memcpy = data["memcpy"]
        return Kineto(
            categories={str(k): str(v) for k, v in data["categories"].items()},
            marker_keys=tuple(map(str, data["marker_keys"])),
            marker_categories=tuple(map(str, data["marker_categories"])),
            vendors=tuple(Vendor(str(v["vendor"]), frozenset(v.get("categories") or ()),
                                 _pattern(v.get("runtime"), 0), _pattern(v.get("device_name")))
                          for v in data["vendors"]),
            direction=re.compile(memcpy["direction"]), pageable=re.compile(memcpy["pageable"]),
            pinned=re.compile(memcpy["pinned"]), rank_file=re.compile(data["rank_file"]),
            dtype_bytes={str(k): float(v) for k, v in data["dtype_bytes"].items()},
            max_time_us=float(data["max_time_us"]),
            filtered_coverage_below=float(data["filtered_coverage_below"]))
    except (KeyError, TypeError, AttributeError, ValueError, re.error) as exc:
        raise AdvisorError(str(FILE), f"unreadable reader knowledge: {type(exc).__name__}: {exc}") from None

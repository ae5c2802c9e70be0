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
    older_categories: Mapping[str, str]  # a category not above as written, in lower case -> table
    step_operator: re.Pattern[str]  # an older trace's step range, written as an operator
    counter_ranges: str  # the CUPTI range profiler's category
    counter_vendor: str  # and the vendor whose device it measured
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
    ev_idx_sequence_gap: float  # a gap between two "Ev Idx" sequences, not events filtered out
    et_schema: re.Pattern[str]  # a PyTorch execution trace's `schema`
    et_members: tuple[str, ...]  # and one of its members


def _pattern(text: object, flags: int = re.IGNORECASE) -> re.Pattern[str] | None:
    return re.compile(str(text), flags) if text else None


@cache
def kineto() -> Kineto:
    data = load_yaml_file(FILE)
    try:
        memcpy = data["memcpy"]
        return Kineto(
            categories={str(k): str(v) for k, v in data["categories"].items()},
            older_categories={**{str(k).lower(): str(v) for k, v in data["categories"].items()},
                              **{str(k).lower(): str(v) for k, v in data["older_categories"].items()}},
            step_operator=re.compile(data["step_operator"]),
            counter_ranges=str(data["counter_ranges"]["category"]),
            counter_vendor=str(data["counter_ranges"]["vendor"]),
            marker_keys=tuple(map(str, data["marker_keys"])),
            marker_categories=tuple(map(str, data["marker_categories"])),
            vendors=tuple(Vendor(str(v["vendor"]), frozenset(v.get("categories") or ()),
                                 _pattern(v.get("runtime"), 0), _pattern(v.get("device_name")))
                          for v in data["vendors"]),
            direction=re.compile(memcpy["direction"]), pageable=re.compile(memcpy["pageable"]),
            pinned=re.compile(memcpy["pinned"]), rank_file=re.compile(data["rank_file"]),
            dtype_bytes={str(k): float(v) for k, v in data["dtype_bytes"].items()},
            max_time_us=float(data["max_time_us"]),
            filtered_coverage_below=float(data["filtered_coverage_below"]),
            ev_idx_sequence_gap=float(data["ev_idx_sequence_gap"]),
            et_schema=re.compile(data["execution_trace"]["schema"]),
            et_members=tuple(map(str, data["execution_trace"]["members"])))
    except (KeyError, TypeError, AttributeError, ValueError, re.error) as exc:
        raise AdvisorError(str(FILE), f"unreadable reader knowledge: {type(exc).__name__}: {exc}") from None

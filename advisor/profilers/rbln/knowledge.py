"""What the RBLN kind knows about its traces, loaded once from data/tracks.yaml and data/names.yaml and
shared by the two layers that read it: the adapters (which track is which category, device and
chiplet; which name format a trace uses) and the event analysis (the categories' flags, the name
rules). One loader, so the two never read the files differently. It imports only core and the kind's
descriptor: an import-linter contract keeps it from importing either layer that uses it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.profilers.rbln import KIND

OTHER = "other"  # the category of a track no pattern matches
MAX_DIGITS = 18  # a chiplet number longer than this is not one (and stays within int64)


@dataclass(frozen=True)
class Category:
    key: str
    title: str
    device: bool  # a device command category (DEV)
    compute: bool  # the Neural Engine
    dma: bool  # on-chip transfers
    io: bool  # host <-> device transfers
    comm: bool  # multi-device communication
    transfer: bool  # its commands carry transfer bytes


def tracks_data() -> dict[str, Any]:
    """tracks.yaml, as shipped."""
    return KIND.data("tracks.yaml")


@cache
def categories() -> tuple[Category, ...]:
    """The categories of tracks.yaml, in its order, then `other`."""
    found = [Category(c["key"], c["title"], bool(c.get("device")), bool(c.get("compute")), bool(c.get("dma")),
                      bool(c.get("io")), bool(c.get("comm")), bool(c.get("transfer")))
             for c in tracks_data()["categories"]]
    return (*found, Category(OTHER, "Other tracks", False, False, False, False, False, False))


@dataclass(frozen=True)
class TrackRules:
    """The compiled patterns of tracks.yaml."""

    categories: tuple[tuple[str, re.Pattern[str]], ...]  # (key, pattern), in the file's order
    chiplet: re.Pattern[str] | None

    def category(self, name: str) -> str | None:
        text = name.strip()
        for key, pattern in self.categories:
            if pattern.fullmatch(text):
                return key
        return None

    def chiplet_number(self, name: str) -> int | None:
        """The chiplet's number in a track name; None when there is none or it is no plausible number (a
        5,000-digit run, which int() refuses)."""
        match = self.chiplet.fullmatch(name.strip()) if self.chiplet else None
        digits = match.group(1) if match and match.groups() else None
        return int(digits) if digits and digits.isdecimal() and len(digits) <= MAX_DIGITS else None


@cache
def track_rules() -> TrackRules:
    spec = tracks_data()
    trailing = spec.get("trailing_id") or ""
    tail = f"(?:{trailing})?" if trailing else ""
    try:
        compiled = tuple(
            (str(c["key"]), re.compile("(?:" + "|".join(f"(?:{p})" for p in c.get("patterns") or ()) + ")" + tail,
                                       re.IGNORECASE))
            for c in spec.get("categories") or () if c.get("patterns"))
        chiplet = re.compile(str(spec["chiplet"]), re.IGNORECASE) if spec.get("chiplet") else None
    except (re.error, KeyError, TypeError, AttributeError) as exc:
        raise AdvisorError(str(KIND.folder / "tracks.yaml"), f"bad track pattern: {exc}") from None
    return TrackRules(categories=compiled, chiplet=chiplet)


@cache
def slice_argument_keys() -> dict[str, str]:
    """Where a slice's bytes and cycles are, as the Perfetto reader's `Arguments` take them (tracks.yaml
    `arguments`)."""
    spec = tracks_data().get("arguments") or {}
    try:
        return {"container": str(spec["container"]), "bytes_key": str(spec["bytes"]),
                "cycles_key": str(spec["cycles"])}
    except KeyError as exc:
        raise AdvisorError(str(KIND.folder / "tracks.yaml"), f"arguments: missing {exc}") from None


@dataclass(frozen=True)
class NameRules:
    pattern: re.Pattern[str]
    workload_majority: float  # share of parsed names that must carry W<n>_ for it to be read as the workload
    weight_families: frozenset[str]
    inline_ops: frozenset[str]
    dma_bound_ratio: float
    max_layers: int
    max_sequences: int
    min_gap: float  # ns: shorter holes in the device's busy union are not counted as idle gaps


def names_data() -> dict[str, Any]:
    """names.yaml, as shipped."""
    return KIND.data("names.yaml")


@cache
def name_rules() -> NameRules:
    data = names_data()
    return NameRules(re.compile(data["pattern"]), float(data["workload_majority"]),
                     frozenset(data["weight_families"]), frozenset(data["inline_ops"]),
                     float(data["dma_bound_ratio"]), int(data["max_layers"]), int(data["max_sequences"]),
                     float(data.get("min_gap_ns", 0.0)))

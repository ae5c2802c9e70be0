"""Every number a report shows is formatted here, with its unit.

Byte sizes in binary units (KiB, MiB, GiB) as summary-text prints them; rates in decimal GB/s and
TFLOP/s, the way hardware peaks are quoted (410 GB/s, 91.75 TFLOP/s); times in s/ms/µs/ns;
fractions as percents. An unavailable value is shown as "unavailable", never as 0.

The generic units live here; a kind adds its own counted units (warps, SMs) as data, so core names no
profiler's quantities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

UNAVAILABLE = "unavailable"

_BINARY = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
_DECIMAL = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
_TIMES = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def _sig(x: float, digits: int = 4) -> str:
    """`digits` significant figures, without exponent notation for everyday magnitudes."""
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


# Magnitudes no profile of one run can have: a value past its limit is a tampered file or a profiler's garbage,
# shown as unavailable (never as a 300-digit number). Generous on purpose: 32 years of time, a zettabyte, 10^21
# FLOP/s or cycles; a share of 100,000 % (shares may pass 100 %: MFU at the memory floor, sums of overlapping
# shares; a utilisation above 100 % is the kind's to refuse: kinds/conventions.py reading a profile,
# kinds/check.py reading a saved analysis).
TIME_LIMIT = 1e9  # seconds
FRACTION_LIMIT = 1e3
MAGNITUDE_LIMIT = 1e21  # any other unit


def _usable(value: float | None, limit: float = MAGNITUDE_LIMIT) -> bool:
    if value is None or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value) and abs(value) <= limit
    except OverflowError:  # an integer past float range (a 300-digit JSON number read by Python)
        return False


def plural(n: int, one: str, many: str | None = None) -> str:
    """`n` things, grouped by thousands: "1 copy", "3 copies" (many defaults to one + "s")."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def count(value: float | None) -> str:
    if not _usable(value):
        return UNAVAILABLE
    assert value is not None
    return f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 100 else _sig(value)


def bytes_(value: float | None) -> str:
    if not _usable(value):
        return UNAVAILABLE
    assert value is not None
    for unit, size in _BINARY:
        if abs(value) >= size:
            return f"{_sig(value / size)} {unit}"
    return f"{value:,.0f} B"


def exact_bytes(value: float | None) -> str:
    return UNAVAILABLE if not _usable(value) else f"{value:,.0f} B"


def decimal_bytes(value: float | None) -> str:
    """Bytes in decimal units (6.58 GB), for comparison with figures quoted that way."""
    if not _usable(value):
        return UNAVAILABLE
    assert value is not None
    for prefix, size in _DECIMAL[1:]:
        if abs(value) >= size:
            return f"{_sig(value / size, 3)} {prefix.upper() if prefix != 'k' else 'k'}B"
    return f"{value:,.0f} B"


def seconds(value: float | None) -> str:
    if not _usable(value, TIME_LIMIT):
        return UNAVAILABLE
    assert value is not None
    if value == 0:
        return "0 s"
    for unit, size in _TIMES:
        if abs(value) >= size:
            return f"{_sig(value / size)} {unit}"
    return f"{_sig(value / 1e-9)} ns"


def axis(unit: str, values: Sequence[float]) -> tuple[float, str]:
    """How a chart shows values of a unit: the divisor and the unit on its axis (fractions as %, seconds
    in the unit of the largest value, bytes in binary units)."""
    top = max((abs(v) for v in values), default=0.0)
    if unit == "fraction":
        return 0.01, "%"
    if unit == "s":
        return next(((size, name) for name, size in _TIMES if top >= size), (_TIMES[-1][1], _TIMES[-1][0]))
    if unit == "bytes":
        return next(((size, name) for name, size in _BINARY if top >= size), (1.0, "B"))
    return 1.0, unit


def percent(fraction: float | None) -> str:
    """A profiler fraction (0..1) as a percent: 96.45 %, 3.67 %, 0.000226 %, < 0.0001 %."""
    if not _usable(fraction, FRACTION_LIMIT):
        return UNAVAILABLE
    assert fraction is not None
    pct = fraction * 100
    if pct == 0:
        return "0 %"
    if abs(pct) >= 1:
        return f"{pct:.2f} %"
    if abs(pct) < 1e-4:  # a few ns of a window: "0.0000000043 %" reads as noise, and is
        return "< 0.0001 %" if pct > 0 else "> -0.0001 %"
    return f"{_sig(pct, 3)} %"


def rate(value: float | None, unit: str) -> str:
    """Decimal rates: 30.79 GB/s, 91.75 TFLOP/s."""
    if not _usable(value):
        return UNAVAILABLE
    assert value is not None
    base = "B/s" if unit == "bytes/s" else "FLOP/s"
    for prefix, size in _DECIMAL:
        if abs(value) >= size:
            return f"{_sig(value / size)} {prefix}{base}"
    return f"{_sig(value)} {base}"


def flops(value: float | None) -> str:
    if not _usable(value):
        return UNAVAILABLE
    assert value is not None
    for prefix, size in _DECIMAL:
        if abs(value) >= size:
            return f"{_sig(value / size)} {prefix}FLOP"
    return f"{value:,.0f} FLOP"


def ratio(value: float | None, suffix: str = "") -> str:
    if not _usable(value):
        return UNAVAILABLE
    assert value is not None
    return f"{_sig(value)}{suffix}"


def speedup(value: float | None) -> str:
    if not _usable(value):
        return UNAVAILABLE
    assert value is not None
    return f"{_sig(value, 3)}×"


def _counted(word: str) -> Callable[[float | None], str]:
    """A count of things (cycles, warps, blocks) shown with the thing's name: "1 block", never "1 blocks"."""
    one = word[:-1] if word.endswith("s") and len(word) > 2 and "/" not in word else word
    return lambda v: count(v) + (f" {one if v == 1 else word}" if _usable(v) else "")


# The generic units a metric, input, param or hardware figure may have (machine units), each with how
# a report shows it. A kind adds its own counted units (Nsight Compute's warps, SMs) in its
# data/conventions.yaml `units:`; `Units` below holds both for validating a kind's packs.
UNITS: dict[str, Callable[[float | None], str]] = {
    "s": seconds,
    "bytes": bytes_,
    "FLOP": flops,
    "FLOP/s": lambda v: rate(v, "FLOP/s"),
    "bytes/s": lambda v: rate(v, "bytes/s"),
    "FLOP/B": lambda v: ratio(v, " FLOP/B"),
    "fraction": percent,
    "ratio": lambda v: ratio(v, "×"),
    "count": count,
    "cycles": _counted("cycles"),
    "Hz": lambda v: rate(v, "Hz").replace("FLOP/s", "Hz"),
    "": ratio,
}
# Units whose thresholds are shown in the unit, not as the bare number a pack writes (0.5 -> 50.00 %).
SHOWN_IN_UNIT = frozenset({"fraction", "bytes", "s", "bytes/s", "FLOP/s"})
# How a unit a kind adds may be shown: "counted" is the count followed by the unit (1,024 warps, 2.5 waves).
DISPLAYS = ("counted",)
# The shape of a unit a kind may add (warps, SMs, inst/cycle): a short word, so every unit is plain text in any
# output format. A saved analysis's unit of another shape is refused (core/saved_checks.py) and never shown.
_UNIT_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{0,15}(?:/[A-Za-z][A-Za-z0-9]{0,15})?")


def is_unit_word(unit: str) -> bool:
    return _UNIT_WORD.fullmatch(unit) is not None


@dataclass(frozen=True)
class Units:
    """The units values may have: the generic ones, and those some kinds add (unit -> display, one of
    DISPLAYS). A unit is shown the same wherever it appears, whether the kind is known there or not."""

    added: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for unit, display in self.added.items():
            if unit in UNITS:
                raise ValueError(f"unit {unit!r} is a generic unit already; a kind may only add new ones")
            if not is_unit_word(unit):
                raise ValueError(f"unit {unit!r} is not a word (letters and digits, at most one '/')")
            if display not in DISPLAYS:
                raise ValueError(f"unit {unit!r}: display {display!r} is not one of {', '.join(DISPLAYS)}")

    def names(self) -> tuple[str, ...]:
        """Every unit, the generic ones first and "" (a bare number) last, as the pack schema lists them."""
        return (*(u for u in UNITS if u), *self.added, "")

    def __contains__(self, unit: object) -> bool:
        return isinstance(unit, str) and (unit in UNITS or unit in self.added)

    def merged(self, other: Units) -> Units:
        return Units({**self.added, **other.added})


def value(v: float | None, unit: str) -> str:
    """Any metric value by its unit. Any other unit (one a kind adds: each is counted) is shown as the count
    followed by the unit, so a value keeps its unit also where its kind is not known (a fleet's tables). A unit
    that is no word cannot be one (the readers refuse it): the bare number, as the unit could be markup."""
    shown = UNITS.get(unit)
    if shown is not None:
        return shown(v)
    return _counted(unit)(v) if is_unit_word(unit) else ratio(v)


def limit(unit: str) -> float:
    """The largest magnitude a value of the unit may have (above): past it, it is no measurement."""
    return TIME_LIMIT if unit == "s" else FRACTION_LIMIT if unit == "fraction" else MAGNITUDE_LIMIT


def in_range(v: float | None, unit: str) -> bool:
    """Whether a number can be shown in its unit: finite and within the unit's physical range."""
    return _usable(v, limit(unit))

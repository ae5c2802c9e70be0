"""Numbers as files write them, and the tolerances numbers are compared with: one home for each."""

from __future__ import annotations

import math
from typing import Any

# Relative differences within these are agreement, not a finding (each a different question).
CROSS_CHECK_TOLERANCE = 0.02  # a reported value against its derivation from other reported values
EXPECTATION_TOLERANCE = 0.02  # an investigation's analytical prediction against the profile (default)
COMPARE_NOISE = 0.02  # before/after changes within it are "unchanged" (default of --noise)
OUTLIER_BAND = (0.8, 1.25)  # a profile's figure within these multiples of the median of several is not an outlier


def as_number(value: object) -> float | None:
    """A finite number from YAML, TOML or a command line, or None. YAML 1.1 reads `1.0e12` and `400e9`
    (no exponent sign) as text, so numeric text is accepted: users write numbers that way."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def number_or_reason(raw: Any) -> float | str | None:
    """A profile field as a finite float (thousands separators allowed in text), None for NaN,
    infinities and out-of-range values, or the reason it is not a number."""
    if isinstance(raw, bool):
        return "a boolean"
    if isinstance(raw, (int, float)):
        try:
            number = float(raw)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(raw, str):
        try:
            number = float(raw.strip().replace(",", ""))
        except ValueError:
            return f"text {raw.strip()[:40]!r}"
        return number if math.isfinite(number) else None
    return f"a {type(raw).__name__}"


def relative_difference(reported: float, derived: float) -> float:
    """|a − b| over the larger magnitude: symmetric, 0 when both are 0."""
    scale = max(abs(reported), abs(derived))
    return 0.0 if scale == 0 else abs(reported - derived) / scale


_SIZE_UNITS = {"": 1, "b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "kb": 10**3, "mb": 10**6,
               "gb": 10**9, "tb": 10**12, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}  # 2G as ulimit and sort


def parse_size(text: str) -> int | None:
    """Bytes from a size as people write it (`512MiB`, `4GiB`, `2G`, `1.5gb`, `4096`), or None when it
    is not a positive size. Binary prefixes (KiB, and the bare K, M, G, T of ulimit and sort) are powers
    of 1024; KB, MB, GB, TB are powers of 1000."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _SIZE_UNITS:
        return None
    size = int(float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()])
    return size if size > 0 else None

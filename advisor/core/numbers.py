"""Numbers as files write them, and the tolerances numbers are compared with: one home for each."""

from __future__ import annotations

import math
import re
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


_PREFIXES = "kmgtpe"  # kilo/kibi … exa/exbi: powers of 1000 with B (GB), of 1024 with iB (GiB) or alone (G)
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgtpe]?)(i?)(b?)", re.IGNORECASE)


def size_or_reason(text: str) -> int | str:
    """Bytes from a size as people write it (`512MiB`, `4GiB`, `2G`, `1.5GB`, `4096`), or why it is not
    one. Binary prefixes (KiB … EiB, and the bare K, M, G, T, P of ulimit and sort) are powers of 1024;
    KB … EB powers of 1000. Letters are taken in any case but the last b: `Gb`, `gib`, `4096b` are bits as
    written (network speeds are), so they are refused with the byte spellings rather than guessed. There is
    no bare E: `1e` is the start of `1e9`."""
    written = str(text).strip()
    match = _SIZE.fullmatch(written)
    not_a_size = f"'{written}' is not a size such as 512MiB or 4GiB"
    if not match:
        return not_a_size
    number, prefix, binary, unit = match.group(1), match.group(2).lower(), match.group(3), match.group(4)
    if (binary and not (prefix and unit)) or (prefix == "e" and not unit):  # `1Gi`, `1iB`; `1e`
        return not_a_size
    power = _PREFIXES.index(prefix) + 1 if prefix else 0
    if unit == "b":
        spellings = (f"{number}{prefix.upper()}B (10^{3 * power} bytes) or {number}{prefix.upper()}iB "
                     f"(2^{10 * power} bytes)") if prefix else f"{number}B"
        return f"'{written}': a lowercase b is bits; for bytes write {spellings}"
    size = int(float(number) * (1000**power if unit and not binary else 1024**power))  # GB; GiB and the bare G
    return size if size > 0 else not_a_size


def parse_size(text: str) -> int | None:
    """Bytes from a size (size_or_reason), or None when it is not one."""
    size = size_or_reason(text)
    return size if isinstance(size, int) else None

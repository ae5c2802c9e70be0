import math

import pytest

from advisor.core import units as fmt


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (0.9645396092701302, "fraction", "96.45 %"),
        (2.2616407562047187e-06, "fraction", "0.000226 %"),
        (0.0367, "fraction", "3.67 %"),
        (0.0, "fraction", "0 %"),
        (6582249472, "bytes", "6.13 GiB"),
        (1835008, "bytes", "1.75 MiB"),
        (340.347 * 1024, "bytes", "340.3 KiB"),
        (512, "bytes", "512 B"),
        (0.213808050051, "s", "213.8 ms"),
        (4.83557e-07, "s", "483.6 ns"),
        (2.243e-05, "s", "22.43 µs"),
        (5.2, "s", "5.2 s"),
        (30785788797.1, "bytes/s", "30.79 GB/s"),
        (91.75e12, "FLOP/s", "91.75 TFLOP/s"),
        (654.344e9, "FLOP", "654.3 GFLOP"),
        (223.78048, "FLOP/B", "223.8 FLOP/B"),
        (12.02, "ratio", "12.02×"),
        (403039, "count", "403,039"),
        (299331264, "cycles", "299,331,264 cycles"),
        # a unit a kind adds (Nsight Compute's, in its conventions.yaml) is counted, with its name
        (1024, "warps", "1,024 warps"),
        (2.5, "waves", "2.5 waves"),
        (1.5234, "inst/cycle", "1.523 inst/cycle"),
    ],
)
def test_values_carry_units(value, unit, shown):
    assert fmt.value(value, unit) == shown


@pytest.mark.parametrize("bad", [None, math.nan, math.inf])
@pytest.mark.parametrize("unit", ["fraction", "bytes", "s", "bytes/s", "FLOP", "FLOP/B", "ratio", "count", "", "warps"])
def test_unavailable_is_never_zero(bad, unit):
    assert fmt.value(bad, unit) == "unavailable"


def test_decimal_bytes_for_quoted_figures():
    assert fmt.decimal_bytes(6578757632) == "6.58 GB"


def test_message_spec():
    from advisor.packs.message import format_value

    assert format_value(12.4, "ratio", ".0f") == "12"
    assert format_value(12.4, "ratio", "") == "12.4×"
    assert format_value(None, "ratio", ".0f") == "unavailable"


def test_chart_axis_units():
    assert fmt.axis("fraction", [0.5]) == (0.01, "%")
    assert fmt.axis("s", [0.002, 0.0004]) == (1e-3, "ms")
    assert fmt.axis("s", [2.5e-7]) == (1e-9, "ns")  # below a microsecond
    assert fmt.axis("s", [3.0, -40.0]) == (1.0, "s")  # by magnitude
    assert fmt.axis("bytes", [3 * 2**20]) == (2**20, "MiB")
    assert fmt.axis("bytes", [512]) == (1.0, "B")
    assert fmt.axis("count", []) == (1.0, "count")


def test_units_a_kind_adds():
    """The generic units, and counted ones a kind adds as data; a kind may not redefine a generic unit."""
    gpu = fmt.Units({"warps": "counted", "SMs": "counted"})
    assert "warps" in gpu and "s" in gpu and "" in gpu
    assert "warps" not in fmt.Units() and ["s"] not in gpu
    assert gpu.names()[-3:] == ("warps", "SMs", "")
    assert fmt.Units().merged(gpu).names() == gpu.names()
    with pytest.raises(ValueError, match="generic unit already"):
        fmt.Units({"s": "counted"})
    with pytest.raises(ValueError, match="display 'percent' is not one of counted"):
        fmt.Units({"warps": "percent"})


@pytest.mark.parametrize(("value", "unit"), [
    (1e300, "s"), (10**300, "count"), (10**400, "bytes"), (1e291, "fraction"), (2e9, "s"), (1e22, "FLOP/s"),
    (-1e300, "cycles"), (1e300, "warps"), (1e300, ""),
], ids=lambda v: f"{len(str(v))}-digit int" if isinstance(v, int) else None)
def test_past_any_physical_range_is_unavailable(value, unit):
    """A 300-digit number printed as 300 digits, a share as 1e293 %: past its unit's physical range a value is no
    measurement (a tampered file, a profiler's garbage), shown as unavailable."""
    assert fmt.value(value, unit) == "unavailable"


def test_large_but_physical_values_still_show():
    assert fmt.value(3.6e6, "s") == "3600000 s"  # a thousand hours
    assert fmt.value(5.0, "fraction") == "500.00 %"  # MFU at the memory floor may pass 100 %
    assert fmt.value(1e21, "FLOP") == "1000000 PFLOP"


@pytest.mark.parametrize("unit", ["<img src=y onerror=alert(1)>", "[x](javascript:y)", "a b", "`x`", "s/", "x" * 40])
def test_a_unit_that_is_no_word_is_never_shown(unit):
    """A saved analysis's unit reached the Markdown raw: one that is no word is not shown, only the number."""
    assert fmt.value(3, unit) == "3"


def test_a_kind_adds_only_word_units():
    with pytest.raises(ValueError, match="is not a word"):
        fmt.Units({"<b>": "counted"})
    assert "inst/cycle" in fmt.Units({"inst/cycle": "counted"})


def test_a_message_spec_does_not_print_a_huge_number():
    from advisor.packs.message import format_value

    assert format_value(1e300, "s", ".0f") == "unavailable"
    assert format_value(10**300, "count", ",.0f") == "unavailable"
    assert format_value(0.25, "fraction", "%") == "25.00 %"


@pytest.mark.parametrize(("fraction", "shown"), [
    (0.9645, "96.45 %"), (0.0367, "3.67 %"), (2.26e-6, "0.000226 %"), (4.3e-11, "< 0.0001 %"),
    (-4.3e-11, "> -0.0001 %"), (0.0, "0 %"), (None, "unavailable")])
def test_a_percent_has_a_readable_precision(fraction, shown):
    """Issue 34's re-read: "compute overlaps 0.0000000043 %" (a few ns of a window) is noise, shown as < 0.0001 %."""
    assert fmt.percent(fraction) == shown


def test_a_count_of_one_thing_is_singular():
    """Issue 36: "limited by registers (1 blocks per SM)" in five Nsight Compute reports."""
    from advisor.core import units

    assert [units.value(1, "blocks"), units.value(2, "blocks"), units.value(1, "SMs"), units.value(1, "inst/cycle")] \
        == ["1 block", "2 blocks", "1 SM", "1 inst/cycle"]

"""core/numbers.py: the relative difference numbers are compared by, and sizes as people write them. Each rule is
tested with more than one case, so a mutation of the base or of one spelling cannot pass (review 4 §4.4, C1, C2)."""

from __future__ import annotations

import pytest

from advisor.core.numbers import parse_size, relative_difference, size_or_reason

KIB, MIB, GIB, TIB, PIB, EIB = (1 << 10 * n for n in range(1, 7))


@pytest.mark.parametrize(("a", "b", "expected"), [
    (1.0, 2.0, 0.5),  # |1 − 2| / 2: over the larger magnitude (the smaller would give 1.0)
    (2.0, 1.0, 0.5),  # symmetric: the same with the sides swapped
    (100.0, 98.0, 0.02),  # at CROSS_CHECK_TOLERANCE, whichever side is the reported one
    (98.0, 100.0, 0.02),
    (-4.0, 1.0, 1.25),  # magnitudes: |−4 − 1| / 4
    (0.0, 3.0, 1.0),  # one side 0: the whole of the other (the smaller base would divide by 0)
    (0.0, 0.0, 0.0),  # both 0: no difference, not a division by zero
])
def test_relative_difference_is_over_the_larger_magnitude(a, b, expected):
    assert relative_difference(a, b) == pytest.approx(expected)


@pytest.mark.parametrize(("text", "size"), [
    # the bare prefixes of ulimit and sort are binary, in either case: K is 1024, never 1000
    ("2K", 2 * KIB), ("2k", 2 * KIB), ("512k", 512 * KIB), ("512K", 512 * KIB), ("1.5K", 1536),
    ("3M", 3 * MIB), ("3m", 3 * MIB), ("2G", 2 * GIB), ("1T", TIB), ("1t", TIB), ("1P", PIB),
    # iB: binary, any case but the b
    ("2KiB", 2 * KIB), ("2kiB", 2 * KIB), ("3MiB", 3 * MIB), ("2GiB", 2 * GIB), ("1TiB", TIB), ("1PiB", PIB),
    ("1EiB", EIB), ("1eiB", EIB),
    # B: decimal
    ("2KB", 2000), ("2kB", 2000), ("3MB", 3 * 10**6), ("2GB", 2 * 10**9), ("1.5GB", 1_500_000_000),
    ("1TB", 10**12), ("1PB", 10**15), ("1EB", 10**18),
    # bytes, with or without B, and spaces around and between
    ("4096", 4096), ("4096B", 4096), (" 2 K ", 2 * KIB), ("2 KiB", 2 * KIB),
])
def test_a_size_is_bytes_with_the_binary_bare_prefixes_of_ulimit(text, size):
    assert parse_size(text) == size


def test_bare_k_and_kb_are_different_sizes():
    """The one place the two readings meet: 1K is 1024 bytes (ulimit), 1KB is 1000, 1KiB is 1024."""
    assert (parse_size("1K"), parse_size("1KB"), parse_size("1KiB")) == (1024, 1000, 1024)


@pytest.mark.parametrize(("text", "reason"), [
    ("2Kb", "'2Kb': a lowercase b is bits; for bytes write 2KB (10^3 bytes) or 2KiB (2^10 bytes)"),
    ("1gib", "'1gib': a lowercase b is bits; for bytes write 1GB (10^9 bytes) or 1GiB (2^30 bytes)"),
    ("8b", "'8b': a lowercase b is bits; for bytes write 8B"),
    ("2Ki", "'2Ki' is not a size such as 512MiB or 4GiB"),
    ("1e", "'1e' is not a size such as 512MiB or 4GiB"),
])
def test_a_text_that_is_no_size_says_why(text, reason):
    assert size_or_reason(text) == reason
    assert parse_size(text) is None

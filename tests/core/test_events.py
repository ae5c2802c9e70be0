"""The event model's small array helpers."""

from __future__ import annotations

import numpy as np

from advisor.core.events import ROWS_AT_A_TIME, first_rows


def test_first_rows_gives_each_values_first_row_and_the_length_where_it_never_occurs():
    values = np.array([3, 1, 3, 0, 1, 3], dtype=np.int8)
    first = first_rows(values, 5)
    assert first.tolist() == [3, 1, 6, 0, 6] and first.dtype == np.int32


def test_first_rows_of_nothing_and_of_many_repeats():
    assert first_rows(np.zeros(0, dtype=np.int64), 3).tolist() == [0, 0, 0]
    values = np.random.default_rng(7).integers(0, 50, ROWS_AT_A_TIME * 2 + 5)  # over several blocks
    values[:ROWS_AT_A_TIME + 1] %= 49  # 49 first appears in a later block
    expected = [int(np.flatnonzero(values == v)[0]) for v in range(50)]
    assert first_rows(values, 50).tolist() == expected

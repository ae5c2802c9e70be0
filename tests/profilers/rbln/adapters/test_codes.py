"""Codes numbered in order of first appearance (profilers/rbln/adapters/codes.py): equal labels share one
code, and a true hash collision is told apart by value."""

import numpy as np

from advisor.profilers.rbln.adapters.codes import _first_equal, label_codes


def test_label_codes_are_numbered_by_first_appearance_with_equal_labels_merged():
    codes = label_codes(np.array([2, 0, 2, 1, 3]), ["b", "a", "c", "a"])
    assert codes.names == ("c", "b", "a")
    assert codes.codes.tolist() == [0, 1, 0, 2, 2]


def test_no_rows_no_labels():
    codes = label_codes(np.array([], dtype=np.int32), ["a"])
    assert codes.names == () and codes.codes.tolist() == []


def test_equal_hashes_of_different_values_are_told_apart():
    values = ["x", "y", "x", "z"]
    assert _first_equal(np.array([5, 5, 5, 9]), values.__getitem__).tolist() == [0, 1, 0, 3]
    assert _first_equal(np.array([1, 2, 3]), values.__getitem__) is None  # all distinct: no index at all

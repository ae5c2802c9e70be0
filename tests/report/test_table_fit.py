"""The PDF table estimate: widths in points from the template's type sizes and DejaVu's advances, and
the verdict against the page's text width (A4: 178 mm = 504.6 pt)."""

import pytest

from advisor.report.table_fit import MONO_EM, SANS_EM, TEXT_WIDTH_PT, fits_unbroken, widest_word_pt


def test_text_width_of_the_pages_in_points():
    assert TEXT_WIDTH_PT["a4"] == pytest.approx(504.57, abs=0.01)  # 210 mm - 2 * 16 mm
    assert TEXT_WIDTH_PT["letter"] == pytest.approx(521.29, abs=0.01)  # 8.5 in - 2 * 16 mm


def test_widest_word_counts_code_in_monospace_at_8_pt_and_text_at_the_table_size():
    assert widest_word_pt("total time", 9.0) == pytest.approx(5 * SANS_EM * 9.0)  # "total"
    assert widest_word_pt("<code>abc</code> x", 9.0) == pytest.approx(3 * MONO_EM * 8.0 + 3.0)  # code + padding
    assert widest_word_pt("<code>a_b</code>/c", 9.0) == pytest.approx(3 * MONO_EM * 8.0 + 3.0 + 2 * SANS_EM * 9.0)
    assert widest_word_pt("&lt;&gt;", 9.0) == pytest.approx(2 * SANS_EM * 9.0)  # entities are one character
    assert widest_word_pt("", 9.0) == 0.0
    assert widest_word_pt("410.4 µs", 7.0, nowrap=True) == pytest.approx(8 * SANS_EM * 7.0)  # one run, space and all


def test_fits_unbroken_until_the_words_fill_most_of_the_page():
    word = "x" * 30  # 30 * 0.7 * 9 pt = 189 pt a column, plus padding 9 pt and a border
    left2, left3 = ["left"] * 2, ["left"] * 3
    assert fits_unbroken(["a", "b"], [[word, word]], left2, "a4", wide=False)  # 2 * 198.75 + 0.75 = 398 <= 429 pt
    assert not fits_unbroken(["a", "b", "c"], [[word, word, word]], left3, "a4", wide=False)  # 597 pt
    assert not fits_unbroken(["a", "b", "c"], [[word, word, word]], left3, "a4", wide=True)  # at 7 pt: 459 pt
    assert fits_unbroken(["a", "b", "c"], [["x" * 25] * 3], left3, "a4", wide=True)  # 3 * 127.25 + 0.75 = 382.5 pt
    assert fits_unbroken(["a"], [[word], ["short"]], ["left"], "a4", wide=False)  # the widest row counts
    assert fits_unbroken(["a", "b"], [[word]], left2, "a4", wide=False)  # a short row is padded, not an error


def test_a_right_aligned_cell_counts_whole_and_a_header_by_its_words():
    numbers = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34"
    assert fits_unbroken([numbers], [["1"]], ["right"], "a4", wide=False)  # a header wraps between words
    assert not fits_unbroken(["n"], [[numbers]], ["right"], "a4", wide=False)  # 95 characters on one line
    assert fits_unbroken(["n"], [[numbers]], ["left"], "a4", wide=False)

"""The run of serial launches: unknown durations are never summed as 0 s (issue 23)."""

from advisor.report.overview import _run_sentence


def test_the_run_is_the_sum_of_the_known_durations_and_says_how_many():
    assert _run_sentence(5, 5, "kernel launches", 71.6e-6).startswith("5 kernel launches took 71.6 µs together (")
    partial = _run_sentence(5, 4, "kernel launches", 71.6e-6)
    assert "took 71.6 µs together (4 of the 5 have a known duration; the rest are left out)" in partial


def test_no_known_duration_is_never_0_s():
    sentence = _run_sentence(3, 0, "kernel launches", None)
    assert "0 s" not in sentence and "none has a known duration" in sentence

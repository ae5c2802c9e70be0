"""A Neuron summary read as it was written: a key or metric given twice is refused (the reader would keep
whichever came last), and a summary far larger than any real one is refused quickly by a documented limit
(docs/security.md, section 2), before its lines or entries are each worked on."""

from __future__ import annotations

import json

import pytest
from tests_support import SAMPLES, one_line_error

from advisor.core.errors import AdvisorError
from advisor.profilers.neuron import adapters
from advisor.profilers.neuron.adapters import load_profiles, summary_text

# the documented limits (docs/security.md), as a user reads them
MAX_FIELDS, MAX_ENTRIES, MAX_TEXT_LINES = 10_000, 4_096, 100_000
FLAT = {"total_time": 0.5, "hbm_read_bytes": 1000, "vector_engine_active_time_percent": 0.25}


# --- a key given twice --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "key", "place"), [
    ('{"total_time": 0.5, "hbm_read_bytes": 1, "total_time": 9}', "total_time", "at the top level"),
    ('{"n_1": {"total_time": 0.5, "hbm_read_bytes": 1, "total\\u005ftime": 9}}', "total_time", "in n_1"),
    ('{"summary": [{"total_time": 0.5}, {"hbm_read_bytes": 1, "hbm_read_bytes": 2}], "instruction": []}',
     "hbm_read_bytes", "in summary[1]"),
    ('{"total_time": 0.5, "hbm_read_bytes": 1, "meta": {"a b": [{"x": 1, "x": 2}]}}', "x", 'in meta."a b"[0]'),
    ('{"total_time": 0.5, "hbm_read_bytes": 1, "a\\nb": 1, "a\\nb": 2}', "a\\nb", "at the top level"),
])
def test_a_key_given_twice_is_refused_naming_the_key_and_where(write, text, key, place):
    """The key (as JSON spells it: a line break stays `\\n`, so the error is one line) and its object's
    place; an escaped spelling of the same key is the same key."""
    path = write("p.json", text)
    with pytest.raises(AdvisorError) as info:
        load_profiles(path)
    assert info.value.where == str(path)
    assert info.value.problem == f'the key "{key}" appears twice {place}: only one value would be read'


def test_a_key_given_twice_in_the_sample_is_one_line(tmp_path, capsys):
    path = tmp_path / "p.json"
    text = (SAMPLES / "mp2_energy" / "summary.json").read_text()
    path.write_text(text.replace('"total_time": 0.213808050051,', '"total_time": 0.213808050051,\n  "total_time": 9,'))
    assert one_line_error(capsys, path).endswith(
        ': the key "total_time" appears twice at the top level: only one value would be read')


def test_the_same_key_in_different_objects_is_not_a_repeat(write):
    profiles = load_profiles(write("p.json", {"n_1": FLAT, "n_2": {**FLAT, "total_time": 0.9}}))
    assert [p.values["total_time"] for p in profiles] == [0.5, 0.9]


def test_a_metric_given_twice_in_summary_text_names_both_lines(write):
    path = write("s.txt", "total_time  0.5\nhbm_read_bytes  10\n# a comment\ntotal_time  0.9\n")
    with pytest.raises(AdvisorError) as info:
        load_profiles(path)
    assert info.value.problem == 'the metric "total_time" appears twice (lines 1 and 4): only one value would be read'


# --- limits -------------------------------------------------------------------------------------------

def test_three_million_lines_of_summary_text_are_refused_before_any_is_parsed(write, monkeypatch):
    """The 3-million-line summary-text ran past 300 s (and took 5 GB): now the line count refuses it before
    one line is parsed. The speed is measured in docs/performance.md, not asserted here."""
    parsed = []
    monkeypatch.setattr(summary_text, "_value", lambda text, conv: parsed.append(text))
    path = write("s.txt", "total_time  0.5\n" + "".join(f"m_{i}  1\n" for i in range(3_000_000 - 1)))
    with pytest.raises(AdvisorError) as info:
        load_profiles(path)
    assert info.value.problem == (f"3,000,000 lines, over the {MAX_TEXT_LINES:,}-line limit of a summary-text (a "
                                  "Neuron summary is about 150 lines)")
    assert parsed == []


def test_metric_lines_past_the_field_limit_stop_the_read_at_the_limit(write, monkeypatch):
    """Each line is parsed once, and the read stops at the first metric past the limit: linear, and early."""
    parsed = []
    real = summary_text._value
    monkeypatch.setattr(summary_text, "_value", lambda text, conv: parsed.append(text) or real(text, conv))
    path = write("s.txt", "".join(f"m_{i}  1\n" for i in range(MAX_FIELDS + 5_000)))
    with pytest.raises(AdvisorError) as info:
        load_profiles(path)
    assert info.value.problem.startswith(f"more than {MAX_FIELDS:,} metric lines in one profile, over the "
                                         "field-count limit")
    assert len(parsed) == MAX_FIELDS


def test_a_summary_text_at_the_field_limit_is_read(write):
    lines = ["total_time  0.5 ms"] + [f"m_{i}  {i}" for i in range(MAX_FIELDS - 1)]
    [profile] = load_profiles(write("s.txt", "\n".join(lines)))
    assert len(profile.values) == MAX_FIELDS
    assert profile.values["total_time"] == pytest.approx(0.5e-3) and profile.values["m_9998"] == 9998


def test_a_summary_json_profile_with_more_fields_than_the_limit_is_refused(write):
    path = write("s.json", {**FLAT, **{f"m_{i}": i for i in range(MAX_FIELDS)}})
    with pytest.raises(AdvisorError) as info:
        load_profiles(path)
    assert info.value.problem.startswith(f"more than {MAX_FIELDS:,} fields in one profile")


def test_more_profiles_than_the_limit_are_refused_before_any_is_read(write, monkeypatch):
    normalised = []
    monkeypatch.setattr(adapters, "normalise", lambda raw, conv: normalised.append(raw))
    path = write("s.json", json.dumps({f"n_{i}": FLAT for i in range(MAX_ENTRIES + 1)}))
    with pytest.raises(AdvisorError) as info:
        load_profiles(path)
    assert info.value.problem == (f"{MAX_ENTRIES + 1:,} profiles, more than the limit of {MAX_ENTRIES:,} in one "
                                  "summary (one per profile of the folder it was made from)")
    assert normalised == []


def test_the_profiles_of_one_summary_share_one_list_of_entry_names(write):
    """Each profile names every entry: one tuple for all of them (a copy each was quadratic in memory:
    200,000 entries took over 24 GB)."""
    profiles = load_profiles(write("s.json", {f"n_{i}": FLAT for i in range(3)}))
    assert profiles[0].source.entries == ("n_0", "n_1", "n_2")
    assert all(p.source.entries is profiles[0].source.entries for p in profiles)

import json

import pytest

from advisor.core.errors import AdvisorError
from advisor.kinds.entries import choose
from advisor.profilers.neuron.adapters import load_profiles

FLAT = {"total_time": 0.5, "hbm_read_bytes": 1000, "vector_engine_active_time_percent": 0.25,
        "instance_type": "trn1.2xlarge"}


def test_flat_dict(write):
    [profile] = load_profiles(write("s.json", FLAT))
    assert profile.source.format == "summary-json"
    assert profile.source.shape == "flat"
    assert profile.values["total_time"] == 0.5
    assert profile.values["vector_engine_active_time_percent"] == 0.25  # a fraction, kept as one
    assert profile.info["instance_type"] == "trn1.2xlarge"


def test_profile_id_entries_one(write):
    [profile] = load_profiles(write("s.json", {"n_" + "a" * 40: FLAT}))
    assert profile.source.shape == "profile-id entries"
    assert profile.source.entry is None  # a single entry needs no naming
    assert profile.values["hbm_read_bytes"] == 1000


def test_profile_id_entries_several_default_is_longest(write):
    data = {f"n_{i:040x}": {**FLAT, "total_time": t} for i, t in enumerate([0.5, 0.9, 0.7])}
    profiles = load_profiles(write("s.json", data))
    assert [p.values["total_time"] for p in profiles] == [0.5, 0.9, 0.7]
    chosen = choose(profiles, None, "s.json")
    assert chosen.values["total_time"] == 0.9
    assert chosen.source.entry == f"n_{1:040x}"
    assert len(chosen.source.entries) == 3
    assert choose(profiles, f"n_{2:040x}", "s.json").values["total_time"] == 0.7
    assert choose(profiles, "0", "s.json").values["total_time"] == 0.5
    with pytest.raises(AdvisorError, match="no such entry"):
        choose(profiles, "n_nope", "s.json")


def test_legacy_summary_list(write):
    [profile] = load_profiles(write("s.json", {"summary": [FLAT], "instruction": [], "dma": []}))
    assert profile.source.shape == "legacy summary list"
    assert profile.values["total_time"] == 0.5


def test_log_lines_before_json(write):
    text = "2026-11-02 10:14:03 INFO Reading NTFF\nWARNING something [x]\n" + json.dumps({"n_abc": FLAT}, indent=2)
    [profile] = load_profiles(write("s.json", text))
    assert profile.values["total_time"] == 0.5


def test_unknown_keys_kept(write):
    [profile] = load_profiles(write("s.json", {**FLAT, "brand_new_metric_bytes": 7, "new_text_version": "9.9"}))
    assert profile.values["brand_new_metric_bytes"] == 7
    assert profile.info["new_text_version"] == "9.9"


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), float("-inf")])
def test_sentinels_and_non_finite_are_unavailable(write, bad):
    path = write("s.json", "")
    path.write_text(json.dumps({**FLAT, "mfu_estimated_percent": bad}))  # json writes NaN/Infinity literally
    [profile] = load_profiles(path)
    assert profile.values["mfu_estimated_percent"] is None
    assert any("mfu_estimated_percent" in n for n in profile.notes)


def test_number_beyond_float_range_is_unavailable(write):
    path = write("s.json", '{"total_time": 1e400, "dma_transfer_count": 3, "hbm_read_bytes": ' + "9" * 400 + "}")
    [profile] = load_profiles(path)
    assert profile.values["total_time"] is None
    assert profile.values["hbm_read_bytes"] is None


def test_numeric_strings_are_numbers_and_junk_strings_unavailable(write):
    [profile] = load_profiles(write("s.json", {**FLAT, "hbm_write_bytes": "2048", "total_time": "fast"}))
    assert profile.values["hbm_write_bytes"] == 2048
    assert profile.values["total_time"] is None


def test_out_of_range_percent_is_unavailable_and_noted(write):
    data = {**FLAT, "throttle_avg_nc0_percent": 253.0, "mfu_max_achievable_estimated_percent": 2.7}
    [profile] = load_profiles(write("s.json", data))
    assert profile.values["throttle_avg_nc0_percent"] is None
    assert any("throttle_avg_nc0_percent = 253 lies outside the 0..1 range" in n for n in profile.notes)
    assert profile.values["mfu_max_achievable_estimated_percent"] == 2.7  # a ratio to the ridge: may exceed 1


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty"),
        ('{"total_time": 0.5,', "invalid JSON"),
        ("[1, 2, 3]", "found a JSON array"),
        ('"just a string"', "unknown format"),
        ('{"hello": "world"}', "no Neuron profile metrics"),
        (b"\x00\x01\x02binary\xff", "binary data"),
    ],
)
def test_bad_json_is_one_clear_error(write, content, problem):
    with pytest.raises(AdvisorError) as info:
        load_profiles(write("bad.json", content))
    assert problem in info.value.problem
    assert info.value.where.endswith("bad.json")


def test_deeply_nested_json(write):
    with pytest.raises(AdvisorError, match=r"nested too deeply|no Neuron profile"):
        load_profiles(write("deep.json", "[" * 100_000 + "]" * 100_000))


def test_utf8_bom_and_utf16(write):
    text = json.dumps(FLAT)
    [a] = load_profiles(write("bom.json", b"\xef\xbb\xbf" + text.encode()))
    [b] = load_profiles(write("u16.json", text.encode("utf-16")))
    assert a.values == b.values


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(AdvisorError, match="no such file"):
        load_profiles(tmp_path / "nope.json")
    with pytest.raises(AdvisorError, match="is a folder, not a profile file"):
        load_profiles(tmp_path)


@pytest.mark.parametrize(("data", "problem"), [
    ({"n_1": {"total_time": "fast", "hbm_read_bytes": "lots", "vector_engine_active_time_percent": "high",
              "instance_type": "trn1"}}, "no usable metric (4 fields, none numeric)"),
    ({"total_time": "n/a", "hbm_read_bytes": None}, "no usable metric (2 fields, none numeric)"),
    ({"total_time": -1, "hbm_read_bytes": -1.0, "mfu_estimated_percent": "x"},
     "no usable metric (3 fields, 2 numeric, none a measurement)"),
])
def test_metrics_without_one_usable_number_are_not_a_profile(write, data, problem):
    with pytest.raises(AdvisorError) as info:
        load_profiles(write("s.json", data))
    assert info.value.problem == problem


def test_an_entry_without_usable_metrics_is_dropped_beside_a_real_one(write):
    data = {"n_1": {"total_time": "fast", "hbm_read_bytes": "lots"}, "n_2": {**FLAT, "total_time": "n/a"}}
    [profile] = load_profiles(write("s.json", data))
    assert profile.values["total_time"] is None  # partly unavailable: still a profile
    assert profile.values["hbm_read_bytes"] == 1000

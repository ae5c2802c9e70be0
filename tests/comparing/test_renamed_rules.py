"""A rule renamed after a baseline was saved: the old name is an alias, and compare still matches the
finding as persisting instead of calling it fixed under one name and new under the other."""

import json

from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze, load_analysis
from advisor.comparing.diff import compare
from advisor.core.serialize import dumps

PACK = """\
pack: team
version: 1.0.0
kinds: [neuron]
rules:
  - id: TEAM001
    name: {name}
    {aliases}
    title: Vector Engine busy
    severity: medium
    when: vector_engine_active_time_percent > 0.5
    message: Busy.
    recommendation: Do less.
    examples:
      - {{metrics: {{vector_engine_active_time_percent: 0.9}}, expect: fire}}
      - {{metrics: {{vector_engine_active_time_percent: 0.1}}, expect: pass}}
"""


def test_a_baseline_saved_under_an_old_rule_name_still_matches(tmp_path):
    old_pack, new_pack = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old_pack.write_text(PACK.format(name="vector-busy", aliases=""))
    new_pack.write_text(PACK.format(name="vector-engine-busy", aliases="aliases: [vector-busy]"))
    sample = SAMPLES / "mp2_energy" / "summary.json"
    baseline = tmp_path / "baseline.json"
    baseline.write_text(dumps(analyze(sample, AnalyzeOptions(rule_paths=(old_pack,)))))
    assert "vector-busy" in [f["name"] for f in json.loads(baseline.read_text())["findings"]]

    options = AnalyzeOptions(rule_paths=(new_pack,))
    before, after = load_analysis(baseline, options), analyze(sample, options)
    assert "vector-engine-busy" in [f.name for f in before.findings]  # read under today's name
    statuses = {f.name: f.status for f in compare(before, after).findings}
    assert statuses["vector-engine-busy"] == "persisting"
    assert "vector-busy" not in statuses


def test_options_that_reach_only_the_profile_are_a_comparability_warning(tmp_path, capsys):
    from advisor.cli import main

    sample = SAMPLES / "weight_reload" / "summary.json"
    baseline = tmp_path / "baseline.json"
    assert main(["report", str(sample), "-o", str(baseline)]) == 0
    out = tmp_path / "diff.json"
    assert main(["compare", str(baseline), str(sample), "--set", "weight-reload.min_ratio=100", "-o", str(out)]) == 0
    warnings = json.loads(out.read_text())["warnings"]
    assert warnings[0] == ("--set applied to the profiles analysed now, not to baseline (saved analyses are used as "
                           "they were analysed): findings may differ because the rules did.")


def test_an_ncu_analysis_saved_before_the_speed_of_light_rename_re_renders_and_compares(tmp_path):
    """Issue 24: ncu's `compute-throughput-bound` is now `compute-bound` (the old name an alias). A saved analysis
    naming the old rule everywhere (findings, outcomes, causes) reads under today's names: compare calls the
    finding persisting, and the report's speed-of-light verdict and ncu verdict rows are those of today."""
    from advisor.report.build import build_document
    from advisor.report.markdown import render_markdown

    sample = SAMPLES / "ncu_seed004" / "output.txt"
    text = dumps(analyze(sample))
    assert '"compute-bound"' in text and "compute-throughput-bound" not in text
    baseline = tmp_path / "before-rename.json"
    baseline.write_text(text.replace('"compute-bound"', '"compute-throughput-bound"')
                        .replace('"memory-bound"', '"memory-throughput-bound"'))
    before, after = load_analysis(baseline), analyze(sample)
    assert [f.name for f in before.findings] == [f.name for f in after.findings]
    assert {o.name for o in before.outcomes} == {o.name for o in after.outcomes}
    statuses = {f.name: f.status for f in compare(before, after).findings}
    assert statuses["compute-bound"] == "persisting" and "compute-throughput-bound" not in statuses
    report = render_markdown(build_document(before))
    assert report == render_markdown(build_document(after))
    assert "compute-bound" in report and "throughput-bound" not in report

"""The fields compare.yaml `comparability:` names: a text field of the analysis, else a metric of that name shown
with its unit (a world size is a number), so two profiles that differ in either get a warning."""

from dataclasses import replace

from tests_support import SAMPLES

from advisor.api import analyze
from advisor.comparing.diff import identity
from advisor.core.model import Metric

PROFILE = SAMPLES / "weight_reload" / "summary.json"


def test_a_text_field_is_shown_as_it_is():
    a = analyze(PROFILE)
    assert identity(a, "instance_type") == a.info["instance_type"] == "trn1.2xlarge"


def test_a_metric_is_shown_with_its_unit_and_text_wins():
    a = analyze(PROFILE)
    ranks = Metric(name="world_size", value=8.0, unit="count", source="derived")
    counted = replace(a, metrics={**a.metrics, "world_size": ranks})
    assert identity(counted, "world_size") == "8"
    assert identity(counted, "total_time") == "406.3 µs"  # seconds, as the report shows them
    assert identity(replace(counted, info={**counted.info, "world_size": "eight"}), "world_size") == "eight"


def test_an_absent_or_unavailable_field_is_none():
    a = analyze(PROFILE)
    unknown = Metric(name="world_size", value=None, unit="count", source="derived")
    assert identity(a, "no_such_field") is None
    assert identity(replace(a, metrics={**a.metrics, "world_size": unknown}), "world_size") is None

"""How a saved analysis's schema problems are said: the field as the file names it, the problem in words."""

import math

import pytest

from advisor.core.schema_errors import field_problem, non_finite_problem


@pytest.mark.parametrize(("message", "data", "said"), [
    ("Expected `float` <= 1.0 - at `$.findings[0].estimated_speedup`", {"findings": [{"estimated_speedup": 7.5}]},
     "findings[0].estimated_speedup: 7.5 is out of range 0..1 (a share of time)"),
    ("Expected `float` >= 0.0 - at `$.bounds[1].value`", {"bounds": [{}, {"value": -2}]},
     "bounds[1].value: -2 is out of range 0..1 (a share of time)"),
    ("Expected `float` >= 0.0 - at `$.bounds[0].value`", {"bounds": [{"value": math.nan}]},
     "bounds[0].value: value NaN is not a finite number"),
    ("Number out of range - at `$.metrics[...].value`", {"metrics": {"t": {"value": math.inf}}},
     "metrics.t.value: expected a finite number, got Infinity"),
])
def test_range_problems_are_said_as_what_they_are(message, data, said):
    """`estimated_speedup: 7.5` said "expected a finite number": it is one, but no share of time."""
    assert field_problem(message, data) == said


@pytest.mark.parametrize(("data", "said"), [
    ({"metrics": {"total_time": {"value": math.nan}}}, "metrics.total_time.value: value NaN is not a finite number"),
    ({"a": [1, {"b c": [2.0, -math.inf]}]}, 'a[1]["b c"][1]: value -Infinity is not a finite number'),
    ({"x": math.inf, "y": math.nan}, "x: value Infinity is not a finite number"),  # the first, in the file's order
    ({"metrics": {"t": {"value": 1e300}}}, None),
])
def test_the_first_non_finite_value_is_named(data, said):
    assert non_finite_problem(data) == said

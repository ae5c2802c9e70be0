"""A kind's field conventions (issue 24 item 8: mutation 11 of the review, `percent_scale` ignored, survived the
whole suite): a `*_percent` value that arrives without a printed unit follows the kind's scale."""

import pytest

from advisor.kinds import get as get_kind
from advisor.kinds.conventions import conventions, normalise


def test_a_percent_without_a_unit_follows_the_kinds_scale():
    ncu = conventions(get_kind("ncu"))  # Nsight Compute writes shares as 0..100
    assert ncu.percent_scale == 100
    found = normalise({"achieved_occupancy_percent": 84.0}, ncu)
    assert found.values["achieved_occupancy_percent"] == pytest.approx(0.84)
    assert found.units["achieved_occupancy_percent"] == "fraction"
    neuron = conventions(get_kind("neuron"))  # Neuron's are already fractions 0..1
    assert neuron.percent_scale == 1
    assert normalise({"dma_active_time_percent": 0.84}, neuron).values["dma_active_time_percent"] == pytest.approx(0.84)


def test_a_printed_unit_wins_over_the_scale():
    ncu = conventions(get_kind("ncu"))
    found = normalise({"achieved_occupancy_percent": 84.0}, ncu, {"achieved_occupancy_percent": "%"})
    assert found.values["achieved_occupancy_percent"] == pytest.approx(0.84)

"""Units per kind: a pack's inputs and metrics may have the generic units and those its kinds add in their
data/conventions.yaml `units:` (Nsight Compute's warps, SMs); a pack of another kind may not."""

import pytest

import advisor.kinds
from advisor.core.errors import AdvisorError
from advisor.core.units import UNITS
from advisor.kinds.base import ProfileKind
from advisor.kinds.conventions import conventions
from advisor.packs.load import load_packs, pack_units
from advisor.packs.model import PackError

GPU_UNITS = ("warps", "blocks", "registers", "threads", "inst", "inst/cycle", "SMs", "sectors", "waves")


def _pack(kinds: str | None, unit: str) -> str:
    return ("pack: org\nversion: 1.0.0\n" + (f"kinds: [{kinds}]\n" if kinds else "")
            + f"inputs:\n  - name: resident_groups\n    unit: {unit}\n"
            + "rules:\n  - id: T001\n    name: few-groups\n    title: Few groups\n    severity: low\n"
            + "    when: resident_groups < 2\n    message: Only {resident_groups}.\n    recommendation: More.\n")


def test_gpu_units_are_the_nsight_compute_kinds_not_core():
    assert not set(GPU_UNITS) & set(UNITS)
    assert set(GPU_UNITS) <= set(conventions(advisor.kinds.get("ncu")).units.names())


@pytest.mark.parametrize("kinds", ["ncu", None])
def test_a_pack_of_nsight_compute_or_of_every_kind_may_count_warps(write, kinds):
    ruleset = load_packs([write("org.yaml", _pack(kinds, "warps"))], builtin=False)
    assert ruleset.inputs["resident_groups"].unit == "warps"


@pytest.mark.parametrize("kinds", ["rbln", "neuron"])
def test_a_pack_of_another_kind_may_not(write, kinds):
    with pytest.raises(PackError) as info:
        load_packs([write("org.yaml", _pack(kinds, "warps"))], builtin=False)
    (problem,) = info.value.problems
    assert "input 'resident_groups': unknown unit 'warps'" in problem
    assert "cycles" in problem and "SMs" not in problem  # the units this pack may use


def test_an_unknown_unit_is_refused_for_every_kind(write):
    with pytest.raises(PackError) as info:
        load_packs([write("org.yaml", _pack(None, "warp"))], builtin=False)
    assert "unknown unit 'warp'; use one of s, bytes," in info.value.problems[0]


@pytest.mark.parametrize("kind", advisor.kinds.available(), ids=lambda k: k.name)
def test_every_unit_a_kinds_data_gives_is_one_its_packs_may_use(kind):
    """The machine units its conventions convert to and its hardware table's figures have."""
    conv = conventions(kind)
    given = {*(unit for _, unit in conv.text_units.values()), *(unit for _, unit in conv.suffix_units),
             *(unit for _, unit in conv.unit_fixes), *(kind.data("hardware.yaml").get("units") or {}).values()}
    allowed = pack_units((kind.name,))
    assert {unit for unit in given if unit not in allowed} == set()


@pytest.mark.parametrize(("units", "problem"), [
    ("units: {s: counted}", "unit 's' is a generic unit already; a kind may only add new ones"),
    ("units: {widgets: shown}", "unit 'widgets': display 'shown' is not one of counted"),
    ("units: [widgets]", "`units:` must map each unit the kind adds to how it is shown"),
])
def test_a_kinds_units_that_cannot_be_are_refused_naming_its_file(tmp_path, units, problem):
    (tmp_path / "conventions.yaml").write_text(units + "\n")
    kind = ProfileKind(name="gadget", title="Gadget", formats="none", package="gadget_not_imported", folder=tmp_path)
    with pytest.raises(AdvisorError) as info:
        conventions(kind)
    assert info.value.where == str(tmp_path / "conventions.yaml")
    assert info.value.problem == f"profile kind 'gadget': {problem}"

"""The files of a capture folder in natural order, with a bound on the folder's size (advisor/inputs/folders.py,
shared by the RBLN and torch kinds' rank folders)."""

import pytest

from advisor.core.errors import AdvisorError
from advisor.inputs.folders import listing


def test_natural_order_and_only_the_accepted_names(tmp_path):
    for name in ("rank10.json", "rank2.json", "Rank1.json", "notes.md"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "rank3.json").mkdir()  # a folder is not a trace, whatever its name
    names = [p.name for p in listing(tmp_path, lambda n: n.endswith(".json"))]
    assert names == ["Rank1.json", "rank2.json", "rank10.json"]


def test_a_runaway_folder_is_refused_before_it_is_listed_whole(tmp_path):
    for i in range(5):
        (tmp_path / f"r{i}.json").write_text("{}")
    with pytest.raises(AdvisorError, match="more than 4 entries: not a folder of rank traces"):
        listing(tmp_path, lambda n: True, limit=4)


def test_an_unreadable_folder_is_one_error(tmp_path):
    with pytest.raises(AdvisorError) as info:
        listing(tmp_path / "absent", lambda n: True)
    assert info.value.where == str(tmp_path / "absent")

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


def test_a_symlink_loop_named_like_a_trace_names_the_link_not_the_folder(tmp_path):
    """Safety issue: `rank2.json -> rank2.json` made the whole folder the error ('Too many levels of symbolic
    links'), as if the folder itself could not be read."""
    (tmp_path / "rank0.json").write_text("{}")
    loop = tmp_path / "rank2.json"
    loop.symlink_to(loop.name)
    with pytest.raises(AdvisorError) as info:
        listing(tmp_path, lambda n: n.endswith(".json"))
    assert (info.value.where, info.value.problem) == (str(loop), "Too many levels of symbolic links")


def test_a_symlink_loop_of_another_name_is_not_looked_at(tmp_path):
    (tmp_path / "rank0.json").write_text("{}")
    (tmp_path / "notes.md").symlink_to("notes.md")
    assert [p.name for p in listing(tmp_path, lambda n: n.endswith(".json"))] == ["rank0.json"]


def test_a_symlink_loop_in_a_rank_folder_is_one_line_naming_it(tmp_path, capsys):
    import shutil

    from tests_support import SAMPLES

    from advisor.cli import main

    folder = tmp_path / "ranks"
    shutil.copytree(SAMPLES / "torch_ddp_imbalance", folder)
    loop = folder / "rank2.pt.trace.json.gz"
    loop.symlink_to(loop.name)
    assert main(["report", str(folder), "-o", str(tmp_path / "r.md")]) == 2
    assert capsys.readouterr().err == f"advisor: error: {loop}: Too many levels of symbolic links\n"

"""Safety issue item 10: a folder is read as one profile kind, so one holding rank files of several kinds is
refused, naming the kinds and their files, never reported as one kind with the others dropped unmentioned."""

import shutil

import pytest
from tests_support import SAMPLES, one_line_error

from advisor.core.errors import AdvisorError
from advisor.kinds import detect


def _mixed_folder(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for path in [*(SAMPLES / "rbln_ranks").glob("*.pb"), *(SAMPLES / "torch_ddp_imbalance").glob("*.gz")]:
        shutil.copy(path, folder / path.name)
    return folder


def test_a_folder_of_rank_files_of_two_kinds_is_refused_naming_the_kinds_and_files(tmp_path, capsys):
    """4 RBLN and 2 torch rank files gave an RBLN report with the torch files dropped unmentioned."""
    folder = _mixed_folder(tmp_path)
    assert one_line_error(capsys, folder, "-o", str(tmp_path / "r.md")) == (
        f"advisor: error: {folder}: rank files of 2 profile kinds, and a folder is read as one: "
        "Rebellions RBLN profiler (rank0.pb, rank1.pb, rank2.pb and 1 more), PyTorch profiler (Kineto) "
        "(rank0.pt.trace.json.gz, rank1.pt.trace.json.gz); give each kind a folder of its own")
    assert not (tmp_path / "r.md").exists()


def test_one_neuron_rank_among_other_kinds_is_no_neuron_report(tmp_path):
    """With a Neuron rank file too, the folder was reported as 'one Neuron rank'."""
    folder = _mixed_folder(tmp_path)
    shutil.copy(SAMPLES / "multi_rank" / "profile_rank_0.json", folder)
    with pytest.raises(AdvisorError) as caught:
        detect(folder)
    assert caught.value.where == str(folder)
    assert caught.value.problem.startswith("rank files of 3 profile kinds, and a folder is read as one: AWS Neuron "
                                           "(profile_rank_0.json), Rebellions RBLN profiler (")


def test_the_issues_four_and_four_name_what_is_wrong_with_the_torch_files(tmp_path):
    """4 torch files from two captures (rank 0 twice) and 4 RBLN ones: the torch part says why it is no set."""
    folder = _mixed_folder(tmp_path)
    for path in (SAMPLES / "torch_sampled_ranks").glob("*.gz"):
        shutil.copy(path, folder / path.name)
    with pytest.raises(AdvisorError) as caught:
        detect(folder)
    assert caught.value.problem.endswith("PyTorch profiler (Kineto) (rank 0 twice: rank0.pt.trace.json.gz and "
                                         "rank-0.json.gz); give each kind a folder of its own")


def test_a_folder_of_one_kind_with_other_files_is_still_read(tmp_path):
    """Notes, READMEs and files no kind reads do not make a folder mixed."""
    folder = tmp_path / "ranks"
    shutil.copytree(SAMPLES / "rbln_ranks", folder)
    (folder / "notes.json").write_text('{"run": 3}')
    assert detect(folder).name == "rbln"

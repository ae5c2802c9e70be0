"""Issue 33 §1: the notebook API keeps every promise the CLI keeps about its output. Each case below is one
refusal; it is made once through `advisor report`/`advisor compare -o` and once through the API's `.save()`,
and both must refuse with the same words, before anything is written, every input unchanged."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests_support import SAMPLES

import advisor
from advisor.cli import main
from advisor.core.errors import AdvisorError

MP2 = SAMPLES / "mp2_energy" / "summary.json"
FIXED = SAMPLES / "weight_reload_fixed" / "summary.json"
TORCH = SAMPLES / "torch_a100_cold_start" / "a100_alexnet_cold_start.json.gz"


@dataclass(frozen=True)
class Case:
    """`cli` is the command line (after `advisor`), `api` the same request made in Python; both run in a folder
    `setup` laid out, with paths relative to it."""

    name: str
    setup: Callable[[Path], None]
    cli: list[str]
    api: Callable[[], object]
    words: str  # what both refusals say


def _copy(source: Path, *names: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for name in names:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, folder / name)
    return setup


def _both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for one in setups:
            one(folder)
    return setup


def _ranks(folder: Path) -> None:
    shutil.copytree(SAMPLES / "multi_rank", folder / "ranks")


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "pipe.md")


def _context(folder: Path) -> None:
    shutil.copyfile(SAMPLES / "mp2_energy" / "investigation.yaml", folder / "ctx.json")  # any name is read


CASES = [
    Case("a profile saved onto itself", _copy(MP2, "p.json"), ["report", "p.json", "-o", "p.json"],
         lambda: advisor.analyze("p.json").save("p.json"), "names an input file; refusing to overwrite it"),
    Case("a gzip'd torch trace saved onto itself", _copy(TORCH, "t.json"), ["report", "t.json", "-o", "t.json"],
         lambda: advisor.analyze("t.json").save("t.json"), "names an input file; refusing to overwrite it"),
    Case("a saved analysis saved onto itself", _copy(MP2, "p.json"),
         ["report", "p.json", "-o", "p.json", "--format", "json"],
         lambda: advisor.analyze("p.json").save("p.json", format="json"), "names an input file"),
    Case("a comparison saved onto its first input", _both(_copy(MP2, "a.json"), _copy(FIXED, "b.json")),
         ["compare", "a.json", "b.json", "-o", "a.json"],
         lambda: advisor.compare(["a.json", "b.json"]).save("a.json"), "names an input file"),
    Case("a comparison saved onto its last input", _both(_copy(MP2, "a.json"), _copy(FIXED, "b.json")),
         ["compare", "a.json", "b.json", "-o", "b.json"],
         lambda: advisor.compare(["a.json", "b.json"]).save("b.json"), "names an input file"),
    Case("charts into the folder that holds the input", _copy(MP2, "r_files/in.png"),
         ["report", "r_files/in.png", "--kind", "neuron", "-o", "r.md"],
         lambda: advisor.analyze("r_files/in.png", kind="neuron").save("r.md"), "its chart folder r_files holds"),
    Case("an HTML report's folder holds the input", _copy(MP2, "r_files/in.json"),
         ["report", "r_files/in.json", "-o", "r.html"],
         lambda: advisor.analyze("r_files/in.json").save("r.html"), "its chart folder r_files holds"),
    Case("a report inside the rank folder read", _ranks, ["report", "ranks", "-o", "ranks/report.md"],
         lambda: advisor.analyze("ranks").save("ranks/report.md"), "a folder this run reads"),
    Case("a report onto a rank file", _ranks, ["report", "ranks", "-o", "ranks/profile_rank_0.json"],
         lambda: advisor.analyze("ranks").save("ranks/profile_rank_0.json"), "a folder this run reads"),
    Case("a report onto the investigation context", _both(_copy(MP2, "p.json"), _context),
         ["report", "p.json", "--context", "ctx.json", "-o", "ctx.json"],
         lambda: advisor.analyze("p.json", context="ctx.json").save("ctx.json"), "names an input file"),
    Case("a report onto a folder", _both(_copy(MP2, "p.json"), lambda f: (f / "out.md").mkdir()),
         ["report", "p.json", "-o", "out.md"], lambda: advisor.analyze("p.json").save("out.md"), "is a folder"),
    Case("a report into a folder that does not exist", _copy(MP2, "p.json"),
         ["report", "p.json", "-o", "no/r.md"], lambda: advisor.analyze("p.json").save("no/r.md"), "does not exist"),
    Case("a report onto a FIFO", _both(_copy(MP2, "p.json"), _fifo),
         ["report", "p.json", "-o", "pipe.md"], lambda: advisor.analyze("p.json").save("pipe.md"), "pipe.md"),
    Case("an ending no format has", _copy(MP2, "p.json"), ["report", "p.json", "-o", "r.docx"],
         lambda: advisor.analyze("p.json").save("r.docx"), "cannot tell the output format from '.docx'"),
]


def _tree(folder: Path) -> dict[str, bytes | str]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else "other")
            for p in sorted(folder.rglob("*")) if not p.is_dir()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_api_refuses_what_the_cli_refuses_in_the_same_words(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    case.setup(tmp_path)
    before = _tree(tmp_path)
    assert main(case.cli) == 2
    cli_line = capsys.readouterr().err.strip()
    assert cli_line.startswith("advisor: error: ") and "\n" not in cli_line and case.words in cli_line
    assert _tree(tmp_path) == before
    with pytest.raises(AdvisorError) as refused:
        case.api()
    # one implementation, one message (the format option is named as each surface spells it)
    assert f"advisor: error: {refused.value}" == cli_line.replace("--format", "format=")
    assert _tree(tmp_path) == before  # nothing written, no input touched


def test_compare_takes_a_list_not_one_path_and_labels_one_per_input(tmp_path):
    with pytest.raises(AdvisorError, match=r"a list of two or more inputs, not str 'a\.json'"):
        advisor.compare("a.json")
    with pytest.raises(AdvisorError, match="at least two inputs"):
        advisor.compare([MP2])
    with pytest.raises(AdvisorError, match="1 labels for 2 inputs"):
        advisor.compare([MP2, FIXED], labels=["x"])


def test_save_writes_where_nothing_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(MP2, "p.json")
    result = advisor.analyze("p.json")
    assert result.save("r.md") == Path("r.md")
    assert Path("r.md").read_text(encoding="utf-8").startswith("# Profile findings")
    assert any(Path("r_files").glob("*.png"))
    assert Path("p.json").read_bytes() == MP2.read_bytes()

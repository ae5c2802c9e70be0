"""The worked example of docs/writing-a-kind.md: qtrace (tests/kinds/qtrace_kind/), a fifth kind with an event
trace, declared under the `advisor.kinds` entry-point group as an organisation's package would be, runs end to end;
and the page quotes its files as they are, so the docs cannot drift from a kind that works."""

import json
import re
from pathlib import Path

import pytest
from tests_support import ROOT

from advisor.cli import main

HERE = Path(__file__).parent
KIND = HERE / "qtrace_kind"
SAMPLE = HERE / "sample.qtrace.csv"
PAGE = ROOT / "docs" / "writing-a-kind.md"


@pytest.fixture
def qtrace(tmp_path, monkeypatch):
    info = tmp_path / "site" / "qtrace_kind-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: qtrace-kind\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[advisor.kinds]\nqtrace = qtrace_kind\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.syspath_prepend(str(HERE))
    return tmp_path


def test_the_kind_honours_the_contract(qtrace):
    from advisor import kinds

    kinds.check(kinds.get("qtrace"))


def test_the_report_has_the_shared_trace_blocks_and_the_kinds_rule(qtrace):
    out = qtrace / "findings.md"
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 0
    text = out.read_text()
    assert "(qtrace-csv) · Q-1 · report by advisor" in text
    assert "Q-1 accelerator — chosen by device Q-1" in text
    # copies with no kernel beside them: 0-4 µs and 7-9 µs of the 16 µs run
    assert "`exposed-copies`" in text and "for 37.50 % of the run (over 20.00 %)" in text
    assert "estimated gain up to 37.50 % of the traced run's time" in text
    assert "## Utilisation over time" in text and "Busy share of kernels and copies per time bin." in text
    assert "## Copy sizes" in text and "| 2 KiB – 4 KiB | 1 | 33.33 % |" in text and "| ≥ 1 MiB | 1 | 33.33 % |" in text
    assert "Time in which nothing runs on any queue, longest first." in text
    assert "| 12 µs | 2 µs | 12.50 % |" in text and "| 16 µs |" not in text  # the one idle gap: 12-14 µs


def test_the_analysis_keeps_the_trace_and_re_renders(qtrace):
    saved = qtrace / "analysis.json"
    assert main(["report", str(SAMPLE), "-o", str(saved)]) == 0
    data = json.loads(saved.read_text())
    assert data["kind"] == "qtrace" and data["packs"] == {"qtrace": "1.0.0"}
    assert data["metrics"]["copy_exposed_fraction"]["value"] == pytest.approx(6000 / 16000)
    assert data["metrics"]["kernel_busy_fraction"]["value"] == pytest.approx(8000 / 16000)
    (qtrace / "again").mkdir()
    (qtrace / "first").mkdir()
    assert main(["report", str(saved), "-o", str(qtrace / "again" / "r.md")]) == 0
    assert main(["report", str(SAMPLE), "-o", str(qtrace / "first" / "r.md")]) == 0
    body = [(qtrace / side / "r.md").read_text().split("## TL;DR", 1)[1] for side in ("again", "first")]
    assert body[0] == body[1]


def test_the_page_quotes_every_file_of_the_kind_as_it_is():
    page = PAGE.read_text(encoding="utf-8")
    quoted = dict(re.findall(r"^`([\w/.]+)`:\n\n```\w*\n(.*?)^```$", page, re.M | re.S))
    files = sorted(str(p.relative_to(KIND)) for p in KIND.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert sorted(quoted) == files
    for name in files:
        assert quoted[name] == (KIND / name).read_text(encoding="utf-8"), name

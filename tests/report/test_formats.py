"""Every sample renders in every format; the PDF carries the key numbers as text."""

import io
from pathlib import Path

import pytest
from pypdf import PdfReader
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.report.render import render

PROFILES = sorted(p for p in SAMPLES.glob("*/summary*.*") if p.suffix in (".json", ".txt"))
PROFILES.append(SAMPLES / "legacy_trace" / "profile.json")


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_format(path, tmp_path):
    analysis = analyze(path)
    md = render(analysis, "md", tmp_path / "r.md")
    assert md.main.startswith(b"# ") and md.files
    for relative in md.files:
        assert f"]({relative})".encode() in md.main  # every chart is linked, relatively
        assert relative.startswith("r_files/") and md.files[relative].startswith(b"\x89PNG")
    html = render(analysis, "html", tmp_path / "r.html").main.decode()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html
    assert "src=\"http" not in html and "href=\"http" not in html  # self-contained
    pdf = render(analysis, "pdf", tmp_path / "r.pdf").main
    assert pdf.startswith(b"%PDF")


def pdf_text(data: bytes) -> str:
    return " ".join(" ".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages).split())


def test_pdf_has_the_key_numbers_of_seed_002():
    analysis = analyze(SAMPLES / "mp2_energy" / "summary.json",
                       AnalyzeOptions(context=SAMPLES / "mp2_energy" / "investigation.yaml"))
    text = pdf_text(render(analysis, "pdf", Path("findings.pdf")).main)
    for needle in ("_mp2_energy_kernel profile findings (#33)", "Vector Engine: 96.45 % active", "30.79 GB/s",
                   "6.58 GB", "matches", "1.48×", "ceiling", "1.54×", "unreachable", "falsified",
                   "Next steps", "Page 1 of"):
        assert needle in text, needle


def test_letter_page_size():
    analysis = analyze(SAMPLES / "compute_bound_tuned" / "summary.json")
    reader = PdfReader(io.BytesIO(render(analysis, "pdf", Path("r.pdf"), page_size="letter").main))
    box = reader.pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (612, 792)
    a4 = PdfReader(io.BytesIO(render(analysis, "pdf", Path("r.pdf")).main)).pages[0].mediabox
    assert (round(float(a4.width)), round(float(a4.height))) == (595, 842)


def test_pdf_is_byte_identical_with_source_date_epoch(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    analysis = analyze(SAMPLES / "weight_reload" / "summary.json")
    assert render(analysis, "pdf", Path("r.pdf")).main == render(analysis, "pdf", Path("r.pdf")).main


def test_html_escapes_profile_text(write):
    path = write("s.json", {"total_time": 0.1, "hbm_read_bytes": 1e6, "instance_type": "<script>alert(1)</script>",
                            "runtime_version": "**bold** [x](javascript:alert(1))"})
    html = render(analyze(path), "html", Path("r.html")).main.decode()
    assert "<script>alert" not in html and 'href="javascript' not in html and "<strong>bold" not in html
    assert "&lt;script&gt;" in html

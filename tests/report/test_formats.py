"""Every sample renders in every format; the PDF carries the key numbers as text.

PDFs are the slow part (WeasyPrint), so each sample is analysed once and each PDF rendered once per
session (`renders`), and the tests share the bytes. Every cached PDF is rendered with
SOURCE_DATE_EPOCH set, so it can stand for the first of the byte-identity test's two renders."""

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.core.model import Analysis
from advisor.report.render import render

PROFILES = sorted(p for p in SAMPLES.glob("*/summary*.*") if p.suffix in (".json", ".txt"))
PROFILES.append(SAMPLES / "legacy_trace" / "profile.json")
EPOCH = "1700000000"
MP2 = SAMPLES / "mp2_energy" / "summary.json"


class Renders:
    """Analyses and PDF bytes by (profile, context[, page size]), each made on first use."""

    def __init__(self) -> None:
        self._analyses: dict[tuple[Path, Path | None], Analysis] = {}
        self._pdfs: dict[tuple[Path, Path | None, str], bytes] = {}

    def analysis(self, path: Path, context: Path | None = None) -> Analysis:
        if (path, context) not in self._analyses:
            self._analyses[path, context] = analyze(path, AnalyzeOptions(context=context))
        return self._analyses[path, context]

    def pdf(self, path: Path, context: Path | None = None, page_size: str = "a4") -> bytes:
        if (path, context, page_size) not in self._pdfs:
            analysis = self.analysis(path, context)
            with pytest.MonkeyPatch.context() as env:
                env.setenv("SOURCE_DATE_EPOCH", EPOCH)
                self._pdfs[path, context, page_size] = render(analysis, "pdf", Path("r.pdf"), page_size=page_size).main
        return self._pdfs[path, context, page_size]


@pytest.fixture(scope="session")
def renders() -> Renders:
    return Renders()


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_format(path, tmp_path, renders):
    analysis = renders.analysis(path)
    md = render(analysis, "md", tmp_path / "r.md")
    assert md.main.startswith(b"# ") and md.files
    for relative in md.files:
        assert f"]({relative})".encode() in md.main  # every chart is linked, relatively
        assert relative.startswith("r_files/") and md.files[relative].startswith(b"\x89PNG")
    html = render(analysis, "html", tmp_path / "r.html").main.decode()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html
    assert "src=\"http" not in html and "href=\"http" not in html  # self-contained
    assert renders.pdf(path).startswith(b"%PDF")


def pdf_text(data: bytes) -> str:
    return " ".join(" ".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages).split())


def test_pdf_has_the_key_numbers_of_seed_002(renders):
    text = pdf_text(renders.pdf(MP2, context=SAMPLES / "mp2_energy" / "investigation.yaml"))
    for needle in ("_mp2_energy_kernel profile findings (#33)", "Vector Engine: 96.45 % active", "30.79 GB/s",
                   "6.58 GB", "matches", "1.48×", "ceiling", "1.54×", "unreachable", "falsified",
                   "Next steps", "Page 1 of"):
        assert needle in text, needle


def test_a_findings_condition_spans_the_text_width_not_its_evidence_tables(renders):
    """The condition is the evidence table's caption, and a caption is as wide as its table: over a two-column
    table it wrapped at about 40 characters (seven lines for one condition). Captioned tables take the text width."""
    firsts = [line for page in PdfReader(io.BytesIO(renders.pdf(MP2))).pages
              for line in (page.extract_text() or "").splitlines() if line.startswith("Condition: ")]
    assert firsts and all(len(line) >= 70 for line in firsts), firsts


def test_letter_page_size(renders):
    path = SAMPLES / "compute_bound_tuned" / "summary.json"
    box = PdfReader(io.BytesIO(renders.pdf(path, page_size="letter"))).pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (612, 792)
    a4 = PdfReader(io.BytesIO(renders.pdf(path))).pages[0].mediabox
    assert (round(float(a4.width)), round(float(a4.height))) == (595, 842)


def test_pdf_is_byte_identical_with_source_date_epoch(monkeypatch, renders):
    """Two renders of one analysis: the session's cached one (made earlier, also with the epoch set)
    and a fresh one here."""
    path = SAMPLES / "weight_reload" / "summary.json"
    cached = renders.pdf(path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    fresh = render(renders.analysis(path), "pdf", Path("r.pdf")).main
    assert fresh.startswith(b"%PDF") and fresh == cached


def test_html_escapes_profile_text(write):
    path = write("s.json", {"total_time": 0.1, "hbm_read_bytes": 1e6, "instance_type": "<script>alert(1)</script>",
                            "runtime_version": "**bold** [x](javascript:alert(1))"})
    html = render(analyze(path), "html", Path("r.html")).main.decode()
    assert "<script>alert" not in html and 'href="javascript' not in html and "<strong>bold" not in html
    assert "&lt;script&gt;" in html


# One profile of each kind and shape besides the summaries: the ncu kernel ranking (eleven columns), RBLN
# traces, a Parquet folder, per-rank files.
PAGE_FIT = [*PROFILES, SAMPLES / "ncu_multi_kernel" / "details.csv", SAMPLES / "ncu_seed004" / "details.csv",
            SAMPLES / "rbln_rebel100" / "trace.pb", SAMPLES / "rbln_atom_cnn" / "trace.pb",
            SAMPLES / "explorer_parquet", SAMPLES / "multi_rank"]
MARGIN_PT = 16 / 25.4 * 72  # the template's left and right page margins


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="needs pdftotext (poppler-utils; .ci/run installs it)")
@pytest.mark.parametrize("path", PAGE_FIT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_word_of_the_pdf_lies_inside_the_text_width(path, tmp_path, renders):
    """What a reader of the PDF would see first: a table cut off at the paper's edge. Tables that fit
    their page unbroken lose `overflow-wrap: anywhere` (report/table_fit.py); this holds them to it."""
    pdf = tmp_path / "r.pdf"
    pdf.write_bytes(renders.pdf(path))
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    width = float(re.search(r'<page width="([\d.]+)"', boxes).group(1))
    words = [(float(x_min), float(x_max), word) for x_min, x_max, word
             in re.findall(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>', boxes)]
    assert words
    outside = [word for x_min, x_max, word in words if x_min < MARGIN_PT - 1 or x_max > width - MARGIN_PT + 1]
    assert not outside, f"{len(outside)} words outside the text width, e.g. {outside[:5]}"

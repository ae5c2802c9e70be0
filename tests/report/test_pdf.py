"""The PDF's speed measures (issue 15) change how it is made, never what it shows: the library lookup
answers as ctypes does, the opaque chart PNGs have the pixels of the transparent ones, and tables keep
to the page. The latency itself is measured by benchmarks/pdf_latency.py, not here."""

import ctypes.util
import io
import shutil
import sys
from pathlib import Path

import pytest
from PIL import Image
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.report import charts
from advisor.report.build import build_document
from advisor.report.document import Chart, Document, Section, Table
from advisor.report.html import LONG_TOKEN, render_html
from advisor.report.pdf import _loader_cache

MP2 = SAMPLES / "mp2_energy"


@pytest.fixture(scope="module")
def mp2_specs() -> list[dict]:
    doc = build_document(analyze(MP2 / "summary.json", AnalyzeOptions(context=MP2 / "investigation.yaml")))
    specs = [b.spec for s in doc.sections for b in s.blocks if isinstance(b, Chart)]
    assert len(specs) == 3  # engines, memory traffic, Amdahl
    return specs


@pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("ldconfig", path="/sbin:/usr/sbin"),
                    reason="the one-listing lookup is for glibc Linux")
def test_library_lookup_answers_as_ctypes_does():
    cache = _loader_cache()
    assert cache is not None
    # the names WeasyPrint tries, found and missing, and two any Linux has
    for name in ("gobject-2.0", "pango-1.0", "harfbuzz", "harfbuzz-subset", "fontconfig", "pangoft2-1.0",
                 "libgobject-2.0-0", "harfbuzz-vector", "c", "m"):
        assert cache.get(name) == ctypes.util.find_library(name), name
    assert cache["c"] == "libc.so.6"


def test_opaque_png_has_the_same_pixels_without_alpha(mp2_specs):
    for spec in mp2_specs:
        with_alpha = Image.open(io.BytesIO(charts.png(spec, dpi=200)))
        opaque = Image.open(io.BytesIO(charts.png(spec, dpi=200, opaque=True)))
        assert (with_alpha.mode, opaque.mode) == ("RGBA", "RGB")
        assert opaque.size == with_alpha.size and opaque.size[0] == 1280  # 6.4 in at 200 dpi
        assert opaque.tobytes() == with_alpha.convert("RGB").tobytes()


def _table_html(headers: tuple[str, ...], row: tuple[str, ...], embed: str = "png") -> str:
    return render_html(Document("t", (), (Section("s", (Table(headers, (row,)),)),)), embed=embed)


def test_only_cells_with_a_long_token_may_wrap_anywhere():
    hash_id = "n_" + "0123456789abcdef" * 3  # 50 characters without a break
    row = (hash_id, "`vector_engine_active_time_percent`", "1.5 ms")
    assert LONG_TOKEN.search(hash_id) and not LONG_TOKEN.search("total_time")
    for html, soft in ((_table_html(("Entry", "Metric", "Time"), row, embed="svg"), "<wbr>"),  # a screen's width
                       (_table_html(("Entry", "Metric", "Time", "A", "B"), (*row, hash_id, hash_id)), "\u200b")):
        # a wrapping cell breaks after a separator first (the PDF's zero-width space stays out of its text)
        assert f'<td class="left wrap">n_{soft}{hash_id[2:]}</td>' in html
        metric = soft.join(("vector_", "engine_", "active_", "time_", "percent"))
        # 33 characters, each run between separators short: no `anywhere` (its per-character breaks are slow)
        assert f'<td class="left"><code>{metric}</code></td>' in html
        assert '<td class="left">1.5 ms</td>' in html


def test_a_wrapping_cell_breaks_identifiers_only_after_their_separators(tmp_path):
    """Issue 36: the PDF's time budget broke `busiest_unit_activ` / `e_time_percent` and `memory_fix_recoverabl` /
    `e`. Every line of the formula column now ends at a space or after a separator, numbers and units whole."""
    from pypdf import PdfReader

    from advisor.report.render import render

    pdf = render(analyze(SAMPLES / "multi_core" / "summary.json"), "pdf", Path("r.pdf")).main
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    assert "\u200b" not in text  # a name copied from the PDF has no hidden character
    for broken in ("activ\ne_", "recoverabl\ne", "percen\nt", "56.\n26", "GB/\ns"):
        assert broken not in text
    assert "busiest_unit_active_time_" in text.replace("\n", "")


def test_a_pdf_table_that_fits_its_page_unbroken_wraps_nowhere():
    """Three columns whose words fit A4 whole (a 30-character id, a 33-character metric): no cell pays for
    `anywhere`. With a 50-character id the estimate (526 pt against 429) asks for it, as above."""
    html = _table_html(("Entry", "Metric", "Time"), ("n_" + "0123456789abcdef0123456789ab",
                                                      "`vector_engine_active_time_percent`", "1.5 ms"))
    assert 'wrap">' not in html and '<td class="left"><code>vector_engine_active_time_percent</code></td>' in html


def test_a_table_of_nine_columns_or_more_is_set_small_and_scrolls_on_a_phone():
    assert '<div class="table-scroll"><table>' in _table_html(("a",) * 8, ("1",) * 8)
    assert '<div class="table-scroll"><table class="wide">' in _table_html(("a",) * 11, ("1",) * 11)
    css = _table_html(("a",), ("1",))
    assert "@media screen { .table-scroll { overflow-x: auto; } }" in css  # never clipped in print
    assert "td:first-child" not in css and "overflow-wrap: anywhere; }" not in css.split("td.wrap")[0]


def test_the_ncu_kernel_ranking_fits_the_pdf_page(tmp_path):
    """Eleven columns: before, the PDF cut the table off after "Share of run" and gave each row a page."""
    from pypdf import PdfReader

    from advisor.report.render import render

    pdf = render(analyze(SAMPLES / "ncu_multi_kernel" / "details.csv"), "pdf", Path("r.pdf")).main
    reader = PdfReader(io.BytesIO(pdf))
    width = float(reader.pages[0].mediabox.width)
    seen: list[tuple[str, float]] = []
    for page in reader.pages[:2]:
        page.extract_text(visitor_text=lambda text, cm, tm, *_: seen.append((text, tm[4] * cm[0] + cm[4])))
    right_edges = [x for text, x in seen if text.strip() in ("Root cause", "Waves per SM", "Achieved occu-")]
    assert right_edges and max(right_edges) < width - 40  # the last columns start inside the right margin

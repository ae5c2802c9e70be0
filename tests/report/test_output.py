"""Output safety: atomic writes, no symlink escapes, escaping, and a PDF renderer that never fetches."""

import json

import pytest
from conftest import run_cli
from markdown_it import MarkdownIt
from tests_support import SAMPLES

from advisor.core.errors import AdvisorError
from advisor.report.output import check_output, write_report
from advisor.report.pdf import _fetcher

MP2 = SAMPLES / "mp2_energy" / "summary.json"
HOSTILE = "trn1.2xl | <img src=x onerror=alert(1)> [click](http://evil.example) `code` **bold**"


def test_failed_run_keeps_the_previous_report(tmp_path):
    out = tmp_path / "r.md"
    out.write_text("previous report\n")
    done = run_cli("report", tmp_path / "missing.json", "-o", out)
    assert done.returncode == 2
    assert out.read_text() == "previous report\n"


def test_no_temporary_files_left(tmp_path):
    assert run_cli("report", MP2, "-o", tmp_path / "r.md").returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md", "r_files"]


def test_symlinked_chart_folder_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "r_files").symlink_to(elsewhere)
    done = run_cli("report", MP2, "-o", out_dir / "r.md")
    assert done.returncode == 2 and "not a plain folder" in done.stderr
    assert list(elsewhere.iterdir()) == [] and not (out_dir / "r.md").exists()


def test_symlinks_inside_the_chart_folder_are_not_followed(tmp_path):
    """A symlink at a name advisor writes is neither written through nor replaced: the run is refused
    whole, and a symlink elsewhere in the folder is left alone."""
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    folder = tmp_path / "r_files"
    folder.mkdir()
    (folder / "old-0000000000.png").symlink_to(target)
    (folder / "engines-1111111111.png").symlink_to(target)
    with pytest.raises(AdvisorError, match="is a symlink; advisor writes only regular files"):
        write_report(tmp_path / "r.md", b"# r\n", {"r_files/engines-1111111111.png": b"\x89PNG new"}, "r_files")
    assert target.read_text() == "keep me" and not (tmp_path / "r.md").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["engines-1111111111.png", "old-0000000000.png"]
    assert all(p.is_symlink() for p in folder.iterdir())


def test_stale_charts_and_reports_of_an_earlier_render_are_removed(tmp_path):
    """A nightly fleet overview written to the same path: last night's offenders' reports go."""
    first = {"o_files/roots-1.png": b"a", "o_files/reports/x-1.md": b"x", "o_files/reports/x-1_files/e-1.png": b"c"}
    write_report(tmp_path / "o.md", b"# 1\n", first, "o_files")
    (tmp_path / "o_files" / "notes.txt").write_text("mine")  # not something a render writes: kept
    second = {"o_files/roots-2.png": b"b", "o_files/reports/y-2.md": b"y", "o_files/reports/y-2_files/e-2.png": b"d"}
    write_report(tmp_path / "o.md", b"# 2\n", second, "o_files")
    left = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "o_files").rglob("*") if p.is_file())
    assert left == ["o_files/.advisor-written.json", "o_files/notes.txt", "o_files/reports/y-2.md",
                    "o_files/reports/y-2_files/e-2.png", "o_files/roots-2.png"]
    write_report(tmp_path / "o.html", b"<p>2</p>", {"o_files/reports/y-2.html": b"<p>y</p>"}, "o_files")
    after_html = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "o_files").rglob("*") if p.is_file())
    assert after_html == sorted([*left, "o_files/reports/y-2.html"])  # the Markdown overview's files stay


def test_output_checks(tmp_path):
    with pytest.raises(AdvisorError, match="does not exist"):
        check_output(tmp_path / "no" / "r.md", [])
    with pytest.raises(AdvisorError, match="is a folder"):
        check_output(tmp_path, [])
    source = tmp_path / "s.json"
    source.write_text("{}")
    with pytest.raises(AdvisorError, match="names an input"):
        check_output(source, [source])


def test_profile_text_cannot_inject_markup(tmp_path):
    data = json.loads(MP2.read_text())
    data["instance_type"] = HOSTILE
    data["runtime_version"] = "</code><script>alert(1)</script>"
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps(data))
    assert run_cli("report", profile, "-o", tmp_path / "r.md").returncode == 0
    assert run_cli("report", profile, "-o", tmp_path / "r.html").returncode == 0
    html_from_md = MarkdownIt("commonmark", {"html": False}).enable("table").render((tmp_path / "r.md").read_text())
    html = (tmp_path / "r.html").read_text()
    for rendered in (html_from_md, html):
        assert "<img src=x" not in rendered and "<script>" not in rendered
        assert 'href="http://evil' not in rendered and "<strong>bold" not in rendered
        assert "&lt;img src=x" in rendered  # shown as text, not dropped
    setup_row = next(line for line in (tmp_path / "r.md").read_text().splitlines() if line.startswith("| Instance"))
    assert setup_row.count(" | ") == 1  # the pipe in the value did not open a new column


@pytest.mark.parametrize("url", ["file:///etc/passwd", "http://127.0.0.1:9/x.png", "https://example.com/a.css",
                                 "ftp://example.com/x"])
def test_pdf_fetcher_refuses_everything_but_data(url):
    with pytest.raises(ValueError, match="do not load external resources"):
        _fetcher({}.__getitem__).fetch(url)


def test_pdf_fetcher_allows_data():
    response = _fetcher({}.__getitem__).fetch("data:text/plain;base64,aGk=")
    assert response is not None


def test_pdf_fetcher_serves_the_report_charts_by_key():
    response = _fetcher({"abc": b"\x89PNG..."}.__getitem__).fetch("advisor-chart:abc")
    assert response.read() == b"\x89PNG..." and response.content_type == "image/png"

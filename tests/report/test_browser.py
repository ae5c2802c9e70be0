"""Every sample's HTML report opened in headless Chromium, as a reader opens it: at a desktop width
(1280 px) and a phone width (390 px) nothing sticks out sideways, every chart is drawn, every table
stays inside the page, the console stays clean, and the page asks the network for nothing.

Drives the system Chromium through Selenium and chromedriver (Debian: `chromium chromium-driver`;
`.ci/run` installs them). Skipped, with the reason, where either is missing; in CI (`CI` set) that fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from tests_support import ROOT

from advisor.api import AnalyzeOptions, analyze, compare_inputs, default_labels
from advisor.report.render import render, render_comparison

CONTEXT = ROOT / "samples" / "mp2_energy" / "investigation.yaml"
# every report input among the samples (the golden cases), and one comparison of each kind
REPORTS = [p for p in sorted((ROOT / "samples").glob("*/summary*.*")) if p.suffix in (".json", ".txt")]
REPORTS += [ROOT / "samples" / name for name in (
    "legacy_trace/profile.json", "ncu_seed004/details.csv", "ncu_seed004/output.txt", "ncu_multi_kernel/details.csv",
    "rbln_atom_cnn/trace.pb", "rbln_atom_rsd/trace.pb", "rbln_rebel100/trace.pb")]
COMPARISONS = {
    "weight_reload": ["weight_reload/summary.json", "weight_reload_fixed/summary.json"],
    "ncu_before_after": ["ncu_before_after/before.csv", "ncu_before_after/after.csv"],
    "rbln_before_after": ["rbln_before_after/before.pb", "rbln_before_after/after.pb"],
    "series": [f"weight_reload_series/attempt_{i}.json" for i in (1, 2, 3)],
}
WIDTHS = (1280, 390)  # a laptop window; a phone (iPhone 12-15 CSS width)

# What a reader would notice, measured in the page itself after load.
PROBE = """
const doc = document.documentElement;
const width = doc.clientWidth;
const out = {width, scrollWidth: doc.scrollWidth, images: [], tables: [], svgs: []};
for (const img of document.images) {
  out.images.push({alt: img.alt, complete: img.complete, naturalWidth: img.naturalWidth});
}
for (const svg of document.querySelectorAll("figure svg")) {
  const box = svg.getBoundingClientRect();
  out.svgs.push({width: box.width, height: box.height, right: box.right});
}
for (const table of document.querySelectorAll("table")) {
  const box = table.getBoundingClientRect();
  const frame = (table.closest(".table-scroll") || table).getBoundingClientRect();
  out.tables.push({caption: (table.querySelector("th") || {}).textContent || "", left: frame.left,
                   right: frame.right, width: box.width, scrolls: box.width > frame.width + 1});
}
return out;
"""


def _missing(reason: str):
    if os.environ.get("CI"):  # .ci/run installs the browser: in CI a missing one is a failure, not a skip
        pytest.fail(reason)
    pytest.skip(reason)


def _driver_or_skip():
    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        _missing("no headless browser: install Chromium and chromedriver (Debian: apt-get install chromium "
                 "chromium-driver) to open the HTML reports in a real browser")
    try:
        from selenium import webdriver
    except ImportError:
        _missing("selenium is not installed (pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--no-first-run",
                "--disable-extensions", "--disable-sync", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = _driver_or_skip()
    yield driver
    driver.quit()


def _html_reports(folder: Path) -> list[Path]:
    pages = []
    for path in REPORTS:
        name = f"{path.parent.name}__{path.stem}"
        pages.append(_write(folder / f"{name}.html", render(analyze(path), "html", None).main))
    context = analyze(ROOT / "samples" / "mp2_energy" / "summary.json", AnalyzeOptions(context=CONTEXT))
    pages.append(_write(folder / "mp2_energy__context.html", render(context, "html", None).main))
    for name, relative in COMPARISONS.items():
        paths = [ROOT / "samples" / p for p in relative]
        result = compare_inputs(paths, default_labels(paths))
        pages.append(_write(folder / f"compare__{name}.html", render_comparison(result, "html", None).main))
    return pages


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return _html_reports(tmp_path_factory.mktemp("html"))


def _open(browser, page: Path, width: int) -> dict:
    browser.set_window_size(width, 900)
    browser.get_log("browser"), browser.get_log("performance")  # drop what earlier pages left
    browser.get(page.as_uri())
    inner = browser.execute_script("return window.innerWidth")
    if inner != width:  # the window frame: size the viewport itself
        browser.set_window_size(2 * width - inner, 900)
        browser.get(page.as_uri())
    found = browser.execute_script(PROBE)
    found["console"] = [e["message"] for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    requests = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    found["requests"] = [url for url in requests if url != page.as_uri() and not url.startswith("data:")]
    return found


def _problems(found: dict, where: str, width: int) -> list[str]:
    problems = []
    if found["scrollWidth"] > found["width"]:
        problems.append(f"{where}: the page scrolls sideways ({found['scrollWidth']} px wide)")
    problems += [f"{where}: image {i['alt']!r} not decoded" for i in found["images"]
                 if not i["complete"] or i["naturalWidth"] <= 0]
    problems += [f"{where}: a chart has no size ({s})" for s in found["svgs"] if s["width"] <= 0 or s["height"] <= 0]
    problems += [f"{where}: a chart sticks out to {s['right']:.0f} px" for s in found["svgs"] if s["right"] > width]
    for table in found["tables"]:
        if table["left"] < 0 or table["right"] > width:
            problems.append(f"{where}: table {table['caption']!r} spans {table['left']:.0f}..{table['right']:.0f} px")
        if width >= 1280 and table["scrolls"]:  # on a phone a wide table scrolls in its own box; not on a laptop
            problems.append(f"{where}: table {table['caption']!r} needs scrolling at desktop width")
    problems += [f"{where}: console: {m}" for m in found["console"]]
    problems += [f"{where}: network request {u}" for u in found["requests"]]
    return problems


@pytest.mark.parametrize("width", WIDTHS)
def test_html_reports_in_chromium(browser, pages, width):
    problems = []
    for page in pages:
        found = _open(browser, page, width)
        assert found["width"] == width, found["width"]
        assert found["tables"] and found["images"] + found["svgs"], page.name  # the probe saw the report
        problems += _problems(found, f"{page.name} at {width} px", width)
    assert not problems, "\n".join(problems)


BROKEN = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<figure><img alt="chart" src="data:image/png;base64,AAAA"></figure>
<table><tr><th>Metric</th></tr><tr><td><div style="width: 2000px">wide</div></td></tr></table>
<script>console.error("boom"); fetch("http://127.0.0.1:9/beacon").catch(() => {});</script>
</body></html>"""


def test_the_probe_notices_what_a_reader_would(browser, tmp_path):
    page = _write(tmp_path / "broken.html", BROKEN.encode())
    found = _open(browser, page, 1280)
    problems = "\n".join(_problems(found, "broken", 1280))
    assert "the page scrolls sideways" in problems
    assert "image 'chart' not decoded" in problems
    assert "table 'Metric' spans" in problems
    assert "boom" in problems
    assert "network request http://127.0.0.1:9/beacon" in problems

"""PDF renderer: the HTML report through WeasyPrint, which is never allowed to fetch anything but the
report's own charts (`advisor-chart:KEY`, served from memory) and `data:` URLs: no files, no network."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from advisor.report.charts import CHART_SCHEME

ChartSource = Callable[[str], bytes]  # a chart's key -> its PNG (waiting for it to be drawn, perhaps elsewhere)


def _fetcher(chart: ChartSource):
    from weasyprint.urls import FatalURLFetchingError, URLFetcher, URLFetcherResponse

    class ReportFetcher(URLFetcher):
        """The report's charts from `chart`; data: URLs; nothing else (no files, no network, no redirects)."""

        def __init__(self) -> None:
            super().__init__(allowed_protocols=("data",), allow_redirects=False, timeout=1)

        def fetch(self, url, headers=None):
            url = str(url)
            if url.startswith(CHART_SCHEME):
                try:
                    png = chart(url[len(CHART_SCHEME):])
                except Exception as exc:  # WeasyPrint would leave the image out with a warning: stop instead
                    raise FatalURLFetchingError(url) from exc
                return URLFetcherResponse(url, png, {"Content-Type": "image/png"})
            if not url.startswith("data:"):
                raise ValueError(f"advisor reports do not load external resources ({url[:60]})")
            return super().fetch(url, headers)

    return ReportFetcher()


def _loader_cache() -> dict[str, str] | None:
    """Library name -> soname, from one `ldconfig -p` (glibc's loader cache), or None where there is
    no such listing (not Linux, musl)."""
    import os
    import re
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        listing = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, timeout=10, check=True,
                                 env={"LC_ALL": "C", "LANG": "C"}).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None
    found: dict[str, str] = {}
    for soname in re.findall(r"^\s+lib(\S+?\.so\S*)\s", listing, re.MULTILINE):
        found.setdefault(soname.split(".so")[0], f"lib{soname}")
    for folder in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        try:  # ctypes' own search looks here too (through ld): libraries outside the cache
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if name.startswith("lib") and ".so" in name:
                found.setdefault(name[3:].split(".so")[0], name)
    return found


@contextmanager
def _quick_library_lookup() -> Iterator[None]:
    """WeasyPrint tries up to six names for each native library, and cffi asks
    `ctypes.util.find_library` about each name it cannot open; on Linux every such question runs
    ldconfig, gcc and ld. That was 54 processes and 0.2–0.3 s per PDF (half of that for optional
    libraries that are missing). One loader-cache listing answers all of them the same way."""
    import ctypes.util
    import sys

    cache = None if "weasyprint" in sys.modules else _loader_cache()
    if cache is None:
        yield
        return
    standard = ctypes.util.find_library
    ctypes.util.find_library = lambda name: cache.get(name)
    try:
        yield
    finally:
        ctypes.util.find_library = standard


def _weasyprint():
    """WeasyPrint's HTML class, loaded with the quick library lookup."""
    import logging

    with _quick_library_lookup():
        from weasyprint import HTML

    logging.getLogger("weasyprint").setLevel(logging.ERROR)  # font-subsetting chatter is not the user's concern
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    return HTML


def render_pdf(html: str, chart: ChartSource) -> bytes:
    """PDF bytes; byte-identical across runs when SOURCE_DATE_EPOCH is set. `chart` serves the HTML's
    `advisor-chart:` images; WeasyPrint asks for them once it has parsed and styled the document, so
    charts drawn in another process are waited for only then."""
    html_class = _weasyprint()
    from weasyprint.urls import FatalURLFetchingError

    try:
        return html_class(string=html, base_url=None, url_fetcher=_fetcher(chart)).write_pdf()
    except FatalURLFetchingError as exc:  # a chart that could not be drawn: its own error
        raise exc.__cause__ or exc from None

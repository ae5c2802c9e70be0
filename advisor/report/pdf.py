"""PDF renderer: the HTML report through WeasyPrint, which is never allowed to fetch anything
but `data:` URLs (the HTML is self-contained, so nothing should be asked for at all)."""

from __future__ import annotations


def _fetcher():
    from weasyprint.urls import URLFetcher

    class DataOnlyFetcher(URLFetcher):
        """Refuses every URL but data: (no files, no network, no redirects)."""

        def __init__(self) -> None:
            super().__init__(allowed_protocols=("data",), allow_redirects=False, timeout=1)

        def fetch(self, url, headers=None):
            if not str(url).startswith("data:"):
                raise ValueError(f"advisor reports do not load external resources ({str(url)[:60]})")
            return super().fetch(url, headers)

    return DataOnlyFetcher()


def render_pdf(html: str) -> bytes:
    """PDF bytes; byte-identical across runs when SOURCE_DATE_EPOCH is set."""
    import logging

    from weasyprint import HTML

    logging.getLogger("weasyprint").setLevel(logging.ERROR)  # font-subsetting chatter is not the user's concern
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    return HTML(string=html, base_url=None, url_fetcher=_fetcher()).write_pdf()

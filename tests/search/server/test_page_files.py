"""The search page's static files, read without a browser (the browser tests are in
test_page.py)."""

from __future__ import annotations

import re


def test_the_type_field_offers_every_file_type_name():
    """The page's static list of type names is the filter's (`indexer.reading.formats`)."""
    from indexer.reading.formats import FILE_TYPES
    from search.server.app import STATIC

    page_html = (STATIC / "index.html").read_text()
    offered = re.search(r'<datalist id="file-types">(.*?)</datalist>', page_html, re.DOTALL)
    assert offered is not None
    assert re.findall(r'<option value="([^"]+)">', offered.group(1)) == list(FILE_TYPES)

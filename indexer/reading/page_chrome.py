"""Which elements of an HTML page are its navigation chrome rather than its text.

A documentation page repeats the site's sidebar, related links, search box and footer
(Sphinx's "Table of Contents", "Previous topic", "This Page"); indexed, they are passages
that match questions better than the answer. Chrome is recognised from HTML's own
landmarks (`nav`, a page-level `header`/`footer`, ARIA navigation roles) and Sphinx's
classes, and only outside the page's main content: a `nav` of contents inside `main`, or
an article's or a section's own header, is the page's.
"""

from __future__ import annotations

from typing import Any

_CHROME_TAGS = frozenset({"nav", "header", "footer"})
_CHROME_ROLES = frozenset({"navigation", "search", "banner", "contentinfo"})
_CHROME_CLASSES = frozenset({"sphinxsidebar", "related", "footer", "mobile-nav"})
_MAIN_TAGS = frozenset({"main", "article", "section"})


def is_main_content(element: Any) -> bool:
    """Whether an lxml element is the page's main content (inside it nothing is chrome)."""
    return element.tag in _MAIN_TAGS or element.get("role") == "main"


def is_chrome(element: Any) -> bool:
    """Whether an lxml element, met outside the main content, is navigation chrome."""
    if element.tag in _CHROME_TAGS or element.get("role") in _CHROME_ROLES:
        return True
    return element.tag == "div" and not _CHROME_CLASSES.isdisjoint(
        (element.get("class") or "").split()
    )

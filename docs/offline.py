"""An MkDocs hook (mkdocs.yml's ``hooks``): the error page's links relative to the site's
root, where MkDocs makes them absolute (``/``, for a page served at any path), so that the
site works opened from disk, as `make docs` leaves it in ``site/``."""

from __future__ import annotations

from typing import Any


def on_template_context(context: dict[str, Any], template_name: str, **_: Any) -> dict[str, Any]:
    """The 404 page's base URL: the folder it lies in (the site's root), not ``/``."""
    if template_name == "404.html":
        context["base_url"] = "."
    return context

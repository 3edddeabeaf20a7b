"""htmx helpers of the page views (after NetBox's ``utilities/htmx.py``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

__all__ = ("htmx_partial", "render_list")


def htmx_partial(request: HttpRequest) -> bool:
    """
    Whether to answer with a partial template: an htmx request that is neither boosted nor a history restore.

    A history restore (back button after the htmx history cache was evicted) needs the whole page.
    """
    headers = request.headers
    return (
        headers.get("HX-Request") == "true"
        and headers.get("HX-Boosted") != "true"
        and headers.get("HX-History-Restore-Request") != "true"
    )


def render_list(request: HttpRequest, template: str, partial: str, context: dict) -> HttpResponse:
    """Render the full page, or only its list ``partial`` for htmx requests; caches keep the two apart."""
    response = render(request, partial if htmx_partial(request) else template, context)
    patch_vary_headers(response, ("HX-Request",))
    return response

"""
Lists of change requests: everything (filters and keyset pages), "Waiting for me" (the approver's inbox)
and "My requests".
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.selectors.pagination import Page
from catalog_admin.utils.htmx import render_list
from catalog_admin.utils.paging import Paging
from operations.choices import ChangeRequestState
from operations.policy import can_request
from operations.selectors import RISKS, ChangeRequestFilter, inbox, list_change_requests

__all__ = ("change_request_inbox", "change_request_list", "change_request_mine")


@require_GET
def change_request_list(request: HttpRequest) -> HttpResponse:
    """All requests, newest first, filtered by state, database, requester and risk."""
    filters = ChangeRequestFilter.from_params(request.GET)
    paging = Paging.from_request(request)
    context = {
        "mode": "all",
        "filters": filters,
        "page": list_change_requests(filters, cursor=paging.cursor, size=paging.size),
        "paging": paging,
        **_choices(request),
    }
    return render_list(request, "operations/change_requests.html", "operations/htmx/change_request_list.html", context)


@require_GET
def change_request_mine(request: HttpRequest) -> HttpResponse:
    """The signed-in user's own requests, newest first."""
    filters = ChangeRequestFilter.from_params(request.GET, requester=request.user.get_username())
    paging = Paging.from_request(request)
    context = {
        "mode": "mine",
        "filters": filters,
        "page": list_change_requests(filters, cursor=paging.cursor, size=paging.size),
        "paging": paging,
        **_choices(request),
    }
    return render_list(request, "operations/change_requests.html", "operations/htmx/change_request_list.html", context)


@require_GET
def change_request_inbox(request: HttpRequest) -> HttpResponse:
    """Submitted requests the signed-in approver may decide: not their own, not decided yet, oldest first."""
    waiting = inbox(request.user)
    context = {
        "mode": "inbox",
        "page": Page(items=waiting),
        "paging": Paging(size=len(waiting) or settings.CATALOG_PAGE_SIZE, cursor=""),
        "can_request": can_request(request.user),
    }
    return render(request, "operations/change_requests.html", context)


def _choices(request: HttpRequest) -> dict[str, object]:
    return {
        "can_request": can_request(request.user),
        "states": ChangeRequestState.choices,
        "risks": RISKS,
        "metastores": [config.name for config in settings.METASTORE_CONFIGS],
    }

"""The home page: the work of one metastore for the signed-in user (``operations.work``), per metastore."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.selectors.metastores import get_metastore
from operations.policy import can_request
from operations.selectors import change_request_actions
from operations.work import metastore_work

__all__ = ("home",)


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Waiting for me, my drafts, approved and scheduled requests, running jobs, recent executions and tables with
    partition anomalies, on the metastore of ``?metastore=`` (the default one otherwise)."""
    metastore = get_metastore(request.GET.get("metastore") or None)
    work = metastore_work(metastore, request.user)
    context = {
        "metastore_name": metastore.name,
        "metastores": [config.name for config in settings.METASTORE_CONFIGS],
        "work": work,
        "can_request": can_request(request.user),
        "waiting": [(r, change_request_actions(r, request.user)["approve"]) for r in work.waiting],
    }
    return render(request, "operations/home.html", context)

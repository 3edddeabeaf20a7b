"""The home page: the work of one metastore for the signed-in user (``operations.work``), per metastore."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.selectors.metastores import get_metastore
from operations.policy import can_request
from operations.selectors import change_request_actions
from operations.work import metastore_work, partition_anomalies

__all__ = ("home", "home_anomalies")


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Waiting for me (with what to weigh before approving), my drafts, my requests waiting on others, approved and
    scheduled requests, running jobs, recent executions and tables with partition anomalies, on the metastore of
    ``?metastore=`` (the default one otherwise)."""
    metastore = get_metastore(request.GET.get("metastore") or None)
    work = metastore_work(metastore, request.user)
    context = {
        "metastore_name": metastore.name,
        "metastores": [config.name for config in settings.METASTORE_CONFIGS],
        "work": work,
        "can_request": can_request(request.user),
        "waiting": [
            (r, change_request_actions(r, request.user)["approve"], work.facts.get(r.pk)) for r in work.waiting
        ],
    }
    return render(request, "operations/home.html", context)


@require_GET
def home_anomalies(request: HttpRequest) -> HttpResponse:
    """The home page's "tables with partitions outside their root" panel, loaded by htmx after the page (one grouped
    statement over the metastore's partitions)."""
    metastore = get_metastore(request.GET.get("metastore") or None)
    context = {"metastore_name": metastore.name, "anomalies": partition_anomalies(metastore)}
    return render(request, "operations/htmx/home_anomalies.html", context)

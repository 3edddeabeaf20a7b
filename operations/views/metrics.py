"""``GET /metrics``: Prometheus's text format, for a bearer token or an allowed network (``scrape_access``)."""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from catalog_admin.utils.scrape_access import scrape_refusal
from operations.metrics import ConsoleCollector

__all__ = ("metrics",)


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """This process's request latencies (every gunicorn worker's with ``PROMETHEUS_MULTIPROC_DIR``) and the console's
    own metrics, computed now."""
    refusal = scrape_refusal(request)
    if refusal is not None:
        return JsonResponse(refusal.as_dict(), status=refusal.code.http_status)
    console = CollectorRegistry(auto_describe=False)
    console.register(ConsoleCollector())
    body = generate_latest(_process_registry()) + generate_latest(console)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


def _process_registry() -> CollectorRegistry:
    if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry

"""``GET /health/``: 200 when the console's database and every metastore answer, 503 naming those that do not."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from catalog_admin.selectors.health import check_health

__all__ = ("health",)


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Public (no sign-in) for load balancers and probes: anyone sees the names; only a signed-in user the errors."""
    report = check_health()
    detailed = request.user.is_authenticated
    body = {
        "status": "ok" if report.ok else "unavailable",
        "failing": list(report.failing),
        "checks": [
            {"name": c.name, "kind": c.kind, "ok": c.ok, **({"error": c.error} if c.error and detailed else {})}
            for c in report.checks
        ],
    }
    return JsonResponse(body, status=200 if report.ok else 503)

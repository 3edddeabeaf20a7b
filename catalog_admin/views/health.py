"""``GET /health/``: 200 when the console's database and every metastore answer, 503 when one does not."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from catalog_admin.roles import Role
from catalog_admin.selectors.health import check_health
from catalog_admin.utils.scrape_access import token_presented

__all__ = ("health",)


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Public (no sign-in) for load balancers and probes, which get the overall status only; staff, admins and the
    metrics token (``CATALOG_METRICS_TOKEN``) also get each database's check, failing ones with their error."""
    report = check_health()
    body: dict[str, object] = {"status": "ok" if report.ok else "unavailable"}
    if _sees_details(request):
        body["failing"] = list(report.failing)
        body["checks"] = [
            {"name": c.name, "kind": c.kind, "ok": c.ok, **({"error": c.error} if c.error else {})}
            for c in report.checks
        ]
    return JsonResponse(body, status=200 if report.ok else 503)


def _sees_details(request: HttpRequest) -> bool:
    user = request.user
    if token_presented(request):
        return True
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_staff or user.is_superuser or user.groups.filter(name=Role.ADMIN).exists()

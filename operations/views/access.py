"""
The access pages (issue 28): who can read a table or database and why, what one principal can read, the history of
access changes; a viewer's "Request read access" button and a steward's access-control statement, both change
requests. Thin: one selector or service each.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from catalog_admin.errors import ApplicationError
from catalog_admin.roles import Role
from catalog_admin.selectors.access import principal_access, who_can_read
from catalog_admin.selectors.metastores import get_metastore
from operations.access_history import access_history, principal_history
from operations.policy import can_request, has_role
from operations.privilege_specs import PRINCIPAL_TYPES
from operations.services.privilege_kind import access_request_create, privilege_request_create

__all__ = ("access_object", "access_principal", "access_request", "access_statement")


@require_GET
def access_object(request: HttpRequest, metastore: str, database: str, table: str = "") -> HttpResponse:
    """Who can read the table (or database), and why; its access history; the request buttons."""
    found = get_metastore(metastore)
    context = {
        "report": who_can_read(found, database, table),
        "history": access_history(found.name, database, table),
        "can_request": bool(can_request(request.user)),
        "can_ask": has_role(request.user, Role.VIEWER, Role.STEWARD, Role.ADMIN),
    }
    return render(request, "operations/access/object.html", context)


@require_GET
def access_principal(request: HttpRequest, metastore: str, kind: str, name: str) -> HttpResponse:
    """What one USER, GROUP or ROLE can read, with the path (``?groups=a,b``: a user's groups)."""
    kind = kind.upper()
    if kind not in PRINCIPAL_TYPES:
        kind = "USER"
    groups = [g.strip() for g in request.GET.get("groups", "").split(",") if g.strip()]
    found = get_metastore(metastore)
    context = {
        "access": principal_access(found, kind, name, groups=groups),
        "groups": ",".join(groups),
        "history": principal_history(found.name, kind, name),
    }
    return render(request, "operations/access/principal.html", context)


@require_POST
def access_request(request: HttpRequest, metastore: str) -> HttpResponse:
    """The signed-in user asks for SELECT on a table or database for themselves (submitted for approval)."""
    database, table = request.POST.get("database", ""), request.POST.get("table", "")
    try:
        change = access_request_create(user=request.user, metastore=metastore, database=database, table=table,
                                       reason=request.POST.get("reason", ""))  # fmt: skip
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect(_object_url(metastore, database, table))
    return redirect("operations:detail", change.pk)


@require_POST
def access_statement(request: HttpRequest, metastore: str) -> HttpResponse:
    """A steward's GRANT/REVOKE/role statement as a draft change request with its preview."""
    try:
        change = privilege_request_create(user=request.user, metastore=metastore,
                                          statement=request.POST.get("statement", ""),
                                          reason=request.POST.get("reason", ""))  # fmt: skip
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect(_object_url(metastore, request.POST.get("database", ""), request.POST.get("table", "")))
    return redirect("operations:detail", change.pk)


def _object_url(metastore: str, database: str, table: str) -> str:
    if not database:
        return reverse("operations:list")
    if table:
        return reverse("operations:access-table", args=[metastore, database, table])
    return reverse("operations:access-database", args=[metastore, database])

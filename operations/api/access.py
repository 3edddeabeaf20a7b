"""
The access API (issue 28): who can read a table or database (``GET /api/access/{metastore}/{database}/[{table}/]``),
what a principal can read (``GET /api/access/{metastore}/principals/{type}/{name}/``), both with the history of access
changes; an access-control statement as a draft change request (``POST /api/privileges/``, its preview alone with
``POST /api/privileges/preview/``), and a request for SELECT for oneself (``POST /api/access-requests/``). The
requests then go through the ordinary change-request endpoints (submit, approve, execute, revert).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.access import principal_access, who_can_read
from catalog_admin.selectors.metastores import get_metastore
from operations.access_history import access_history, principal_history
from operations.api.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from operations.api.serializers import ChangeRequestSerializer
from operations.api.views.base import OperationsAPIView, errors
from operations.ddl.privileges import parse_privilege
from operations.privilege_specs import PRINCIPAL_TYPES
from operations.services.privilege_kind import access_request_create, privilege_request_create
from operations.services.privileges import privilege_plan

__all__ = (
    "AccessDatabaseView",
    "AccessPrincipalView",
    "AccessRequestCreateView",
    "AccessTableView",
    "PrivilegeCreateView",
    "PrivilegePreviewView",
)

_STATEMENT_ERRORS = {
    400: "ddl_parse_error: the statement does not parse, or SQL-standard authorization refuses it (a privilege other "
    "than SELECT, INSERT, UPDATE, DELETE, ALL; column privileges; a reserved role name); invalid_parameter: a "
    "malformed body.",
    404: "not_found: the metastore does not exist.",
}
_EXAMPLE = OpenApiExample(
    "Read access for a role", {"statement": "GRANT SELECT ON TABLE sales.orders TO ROLE analysts"}, request_only=True
)


def _history(records: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.pk,
            "created_at": r.created_at,
            "actor": r.actor,
            "action": r.action,
            "outcome": r.outcome,
            "request": r.request_id_ref,
            "execution": r.execution_id_ref,
            "statement": r.statement,
        }
        for r in records
    ]


class Text(serializers.CharField):
    """A JSON string, as the schema says (DRF's CharField would also take a number and turn it into text)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StatementSerializer(serializers.Serializer):
    statement = Text(max_length=20000, help_text="GRANT, REVOKE, CREATE/DROP ROLE, GRANT/REVOKE ROLE.")
    metastore = Text(required=False, allow_blank=True, help_text="Registered metastore; default one.")
    reason = Text(required=False, allow_blank=True, default="", help_text="Why (for approvers).")


class AccessRequestSerializer(serializers.Serializer):
    database = Text(max_length=128)
    table = Text(max_length=256, required=False, allow_blank=True, default="")
    metastore = Text(required=False, allow_blank=True, help_text="Registered metastore; default one.")
    reason = Text(required=False, allow_blank=True, default="")


class PrivilegePreviewView(OperationsAPIView):
    @extend_schema(
        tags=["access"],
        operation_id="privileges_preview",
        request=StatementSerializer,
        responses={200: OpenApiTypes.OBJECT, **errors(400, 401, 404, 415, 503, overrides=_STATEMENT_ERRORS)},
        examples=[_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        """The rows the statement would write, granted by you, and Hive's refusals; nothing is written."""
        data = self.validated(StatementSerializer)
        spec = parse_privilege(data["statement"])
        plan = privilege_plan(data.get("metastore") or None, spec, grantor=request.user.get_username())
        return Response({**plan.as_dict(), "fingerprint": plan.fingerprint})


class PrivilegeCreateView(OperationsAPIView):
    @extend_schema(
        tags=["access"],
        operation_id="privileges_create",
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=StatementSerializer,
        responses={
            201: ChangeRequestSerializer,
            **errors(400, 401, 403, 404, 415, 422, 503, overrides=_STATEMENT_ERRORS),
        },
        examples=[_EXAMPLE],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """A draft change request of the statement, granted by you (stewards; a viewer only SELECT for themselves)."""
        data = self.validated(StatementSerializer)
        change = privilege_request_create(
            user=request.user,
            statement=data["statement"],
            metastore=data.get("metastore") or None,
            reason=data["reason"],
        )
        return self.change_request(change, status=201)


class AccessRequestCreateView(OperationsAPIView):
    @extend_schema(
        tags=["access"],
        operation_id="access_requests_create",
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=AccessRequestSerializer,
        responses={201: ChangeRequestSerializer, **errors(400, 401, 403, 404, 415, 422, 503)},
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """SELECT on a table or database for yourself, submitted for approval (anyone signed in with a role)."""
        data = self.validated(AccessRequestSerializer)
        change = access_request_create(
            user=request.user,
            metastore=data.get("metastore") or None,
            database=data["database"],
            table=data["table"],
            reason=data["reason"],
        )
        return self.change_request(change, status=201)


class _AccessObjectView(OperationsAPIView):
    def report(self, metastore: str, database: str, table: str) -> Response:
        found = get_metastore(metastore)
        report = who_can_read(found, database, table)
        if not report.exists:
            kind, name = ("table", f"{database}.{table}") if table else ("database", database)
            raise ApplicationError(
                ErrorCode.NOT_FOUND, f"No {kind} {name} in {metastore}.", {"kind": kind, "name": name}
            )
        return Response({**report.as_dict(), "history": _history(access_history(found.name, database, table))})


class AccessDatabaseView(_AccessObjectView):
    @extend_schema(
        tags=["access"], operation_id="access_database", responses={200: OpenApiTypes.OBJECT, **errors(401, 404, 503)}
    )
    def get(self, request: Request, metastore: str, database: str) -> Response:
        """Who can read the database and why, whether HMS grants are enforced, and the access history."""
        return self.report(metastore, database, "")


class AccessTableView(_AccessObjectView):
    @extend_schema(
        tags=["access"], operation_id="access_table", responses={200: OpenApiTypes.OBJECT, **errors(401, 404, 503)}
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """Who can read the table and why (database grants listed apart), whether HMS grants are enforced, and the
        access history."""
        return self.report(metastore, database, table)


class AccessPrincipalView(OperationsAPIView):
    @extend_schema(
        tags=["access"],
        operation_id="access_principal",
        parameters=[OpenApiParameter("groups", str, description="The user's groups, comma-separated.")],
        responses={200: OpenApiTypes.OBJECT, **errors(400, 401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, kind: str, name: str) -> Response:
        """What the USER, GROUP or ROLE can read, each with its path, and the access history naming it."""
        kind = kind.upper()
        if kind not in PRINCIPAL_TYPES:
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER, f"type is one of {', '.join(PRINCIPAL_TYPES)}.", {"parameter": "type"}
            )
        groups = [g.strip() for g in request.query_params.get("groups", "").split(",") if g.strip()]
        found = get_metastore(metastore)
        access = principal_access(found, kind, name, groups=groups)
        return Response({**access.as_dict(), "history": _history(principal_history(found.name, kind, name))})

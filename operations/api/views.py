"""
The change-request API: thin views over ``operations.selectors`` (reads) and ``operations.services`` (actions).

Every POST (and the PATCH) validates its body, calls exactly one service and serializes what it returns. Views
only require authentication; who may do what is decided by the services, which refuse with the error vocabulary
shared with the browser (``permission_denied``, ``self_approval_forbidden``, ``invalid_state``, ``stale_preview``,
``hive_rule_violation`` …), rendered as ``{"code", "message", "details"}`` by the API's exception handler.
Actions honour an ``Idempotency-Key`` header (:mod:`operations.api.idempotency`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import prefetch_related_objects
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from catalog_admin.api.data_views import _ChartSerializer
from catalog_admin.api.inputs import RejectsNulCharacters
from catalog_admin.api.serializers import ErrorSerializer
from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from catalog_admin.selectors.pagination import Page, page_size
from operations.api.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from operations.api.serializers import (
    RISKS,
    ApprovalListSerializer,
    ApproveSerializer,
    AuditExportSerializer,
    AuditPageSerializer,
    AuditRecordSerializer,
    ChangeRequestCreateSerializer,
    ChangeRequestPageSerializer,
    ChangeRequestSerializer,
    ChangeRequestUpdateSerializer,
    CommentCreateSerializer,
    CommentListSerializer,
    CommentSerializer,
    ExecuteSerializer,
    JobSerializer,
    RejectSerializer,
    RevertSerializer,
    SettleSerializer,
)
from operations.choices import ChangeRequestState
from operations.models import AuditRecord, ChangeRequest
from operations.selectors import (
    AuditFilter,
    ChangeRequestFilter,
    audit_records,
    get_change_request,
    get_job,
    list_audit,
    list_change_requests,
)
from operations.services.audit import export_audit
from operations.services.change_requests import (
    change_request_approve,
    change_request_cancel,
    change_request_comment,
    change_request_create,
    change_request_execute,
    change_request_refresh,
    change_request_reject,
    change_request_revert,
    change_request_revise,
    change_request_submit,
    change_request_update,
    settle_stuck_request,
)
from operations.services.jobs import job_cancel, job_resume

__all__ = (
    "COMMANDS",
    "AuditDetailView",
    "AuditExportView",
    "AuditListView",
    "ChangeRequestApprovalsView",
    "ChangeRequestApproveView",
    "ChangeRequestCancelView",
    "ChangeRequestCommentsView",
    "ChangeRequestDetailView",
    "ChangeRequestExecuteView",
    "ChangeRequestListView",
    "ChangeRequestRefreshView",
    "ChangeRequestRejectView",
    "ChangeRequestRevertView",
    "ChangeRequestReviseView",
    "ChangeRequestSettleView",
    "ChangeRequestSubmitView",
    "Command",
    "JobCancelView",
    "JobDetailView",
    "JobResumeView",
    "command_view",
)

EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}

# OpenAPI -----------------------------------------------------------------------------------------------------------

_ERRORS = {
    400: "invalid_parameter: a malformed body, Idempotency-Key, cursor, page_size or filter (details name the "
    "parameter).",
    401: "not_authenticated: no token or session, a wrong token, or an expired one.",
    403: "permission_denied: your role does not allow it.",
    404: "not_found: no such change request.",
    409: "invalid_state: the request's state does not allow the action (details: state, action).",
    415: "unsupported_media_type: a body that is not JSON, form or multipart data (send application/json).",
    422: "idempotency_key_reused: the Idempotency-Key was used with another body.",
    503: "metastore_unavailable: the metastore cannot be read.",
}
_CREATE_ERRORS = {
    400: "invalid_parameter (statement and operation both or neither given, a malformed operation) or "
    "ddl_parse_error: the statement does not parse (details: position, line, column, supported).",
    404: "not_found: the metastore, database or table does not exist (details: kind, name).",
}
_FRESH_ERRORS = {
    409: "invalid_state (details: state, action) or stale_preview: the table changed since the preview "
    "(details: previewed_fingerprint, current_fingerprint, previewed_diff, current_diff); refresh it first.",
    422: "hive_rule_violation: a Hive rule blocks the change (details: rule, blockers), or idempotency_key_reused.",
}


def _errors(*statuses: int, overrides: dict[int, str] | None = None) -> dict[int, OpenApiResponse]:
    """The error responses ``statuses`` with their codes (``overrides``: this endpoint's own descriptions)."""
    descriptions = {**_ERRORS, **(overrides or {})}
    return {status: OpenApiResponse(ErrorSerializer, description=descriptions[status]) for status in statuses}


_PK = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Change request number.")
_CURSOR = OpenApiParameter("cursor", str, description="Opaque cursor from next_cursor; omit for the first page.")
_PAGE_SIZE = OpenApiParameter(
    "page_size",
    {"type": "integer", "minimum": 1, "maximum": settings.CATALOG_MAX_PAGE_SIZE},
    description=f"Results per page, 1 to {settings.CATALOG_MAX_PAGE_SIZE} (default {settings.CATALOG_PAGE_SIZE}).",
)


def _command(operation_id: str, summary: str, request: Any, responses: dict[int, Any], **extra: Any) -> Any:
    """The schema of a command on one change request (path id, Idempotency-Key, its errors).

    Every command answers 400 to a malformed Idempotency-Key, whether or not its body can be malformed, and 415 to a
    body it cannot parse (the key's check reads the body).
    """
    responses = dict(sorted({**_errors(400, 415), **responses}.items()))
    return extend_schema(
        tags=["change-requests"],
        operation_id=operation_id,
        summary=summary,
        parameters=[_PK, IDEMPOTENCY_KEY_PARAMETER],
        request=request,
        responses=responses,
        **extra,
    )


# Base ----------------------------------------------------------------------------------------------------------------


class OperationsAPIView(RejectsNulCharacters, APIView):
    """Helpers shared by the views: body validation, one change request's representation, cursor pages."""

    def context(self, **extra: Any) -> dict[str, Any]:
        return {"request": self.request, **extra}

    def validated(self, serializer_class: type[serializers.Serializer], **context: Any) -> dict[str, Any]:
        serializer = serializer_class(data=self.request.data, context=self.context(**context))
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def change_request(self, change: ChangeRequest, status: int = 200) -> Response:
        return Response(ChangeRequestSerializer(change, context=self.context()).data, status=status)

    def page(self, page: Page, serializer_class: type[serializers.Serializer]) -> Response:
        """``{"results", "next", "next_cursor"}``; ``next`` keeps the other query parameters."""
        next_url = None
        if page.next_cursor:
            next_url = replace_query_param(self.request.build_absolute_uri(), "cursor", page.next_cursor)
        data = {"results": page.items, "next": next_url, "next_cursor": page.next_cursor or None}
        return Response(serializer_class(data, context=self.context()).data)


# Change requests -----------------------------------------------------------------------------------------------------


class ChangeRequestListView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_list",
        parameters=[
            # An empty filter means "any", as from a form (schemathesis: `?state=` was answered, though undeclared).
            OpenApiParameter(
                "state", str, enum=["", *ChangeRequestState.values], description="Only this state (empty: any)."
            ),
            OpenApiParameter("metastore", str, description="Only requests on this metastore."),
            OpenApiParameter("database", str, description="Only requests on tables of this database (exact)."),
            OpenApiParameter("table", str, description="Substring of the table name."),
            OpenApiParameter("requester", str, description="Only requests of this user (username)."),
            OpenApiParameter("risk", str, enum=["", *RISKS], description="Only this risk (empty: any)."),
            _CURSOR,
            _PAGE_SIZE,
        ],
        responses={200: ChangeRequestPageSerializer, **_errors(400, 401)},
    )
    def get(self, request: Request) -> Response:
        """Change requests, newest first, filtered (keyset pages)."""
        params = request.query_params
        filters = ChangeRequestFilter.from_params(params)
        page = list_change_requests(filters, cursor=params.get("cursor", ""), size=page_size(params.get("page_size")))
        prefetch_related_objects(page.items, "jobs", "execution")
        return self.page(page, ChangeRequestPageSerializer)

    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_create",
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=ChangeRequestCreateSerializer,
        responses={
            201: ChangeRequestSerializer,
            **_errors(400, 401, 403, 404, 415, 422, 503, overrides=_CREATE_ERRORS),
        },
        examples=[
            OpenApiExample(
                "Hive DDL",
                {"statement": "ALTER TABLE sales.orders RENAME TO sales.orders_v2", "reason": "naming convention"},
                request_only=True,
            ),
            OpenApiExample(
                "Structured",
                {
                    "metastore": "hive31_pg",
                    "operation": {
                        "kind": "rename_table",
                        "target": {"database": "sales", "table": "orders"},
                        "new": {"database": "sales", "table": "orders_v2"},
                    },
                },
                request_only=True,
            ),
        ],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """
        A draft change request with its preview, from a Hive statement or a structured operation (stewards).

        Blockers are shown in the preview; they refuse the request at submit.
        """
        change = change_request_create(user=request.user, **self.validated(ChangeRequestCreateSerializer))
        return self.change_request(change, status=201)


class ChangeRequestDetailView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_retrieve",
        parameters=[_PK],
        responses={200: ChangeRequestSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """One change request with its preview, policy, execution and latest job."""
        return self.change_request(get_change_request(pk))

    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_partial_update",
        parameters=[_PK, IDEMPOTENCY_KEY_PARAMETER],
        request=ChangeRequestUpdateSerializer,
        responses={
            200: ChangeRequestSerializer,
            **_errors(400, 401, 403, 404, 409, 415, 422, 503, overrides=_CREATE_ERRORS),
        },
    )
    @idempotent
    def patch(self, request: Request, pk: int) -> Response:
        """Edit a draft (the requester): a new statement or operation and a new preview, or a new reason."""
        change = get_change_request(pk)
        data = self.validated(ChangeRequestUpdateSerializer, change=change)
        return self.change_request(change_request_update(request=change, user=request.user, **data))


class ChangeRequestDataScopeChartsView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_data_scope_charts",
        parameters=[_PK],
        responses={200: inline_serializer("DataScopeCharts", {"file_sizes": _ChartSerializer}), **_errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """The small-file histogram of the data a request's job copies or rewrites (its stored preview's listing)."""
        change = get_change_request(pk)
        scope = (change.preview.get("data_copy") or {}).get("scope")
        if not scope:
            raise NotFound("data scope of change request", str(pk))
        return Response({"file_sizes": scope["file_sizes"]})


# Commands: one table, one view class each ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """A POST on one change request: its OpenAPI description, its body, the service it calls and the status.

    ``act(change, user, body)`` calls exactly one service; ``status(result)`` is the answer's status.
    """

    operation_id: str
    summary: str
    body: type[serializers.Serializer] | None
    responses: dict[int, Any]
    act: Callable[[ChangeRequest, Any, dict[str, Any]], ChangeRequest]
    description: str | None = None
    status: Callable[[ChangeRequest], int] = lambda result: 200


def command_view(name: str, command: Command) -> type[OperationsAPIView]:
    """The view class of ``command``: validate the body, call the service, answer the request it returns."""

    def post(self: OperationsAPIView, request: Request, pk: int) -> Response:
        data = self.validated(command.body) if command.body is not None else {}
        result = command.act(get_change_request(pk), request.user, data)
        return self.change_request(result, status=command.status(result))

    post.__doc__ = command.description
    post.__name__ = "post"
    post.__qualname__ = f"{name}.post"
    handler = _command(command.operation_id, command.summary, command.body, command.responses)(idempotent(post))
    return type(name, (OperationsAPIView,), {"post": handler, "__module__": __name__, "command": command})


def _executing_or_scheduled(change: ChangeRequest) -> int:
    # Scheduled: 200. Otherwise the job was started: 202, even when it already finished (an eager job, or a
    # worker thread faster than this answer), so the status never depends on how quickly the job ran.
    return 200 if change.state == ChangeRequestState.SCHEDULED else 202


COMMANDS: dict[str, Command] = {
    "ChangeRequestSubmitView": Command(
        "change_requests_submit",
        "Submit a draft for approval (the requester)",
        None,
        {200: ChangeRequestSerializer, **_errors(401, 403, 404, 409, 422, 503, overrides=_FRESH_ERRORS)},
        lambda change, user, data: change_request_submit(request=change, user=user),
        "Freeze the statement and its preview; a Hive rule that blocks it answers hive_rule_violation.",
    ),
    "ChangeRequestRefreshView": Command(
        "change_requests_refresh",
        "Preview an open request again (the requester)",
        None,
        {200: ChangeRequestSerializer, **_errors(401, 403, 404, 409, 422, 503, overrides=_FRESH_ERRORS)},
        lambda change, user, data: change_request_refresh(request=change, user=user),
        "A new preview of a draft, submitted or approved request (after stale_preview, say). When nothing changed "
        "the request keeps its state and approvals; when it changed, a submitted or approved request waits for "
        "approval again and the approvals given on the old preview lapse (they can be given again).",
    ),
    "ChangeRequestApproveView": Command(
        "change_requests_approve",
        "Approve a submitted request (approvers; never one's own)",
        ApproveSerializer,
        {
            200: ChangeRequestSerializer,
            **_errors(
                400,
                401,
                403,
                404,
                409,
                422,
                503,
                overrides={
                    **_FRESH_ERRORS,
                    403: "permission_denied (not an approver, or the database is outside your scope) or "
                    "self_approval_forbidden: nobody approves their own request (four-eyes rule), not even an admin.",
                },
            ),
        },
        lambda change, user, data: change_request_approve(request=change, user=user, **data),
        "Record an approval; the request is approved once its policy's number of approvals is reached.",
    ),
    "ChangeRequestRejectView": Command(
        "change_requests_reject",
        "Reject a submitted request, saying why (approvers)",
        RejectSerializer,
        {
            200: ChangeRequestSerializer,
            **_errors(
                400,
                401,
                403,
                404,
                409,
                422,
                overrides={
                    400: "invalid_parameter: the comment is empty.",
                    403: "permission_denied or self_approval_forbidden (one's own request).",
                },
            ),
        },
        lambda change, user, data: change_request_reject(request=change, user=user, **data),
    ),
    "ChangeRequestExecuteView": Command(
        "change_requests_execute",
        "Execute an approved request now, as a background job, or schedule it",
        ExecuteSerializer,
        {
            202: OpenApiResponse(
                ChangeRequestSerializer, description="Executing: follow the job at job.url until done."
            ),
            200: OpenApiResponse(ChangeRequestSerializer, description="Scheduled for at."),
            **_errors(400, 401, 403, 404, 409, 422, 503, overrides=_FRESH_ERRORS),
        },
        lambda change, user, data: change_request_execute(request=change, user=user, **data),
        """
        Answers at once: 202 with the request executing and its job, or 200 with the request scheduled for ``at``.

        The requester or an admin may execute; a table that changed since the preview answers stale_preview.
        """,
        _executing_or_scheduled,
    ),
    "ChangeRequestReviseView": Command(
        "change_requests_revise",
        "Take a rejected request back as a draft, to revise and resubmit it (the requester)",
        None,
        {200: ChangeRequestSerializer, **_errors(401, 403, 404, 409, 422)},
        lambda change, user, data: change_request_revise(request=change, user=user),
        "The request becomes a draft again with its history (the rejections become comments); edit it with PATCH, "
        "then submit it.",
    ),
    "ChangeRequestCancelView": Command(
        "change_requests_cancel",
        "Cancel an open request (the requester)",
        None,
        {200: ChangeRequestSerializer, **_errors(401, 403, 404, 409, 422)},
        lambda change, user, data: change_request_cancel(request=change, user=user),
    ),
    "ChangeRequestRevertView": Command(
        "change_requests_revert",
        "Ask to revert a succeeded request (stewards)",
        RevertSerializer,
        {
            201: OpenApiResponse(ChangeRequestSerializer, description="The new revert request (a draft)."),
            **_errors(400, 401, 403, 404, 409, 422, 503),
        },
        lambda change, user, data: change_request_revert(request=change, user=user, **data),
        "A new draft that restores what the request changed; it is submitted and approved like any other.",
        lambda result: 201,
    ),
    "ChangeRequestSettleView": Command(
        "change_requests_settle",
        "Settle a request stuck executing whose job died (admins)",
        SettleSerializer,
        {
            200: ChangeRequestSerializer,
            **_errors(
                400,
                401,
                403,
                404,
                409,
                422,
                overrides={
                    400: "invalid_parameter: an unknown outcome, or no reason.",
                    403: "permission_denied: only admins settle a request.",
                    409: "invalid_state: the request is not executing, or its job is still alive (it reported "
                    "progress within CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS; details: state, action, job).",
                },
            ),
        },
        lambda change, user, data: settle_stuck_request(change, user, data["outcome"], data["reason"]),
        "Ends a request whose worker died while executing it (its job silent for longer than the heartbeat "
        "timeout) as succeeded or failed, with its job; audited as settle with the reason. Nothing runs: check "
        "the metastore (or let reconcile_executions decide) before choosing the outcome.",
    ),
}

ChangeRequestSubmitView = command_view("ChangeRequestSubmitView", COMMANDS["ChangeRequestSubmitView"])
ChangeRequestRefreshView = command_view("ChangeRequestRefreshView", COMMANDS["ChangeRequestRefreshView"])
ChangeRequestApproveView = command_view("ChangeRequestApproveView", COMMANDS["ChangeRequestApproveView"])
ChangeRequestRejectView = command_view("ChangeRequestRejectView", COMMANDS["ChangeRequestRejectView"])
ChangeRequestExecuteView = command_view("ChangeRequestExecuteView", COMMANDS["ChangeRequestExecuteView"])
ChangeRequestCancelView = command_view("ChangeRequestCancelView", COMMANDS["ChangeRequestCancelView"])
ChangeRequestReviseView = command_view("ChangeRequestReviseView", COMMANDS["ChangeRequestReviseView"])
ChangeRequestRevertView = command_view("ChangeRequestRevertView", COMMANDS["ChangeRequestRevertView"])
ChangeRequestSettleView = command_view("ChangeRequestSettleView", COMMANDS["ChangeRequestSettleView"])


class ChangeRequestApprovalsView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_approvals_list",
        parameters=[_PK],
        responses={200: ApprovalListSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """The decisions on a request, oldest first (approvals on an older preview have current false)."""
        change = get_change_request(pk)
        data = {"results": list(change.approvals.all())}
        return Response(ApprovalListSerializer(data, context=self.context(change=change)).data)


class ChangeRequestCommentsView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_comments_list",
        parameters=[_PK],
        responses={200: CommentListSerializer, **_errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """The comments on a request, oldest first."""
        change = get_change_request(pk)
        return Response(CommentListSerializer({"results": list(change.comments.all())}, context=self.context()).data)

    @_command(
        "change_requests_comments_create",
        "Comment on a request",
        CommentCreateSerializer,
        {
            201: CommentSerializer,
            **_errors(400, 401, 404, 422, overrides={400: "invalid_parameter: the comment is empty."}),
        },
    )
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = self.validated(CommentCreateSerializer)
        comment = change_request_comment(request=get_change_request(pk), user=request.user, **data)
        return Response(CommentSerializer(comment, context=self.context()).data, status=201)


# Jobs ----------------------------------------------------------------------------------------------------------------


class JobDetailView(OperationsAPIView):
    @extend_schema(
        tags=["jobs"],
        operation_id="jobs_retrieve",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH, description="Job number.")],
        responses={200: JobSerializer, **_errors(401, 404, overrides={404: "not_found: no such job."})},
    )
    def get(self, request: Request, pk: int) -> Response:
        """A background job's state, progress (0–100; partitions, files and bytes done of total, throughput, ETA),
        message, log and the Spark driver's log tail; poll until done is true."""
        return Response(JobSerializer(get_job(pk), context=self.context()).data)


_JOB_ERRORS = _errors(
    400,
    401,
    403,
    404,
    409,
    415,
    422,
    overrides={
        400: "invalid_parameter: a malformed Idempotency-Key.",
        403: "permission_denied: only an admin or the job's requester.",
        404: "not_found: no such job.",
        409: "invalid_state: the job is not in a state that allows it (details: job, state).",
    },
)


class JobCancelView(OperationsAPIView):
    @extend_schema(
        tags=["jobs"],
        operation_id="jobs_cancel",
        summary="Cancel a queued or running job, or discard a failed or errored one",
        parameters=[
            OpenApiParameter("id", int, OpenApiParameter.PATH, description="Job number."),
            IDEMPOTENCY_KEY_PARAMETER,
        ],
        request=None,
        responses={202: JobSerializer, **_JOB_ERRORS},
    )
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        """A queued job ends cancelled at once; a running one stops at its next safe point (a Spark driver is stopped
        and its staging removed; a merge stops between copy units; nothing is swapped or published), then ends
        cancelled: poll the job. Too late once its metastore transaction or publish started. Audited as
        cancel_job."""
        job = job_cancel(job=get_job(pk), user=request.user)
        return Response(JobSerializer(job, context=self.context()).data, status=202)


class JobResumeView(OperationsAPIView):
    @extend_schema(
        tags=["jobs"],
        operation_id="jobs_resume",
        summary="Queue a failed or errored job again (a Spark program skips the units it verified)",
        parameters=[
            OpenApiParameter("id", int, OpenApiParameter.PATH, description="Job number."),
            IDEMPOTENCY_KEY_PARAMETER,
        ],
        request=None,
        responses={202: JobSerializer, **_JOB_ERRORS},
    )
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        """The job is queued again with its verified units (completed); its program skips them. Audited as
        resume_job."""
        job = job_resume(job=get_job(pk), user=request.user)
        return Response(JobSerializer(job, context=self.context()).data, status=202)


# Audit ---------------------------------------------------------------------------------------------------------------

_AUDIT_FILTERS = [
    OpenApiParameter("actor", str, description="Only this actor (username, or job)."),
    OpenApiParameter("action", str, description="Only this action (create, submit, approve, execute, finish …)."),
    OpenApiParameter("outcome", str, description="Only this outcome."),
    OpenApiParameter("metastore", str, description="Only this metastore."),
    OpenApiParameter("database", str, description="Only this database (exact)."),
    OpenApiParameter("table", str, description="Only this table (exact name)."),
    OpenApiParameter(
        "request",
        str,
        pattern=r"^\s*#?[0-9]*\s*$",
        description="Only the records of this change request (and its execution): its number, optionally as #N "
        "(empty: any).",
    ),
]


class AuditListView(OperationsAPIView):
    @extend_schema(
        tags=["audit"],
        operation_id="audit_list",
        parameters=[*_AUDIT_FILTERS, _CURSOR, _PAGE_SIZE],
        responses={200: AuditPageSerializer, **_errors(400, 401)},
    )
    def get(self, request: Request) -> Response:
        """The append-only audit log, newest first, filtered (keyset pages). It cannot be changed: no writes."""
        params = request.query_params
        filters = AuditFilter.from_params(params)
        page = list_audit(filters, cursor=params.get("cursor", ""), size=page_size(params.get("page_size")))
        return self.page(page, AuditPageSerializer)


class AuditDetailView(OperationsAPIView):
    @extend_schema(
        tags=["audit"],
        operation_id="audit_retrieve",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH, description="Audit record number.")],
        responses={
            200: AuditRecordSerializer,
            **_errors(401, 404, overrides={404: "not_found: no such audit record."}),
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        """One audit record (read-only)."""
        record = AuditRecord.objects.filter(pk=pk).first()
        if record is None:
            raise NotFound("audit record", f"#{pk}")
        return Response(AuditRecordSerializer(record, context=self.context()).data)


class _ErrorsAsJson(BaseContentNegotiation):
    """The export's ``format`` names the file it returns, not a renderer: errors are always JSON."""

    def select_parser(self, request: Request, parsers: list[Any]) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        return renderers[0], renderers[0].media_type


class AuditExportView(OperationsAPIView):
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _ErrorsAsJson

    @extend_schema(
        tags=["audit"],
        operation_id="audit_export",
        parameters=[
            OpenApiParameter("format", str, enum=list(EXPORT_TYPES), default="csv", description="File format."),
            *_AUDIT_FILTERS,
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR, description="One row per record, chain order; a last line with the chain's anchor."
            ),
            (200, "application/json"): OpenApiResponse(
                AuditExportSerializer, description="The records (the columns of the CSV) and the chain's anchor."
            ),
            **_errors(400, 401, overrides={400: "invalid_parameter: an unknown format or a malformed filter."}),
        },
    )
    def get(self, request: Request) -> HttpResponse:
        """Every matching audit record, oldest first (the hash chain's order), as a CSV or JSON download."""
        fmt = request.query_params.get("format", "csv")
        if fmt not in EXPORT_TYPES:
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER, f"format must be csv or json, not '{fmt}'.", {"parameter": "format"}
            )
        records = audit_records(AuditFilter.from_params(request.query_params))
        response = HttpResponse(export_audit(records, fmt), content_type=EXPORT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="audit-{timezone.now():%Y%m%d-%H%M%S}.{fmt}"'
        return response

"""The commands on one change request (submit, approve, execute …): one table, one view class each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from operations.api.idempotency import idempotent
from operations.api.serializers import (
    ApproveSerializer,
    ChangeRequestSerializer,
    ExecuteSerializer,
    RejectSerializer,
    RevertSerializer,
    SettleSerializer,
)
from operations.api.views.base import FRESH_ERRORS, OperationsAPIView, command_schema, errors
from operations.choices import ChangeRequestState
from operations.models import ChangeRequest
from operations.selectors import get_change_request
from operations.services.change_requests import (
    change_request_approve,
    change_request_cancel,
    change_request_execute,
    change_request_refresh,
    change_request_reject,
    change_request_revert,
    change_request_revise,
    change_request_submit,
    settle_stuck_request,
)

__all__ = (
    "COMMANDS",
    "ChangeRequestApproveView",
    "ChangeRequestCancelView",
    "ChangeRequestExecuteView",
    "ChangeRequestRefreshView",
    "ChangeRequestRejectView",
    "ChangeRequestRevertView",
    "ChangeRequestReviseView",
    "ChangeRequestSettleView",
    "ChangeRequestSubmitView",
    "Command",
    "command_view",
)


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
    handler = command_schema(command.operation_id, command.summary, command.body, command.responses)(idempotent(post))
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
        {200: ChangeRequestSerializer, **errors(401, 403, 404, 409, 422, 503, overrides=FRESH_ERRORS)},
        lambda change, user, data: change_request_submit(request=change, user=user),
        "Freeze the statement and its preview; a Hive rule that blocks it answers hive_rule_violation.",
    ),
    "ChangeRequestRefreshView": Command(
        "change_requests_refresh",
        "Preview an open request again (the requester)",
        None,
        {200: ChangeRequestSerializer, **errors(401, 403, 404, 409, 422, 503, overrides=FRESH_ERRORS)},
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
            **errors(
                400,
                401,
                403,
                404,
                409,
                422,
                503,
                overrides={
                    **FRESH_ERRORS,
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
            **errors(
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
            **errors(400, 401, 403, 404, 409, 422, 503, overrides=FRESH_ERRORS),
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
        {200: ChangeRequestSerializer, **errors(401, 403, 404, 409, 422)},
        lambda change, user, data: change_request_revise(request=change, user=user),
        "The request becomes a draft again with its history (the rejections become comments); edit it with PATCH, "
        "then submit it.",
    ),
    "ChangeRequestCancelView": Command(
        "change_requests_cancel",
        "Cancel an open request (the requester)",
        None,
        {200: ChangeRequestSerializer, **errors(401, 403, 404, 409, 422)},
        lambda change, user, data: change_request_cancel(request=change, user=user),
    ),
    "ChangeRequestRevertView": Command(
        "change_requests_revert",
        "Ask to revert a succeeded request (stewards)",
        RevertSerializer,
        {
            201: OpenApiResponse(ChangeRequestSerializer, description="The new revert request (a draft)."),
            **errors(400, 401, 403, 404, 409, 422, 503),
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
            **errors(
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

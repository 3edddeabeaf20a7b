"""
The change-request API: thin views over ``operations.selectors`` (reads) and ``operations.services`` (actions), one
module per resource: the shared base (``base``), change requests (``change_requests``), the commands on one request
(``commands``), jobs, the audit log. Every view is importable from here.

Every POST (and the PATCH) validates its body, calls exactly one service and serializes what it returns. Views
only require authentication; who may do what is decided by the services, which refuse with the error vocabulary
shared with the browser (``permission_denied``, ``self_approval_forbidden``, ``invalid_state``, ``stale_preview``,
``hive_rule_violation`` …), rendered as ``{"code", "message", "details"}`` by the API's exception handler.
Actions honour an ``Idempotency-Key`` header (:mod:`operations.api.idempotency`).
"""

from __future__ import annotations

from operations.api.views.audit import AuditDetailView, AuditExportView, AuditListView
from operations.api.views.change_requests import (
    ChangeRequestApprovalsView,
    ChangeRequestCommentsView,
    ChangeRequestDataScopeChartsView,
    ChangeRequestDetailView,
    ChangeRequestListView,
)
from operations.api.views.commands import (
    COMMANDS,
    ChangeRequestApproveView,
    ChangeRequestCancelView,
    ChangeRequestExecuteView,
    ChangeRequestRefreshView,
    ChangeRequestRejectView,
    ChangeRequestRevertView,
    ChangeRequestReviseView,
    ChangeRequestSettleView,
    ChangeRequestSubmitView,
    Command,
    command_view,
)
from operations.api.views.jobs import JobCancelView, JobDetailView, JobResumeView

__all__ = (
    "COMMANDS",
    "AuditDetailView",
    "AuditExportView",
    "AuditListView",
    "ChangeRequestApprovalsView",
    "ChangeRequestApproveView",
    "ChangeRequestCancelView",
    "ChangeRequestCommentsView",
    "ChangeRequestDataScopeChartsView",
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

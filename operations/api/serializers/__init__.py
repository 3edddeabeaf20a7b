"""
Serializers of the change-request API, one module per resource: the shared bases (``base``), the bodies it accepts
(``inputs``), stored previews (``previews``), change requests with their approvals and comments
(``change_requests``), jobs, the audit log. Every name is importable from here.
"""

from __future__ import annotations

from operations.api.serializers.audit import (
    AuditExportRowSerializer,
    AuditExportSerializer,
    AuditPageSerializer,
    AuditRecordSerializer,
)
from operations.api.serializers.base import RISKS
from operations.api.serializers.change_requests import (
    ActionSerializer,
    ApprovalListSerializer,
    ApprovalSerializer,
    ChangeRequestPageSerializer,
    ChangeRequestRowSerializer,
    ChangeRequestSerializer,
    CommentListSerializer,
    CommentSerializer,
)
from operations.api.serializers.inputs import (
    ApproveSerializer,
    ChangeRequestCreateSerializer,
    ChangeRequestUpdateSerializer,
    CommentCreateSerializer,
    ExecuteSerializer,
    RejectSerializer,
    RevertSerializer,
    SettleSerializer,
    spec_from_operation,
)
from operations.api.serializers.jobs import JobSerializer
from operations.api.serializers.previews import MergePreviewSerializer, PreviewSerializer

__all__ = (
    "RISKS",
    "ActionSerializer",
    "ApprovalListSerializer",
    "ApprovalSerializer",
    "ApproveSerializer",
    "AuditExportRowSerializer",
    "AuditExportSerializer",
    "AuditPageSerializer",
    "AuditRecordSerializer",
    "ChangeRequestCreateSerializer",
    "ChangeRequestPageSerializer",
    "ChangeRequestRowSerializer",
    "ChangeRequestSerializer",
    "ChangeRequestUpdateSerializer",
    "CommentCreateSerializer",
    "CommentListSerializer",
    "CommentSerializer",
    "ExecuteSerializer",
    "JobSerializer",
    "MergePreviewSerializer",
    "PreviewSerializer",
    "RejectSerializer",
    "RevertSerializer",
    "SettleSerializer",
    "spec_from_operation",
)

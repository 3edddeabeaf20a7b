"""The console's own records: executions, change requests, approvals, jobs and the audit log."""

from operations.models.audit import AuditRecord
from operations.models.change_requests import Approval, ChangeRequest, Comment
from operations.models.executions import DONE, CapturedRows, DirectoryMoveRecord, Execution
from operations.models.idempotency import IdempotencyKey
from operations.models.jobs import Job, JobLogEntry
from operations.models.merges import MergeImport
from operations.models.notifications import Audience, Notification, NotificationPreference, Webhook
from operations.models.relocations import Relocation

__all__ = (
    "DONE",
    "Approval",
    "Audience",
    "AuditRecord",
    "CapturedRows",
    "ChangeRequest",
    "Comment",
    "DirectoryMoveRecord",
    "Execution",
    "IdempotencyKey",
    "Job",
    "JobLogEntry",
    "MergeImport",
    "Notification",
    "NotificationPreference",
    "Relocation",
    "Webhook",
)

"""Change requests as the API returns them: the list's rows, one request in full, its approvals and comments."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from operations.api.serializers.base import RISKS, PageSerializer, link, operation_schema
from operations.api.serializers.previews import PreviewField
from operations.choices import ChangeRequestState, Decision, JobState
from operations.database_specs import DATABASE_SPEC_KINDS
from operations.models import Approval, ChangeRequest, Execution, Job
from operations.selectors import change_request_actions
from operations.specs import SPEC_KINDS

__all__ = (
    "ActionSerializer",
    "ApprovalListSerializer",
    "ApprovalSerializer",
    "ChangeRequestPageSerializer",
    "ChangeRequestRowSerializer",
    "ChangeRequestSerializer",
    "CommentListSerializer",
    "CommentSerializer",
)


_MERGE_OPERATION = {
    "type": "object",
    "description": "A merge (kind merge: source, target, databases, renames, location_rules, arriving) or its revert "
    "(kind merge_revert: execution, include_hive_rows).",
    "required": ["kind"],
    "properties": {"kind": {"type": "string", "enum": ["merge", "merge_revert"]}},
    "additionalProperties": True,
}

_PRIVILEGE_OPERATION = {
    "type": "object",
    "description": "An access-control statement (kind privilege: action, privileges, database, table, principals, "
    "roles, option, columns, grantor) or its revert (kind privilege_revert: execution).",
    "required": ["kind"],
    "properties": {"kind": {"type": "string", "enum": ["privilege", "privilege_revert"]}},
    "additionalProperties": True,
}


_DATABASE_OPERATION = {
    "type": "object",
    "description": "A database statement (issue 27): create_database, alter_database, drop_database with its `name` "
    "and fields, or revert_database (its `execution`).",
    "required": ["kind", "name"],
    "properties": {"kind": {"type": "string", "enum": sorted(DATABASE_SPEC_KINDS)}, "name": {"type": "string"}},
    "additionalProperties": True,
}


@extend_schema_field(
    {
        "oneOf": [
            operation_schema(
                [*SPEC_KINDS, "revert"],
                "The structured operation. A revert request carries the inverse operation, or kind revert when it "
                "restores the rows of its execution's before-image.",
            ),
            _MERGE_OPERATION,
            _DATABASE_OPERATION,
            _PRIVILEGE_OPERATION,
        ]
    }
)
class OperationField(serializers.JSONField):
    """The request's structured operation, as stored."""


class ExecutionSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=Execution.State.choices)
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_ms = serializers.IntegerField(allow_null=True)
    expected_counts = serializers.DictField(help_text="Rows per metastore table: {insert, update, delete}.")
    actual_counts = serializers.DictField()
    error = serializers.CharField()


class JobSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=JobState.choices)
    progress = serializers.IntegerField(help_text="0 to 100.")
    message = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, job: Job) -> str:
        return link("job-detail", self.context, pk=job.pk)


class ChangeRequestRowSerializer(serializers.Serializer):
    """A change request of the list (its preview is on its own URL)."""

    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    state = serializers.ChoiceField(choices=ChangeRequestState.choices)
    state_label = serializers.CharField(source="get_state_display")
    metastore = serializers.CharField()
    database = serializers.CharField(source="database_name")
    table = serializers.CharField(source="table_name")
    statement = serializers.CharField(help_text="The normalized Hive statement the preview was made for.")
    operation = OperationField()
    reason = serializers.CharField()
    risk = serializers.ChoiceField(choices=RISKS)
    requester = serializers.CharField(source="requester.username")
    required_approvals = serializers.IntegerField()
    approvals_given = serializers.IntegerField(help_text="Approvals given on the current preview or before.")
    revert_of = serializers.IntegerField(source="revert_of_id", allow_null=True, help_text="The request it reverts.")
    scheduled_for = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(help_text="Why the execution failed; empty otherwise.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    job = serializers.SerializerMethodField(help_text="The latest job executing the request; null before.")

    def get_url(self, change: ChangeRequest) -> str:
        return link("change-request-detail", self.context, pk=change.pk)

    @extend_schema_field(JobSummarySerializer(allow_null=True))
    def get_job(self, change: ChangeRequest) -> dict[str, Any] | None:
        job = next(iter(change.jobs.all()), None)  # newest first; prefetched on lists
        return JobSummarySerializer(job, context=self.context).data if job else None


class ActionSerializer(serializers.Serializer):
    """Whether the caller may take one action now, and if not why (the words and code a refusal answers with)."""

    allowed = serializers.BooleanField()
    reason = serializers.CharField(help_text="Why not; empty when allowed.")
    code = serializers.CharField(allow_null=True, help_text="The error code a refusal answers with; null when allowed.")


class ChangeRequestSerializer(ChangeRequestRowSerializer):
    """One change request with its preview, policy, execution and links to its approvals, comments and audit."""

    preview = PreviewField(help_text="The preview the request was submitted (or drafted) with.")
    fingerprint = serializers.CharField()
    policy = serializers.DictField(help_text="Why this many approvals: {rules, approvals}.")
    execution = ExecutionSummarySerializer(allow_null=True)
    approvals_url = serializers.SerializerMethodField()
    comments_url = serializers.SerializerMethodField()
    audit_url = serializers.SerializerMethodField()
    actions = serializers.SerializerMethodField(
        help_text="For the caller: each action (edit, submit, refresh, approve, reject, execute, schedule, cancel, "
        "revert, comment, settle) and whether it is allowed now, else why (the lifecycle's checks, as the pages show "
        "them). A table changed since the preview is found when approving or executing (stale_preview)."
    )

    @extend_schema_field(serializers.DictField(child=ActionSerializer()))
    def get_actions(self, change: ChangeRequest) -> dict[str, dict[str, Any]]:
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if user is None:  # no caller to explain to (None would be the system itself)
            return {}
        return {
            name: {"allowed": allowed.ok, "reason": allowed.reason, "code": None if allowed else str(allowed.code)}
            for name, allowed in change_request_actions(change, user).items()
        }

    def get_approvals_url(self, change: ChangeRequest) -> str:
        return link("change-request-approvals", self.context, pk=change.pk)

    def get_comments_url(self, change: ChangeRequest) -> str:
        return link("change-request-comments", self.context, pk=change.pk)

    def get_audit_url(self, change: ChangeRequest) -> str:
        return f"{link('audit-list', self.context)}?request={change.pk}"


class ChangeRequestPageSerializer(PageSerializer):
    results = ChangeRequestRowSerializer(many=True)


class ApprovalSerializer(serializers.Serializer):
    """One approver's decision."""

    id = serializers.IntegerField()
    approver = serializers.CharField(source="approver.username")
    decision = serializers.ChoiceField(choices=Decision.choices)
    comment = serializers.CharField()
    fingerprint = serializers.CharField(help_text="The preview the approver saw.")
    current = serializers.SerializerMethodField(help_text="Given on the request's current preview.")
    created_at = serializers.DateTimeField()

    def get_current(self, approval: Approval) -> bool:
        return approval.fingerprint == self.context["change"].fingerprint


class ApprovalListSerializer(serializers.Serializer):
    results = ApprovalSerializer(many=True)


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    author = serializers.CharField(source="author.username")
    body = serializers.CharField()
    created_at = serializers.DateTimeField()


class CommentListSerializer(serializers.Serializer):
    results = CommentSerializer(many=True)

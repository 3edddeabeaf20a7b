"""Change requests: a previewed change that someone else approves before it runs."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from operations.choices import OPEN_STATES, TERMINAL_STATES, ChangeRequestState, Decision

__all__ = ("Approval", "ChangeRequest", "Comment")


class ChangeRequest(models.Model):
    """One ALTER on one table of one metastore, with its preview, approvals, execution and revert."""

    metastore = models.CharField(max_length=64)
    database_name = models.CharField(max_length=128)
    table_name = models.CharField(max_length=256)
    statement = models.TextField(help_text="The normalized statement the preview was made for.")
    operation = models.JSONField(help_text="The structured operation (spec) the statement parses to.")
    preview = models.JSONField(help_text="The preview summary shown to approvers.")
    fingerprint = models.CharField(max_length=64, help_text="What the preview read; execution requires it unchanged.")
    risk = models.CharField(max_length=8)
    required_approvals = models.PositiveSmallIntegerField(default=1)
    policy = models.JSONField(default=dict, help_text="Why this many approvals: the rule that matched.")
    state = models.CharField(max_length=16, choices=ChangeRequestState.choices, default=ChangeRequestState.DRAFT)
    requester = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="change_requests")
    reason = models.TextField(blank=True)
    scheduled_for = models.DateTimeField(null=True, blank=True)
    execution = models.OneToOneField(
        "operations.Execution", null=True, blank=True, on_delete=models.PROTECT, related_name="change_request"
    )
    revert_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="revert_requests"
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    planned_at = models.DateTimeField(
        null=True, blank=True, help_text="When the stored plan was built (approving reuses it; execution rebuilds it)."
    )

    class Meta:
        ordering = ("-created_at",)
        indexes = [
            models.Index(fields=["state", "-created_at"]),
            models.Index(fields=["metastore", "database_name", "table_name"]),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.statement}"

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def state_colour(self) -> str:
        return ChangeRequestState.colour(self.state)

    @property
    def approvals_given(self) -> int:
        return sum(1 for a in self.approvals.all() if a.decision == Decision.APPROVE)


class Approval(models.Model):
    """One approver's decision on a request (approve or reject, with a comment)."""

    request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="approvals")
    approver = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="approvals")
    decision = models.CharField(max_length=8, choices=Decision.choices)
    comment = models.TextField(blank=True)
    fingerprint = models.CharField(max_length=64, help_text="The preview fingerprint the approver saw.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("created_at",)
        constraints = [models.UniqueConstraint(fields=["request", "approver"], name="one_decision_per_approver")]

    def __str__(self) -> str:
        return f"{self.approver} {self.decision} #{self.request_id}"


class Comment(models.Model):
    """A remark on a request."""

    request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="request_comments")
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("created_at",)

    def __str__(self) -> str:
        return f"{self.author} on #{self.request_id}"

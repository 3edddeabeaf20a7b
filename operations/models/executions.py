"""Executions of previewed plans: the audit record, the before-image and the directory-move journal."""

from __future__ import annotations

from django.db import models

__all__ = ("DONE", "DirectoryMoveRecord", "Execution")


class Execution(models.Model):
    """One execution of a preview on a metastore: who, when, what, the counts and how to undo it."""

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed (nothing changed)"
        RECONCILED = "reconciled", "Reconciled after a crash"

    class Source(models.TextChoices):
        CLI = "cli", "Operator (hive_ddl)"
        UI = "ui", "Browser"
        API = "api", "API"

    metastore = models.CharField(max_length=64)
    database_name = models.CharField(max_length=128)
    table_name = models.CharField(max_length=256)
    statement = models.TextField()
    operation = models.JSONField()
    preview = models.JSONField(help_text="The preview summary this execution ran.")
    fingerprint = models.CharField(max_length=64)
    actor = models.CharField(max_length=150)
    source = models.CharField(max_length=8, choices=Source.choices)
    reason = models.TextField(blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    expected_counts = models.JSONField(default=dict)
    actual_counts = models.JSONField(default=dict)
    before_image = models.JSONField(default=dict, help_text="Enough to restore every changed row exactly.")
    error = models.TextField(blank=True)
    commit_marker = models.CharField(
        max_length=128, blank=True,
        help_text="The SEQUENCE_TABLE row the metastore transaction writes: present after a crash iff it committed.",
    )  # fmt: skip
    reverts = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="revert_attempts",
        help_text="The execution this one undoes (an attempt: only a succeeded or reconciled one undid it).",
    )  # fmt: skip

    class Meta:
        ordering = ("-started_at",)
        indexes = [models.Index(fields=["metastore", "database_name", "table_name"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.statement}"

    @property
    def reverted_by(self) -> Execution | None:
        """The revert that undid this execution: a succeeded or reconciled attempt (a failed or refused one left it
        in force, a running one is not settled yet)."""
        return self.revert_attempts.filter(state__in=DONE).order_by("pk").first()

    @property
    def revert_running(self) -> Execution | None:
        """A revert attempt still running (or left running by a dead process until ``reconcile_executions``)."""
        return self.revert_attempts.filter(state=self.State.RUNNING).order_by("pk").first()


DONE = (Execution.State.SUCCEEDED, Execution.State.RECONCILED)  # the states of an execution whose change holds


class DirectoryMoveRecord(models.Model):
    """The journal of one directory move, written before the move and updated after each step."""

    class State(models.TextChoices):
        INTENDED = "intended", "About to move"
        MOVED = "moved", "Moved, metastore not yet committed"
        COMMITTED = "committed", "Moved and committed"
        RESTORED = "restored", "Moved back"

    execution = models.ForeignKey(Execution, on_delete=models.PROTECT, related_name="moves")
    source = models.CharField(max_length=4000)
    destination = models.CharField(max_length=4000)
    state = models.CharField(max_length=16, choices=State.choices, default=State.INTENDED)
    created_parents = models.PositiveSmallIntegerField(
        default=0, help_text="Parent directories of the destination the move created (moving back removes them)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.source} → {self.destination} ({self.state})"

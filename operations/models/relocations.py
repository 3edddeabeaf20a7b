"""Relocations: the data a relocate job copied, where the source is kept, and when it goes."""

from __future__ import annotations

from django.db import models

from operations.models.executions import Execution

__all__ = ("Relocation",)


class Relocation(models.Model):
    """The data side of one relocate execution (the swap): the copied units with each side's files, their size and
    the copy's duration, and the source kept until ``keep_until`` (a revert swaps back meanwhile); the cleanup then
    removes the source, or, after a revert, the copy, or after a swap that never committed, the copy. It is recorded
    before the swap commits (``PENDING``), so a worker dying right after the commit still leaves it."""

    class State(models.TextChoices):
        PENDING = "pending", "Copied; the swap not settled, or its unused copy not yet removed"
        SWAPPED = "swapped", "Swapped; source kept"
        CLEANED = "cleaned", "Source removed after the retention time"
        REVERTED = "reverted", "Swapped back; the copy removed"
        ABANDONED = "abandoned", "The swap did not commit; the copy removed"

    execution = models.OneToOneField(Execution, on_delete=models.PROTECT, related_name="relocation")
    metastore = models.CharField(max_length=64)
    units = models.JSONField(
        help_text="[{key, source, destination, files: {source: [[relative, size]], destination: [...]}}] as "
        "copied (each side's files as the job left them); a unit the cleanup removed gets removed: true."
    )
    kept = models.JSONField(
        default=list, blank=True,
        help_text="What the last cleanup kept and why: [{key, location, reason}] (retried on the next run).",
    )  # fmt: skip
    files = models.BigIntegerField()
    bytes = models.BigIntegerField()
    copy_seconds = models.FloatField()
    keep_until = models.DateTimeField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    cleaned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["state", "keep_until"], name="relocation_due_idx")]

    def __str__(self) -> str:
        return f"Relocation of execution #{self.execution_id} ({self.state})"

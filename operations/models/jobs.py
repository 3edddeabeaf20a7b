"""Background jobs: queued work with progress and a log the browser polls."""

from __future__ import annotations

from django.db import models

from operations.choices import JobState

__all__ = ("Job",)


class Job(models.Model):
    """One unit of background work (executing a change request), with progress 0–100 and a log."""

    kind = models.CharField(max_length=32)
    change_request = models.ForeignKey(
        "operations.ChangeRequest", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    log = models.JSONField(default=list)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="When the worker last reported progress; a silent job counts as dead."
    )

    class Meta:
        ordering = ("-created_at",)
        indexes = [models.Index(fields=["state", "created_at"])]

    def __str__(self) -> str:
        return f"job #{self.pk} {self.kind} {self.state}"

    @property
    def is_done(self) -> bool:
        return self.state in (JobState.SUCCEEDED, JobState.FAILED)

"""The append-only audit log: each record carries the hash of the one before it."""

from __future__ import annotations

from typing import Any

from django.db import models

__all__ = ("AuditRecord",)


class AuditRecordQuerySet(models.QuerySet):
    """Audit records are never updated or deleted in bulk."""

    def update(self, **kwargs: Any) -> int:
        raise PermissionError("Audit records are append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise PermissionError("Audit records are append-only.")


class AuditRecord(models.Model):
    """One action: who did what to which table, with the preview summary, outcome and counts."""

    created_at = models.DateTimeField()
    actor = models.CharField(max_length=150)
    action = models.CharField(max_length=32)
    request_id_ref = models.BigIntegerField(null=True, blank=True, db_index=True, help_text="ChangeRequest id")
    execution_id_ref = models.BigIntegerField(null=True, blank=True, help_text="Execution id")
    metastore = models.CharField(max_length=64, blank=True)
    database_name = models.CharField(max_length=128, blank=True)
    table_name = models.CharField(max_length=256, blank=True)
    statement = models.TextField(blank=True)
    preview_summary = models.JSONField(default=dict)
    outcome = models.CharField(max_length=32)
    counts = models.JSONField(default=dict)
    details = models.JSONField(default=dict)
    previous_hash = models.CharField(max_length=64, unique=True, help_text="Unique: the chain cannot fork.")
    hash = models.CharField(max_length=64, unique=True)

    objects = AuditRecordQuerySet.as_manager()

    class Meta:
        ordering = ("id",)
        indexes = [models.Index(fields=["metastore", "database_name", "table_name"])]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.outcome}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise PermissionError("Audit records are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise PermissionError("Audit records are append-only.")

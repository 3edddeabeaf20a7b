"""Idempotency keys: a retried API call with the same key gets the first answer, not a second action."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = ("IdempotencyKey",)


class IdempotencyKey(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    scope = models.CharField(max_length=255, help_text="Method and path the key was used on.")
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField(null=True)
    response_body = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key", "scope"], name="one_use_per_key")]

    def __str__(self) -> str:
        return f"{self.key} ({self.scope})"

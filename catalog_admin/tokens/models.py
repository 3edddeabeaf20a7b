"""
An API token: ``Authorization: Token cat_…`` for automation, one of many a user may hold.

Only the SHA-256 of the secret is stored (the secret is 256 random bits, so a plain digest is enough); the first
characters (``prefix``) are kept to tell tokens apart in lists. Issued, used and revoked by
``catalog_admin.auth.tokens``.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

__all__ = ("ApiToken",)


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(default=timezone.now)
    expires = models.DateTimeField()
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created", "-id")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def state(self, now: datetime | None = None) -> str:
        """``active``, ``expired`` or ``revoked``."""
        if self.revoked is not None:
            return "revoked"
        return "expired" if self.expires <= (now or timezone.now()) else "active"

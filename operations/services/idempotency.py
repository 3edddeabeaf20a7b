"""Forgetting Idempotency-Keys once their replay window (``CATALOG_IDEMPOTENCY_KEY_TTL``) has passed."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.utils import timezone

from operations.models import IdempotencyKey

__all__ = ("purge_expired_idempotency_keys",)


def purge_expired_idempotency_keys(*, now: datetime | None = None) -> int:
    """Delete the keys used longer ago than the TTL; returns how many."""
    expired = (now or timezone.now()) - settings.CATALOG_IDEMPOTENCY_KEY_TTL
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=expired).delete()
    return deleted

"""Send the outbox's due notifications (the worker's ``notifications`` chore): e-mail through Django's backend,
webhooks as a JSON POST; a failure is retried with a growing wait, and after the last attempt kept as failed."""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.db.models import Q
from django.utils import timezone

from catalog_admin.utils.text import first_line
from operations.models import Notification

__all__ = ("DeliveryReport", "deliver_due_notifications", "retry_delay")

logger = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 30
LONGEST_WAIT_SECONDS = 3600


@dataclass(frozen=True)
class DeliveryReport:
    sent: int
    retrying: int
    given_up: int

    def lines(self) -> list[str]:
        if not (self.sent or self.retrying or self.given_up):
            return []
        return [f"Notifications: {self.sent} sent, {self.retrying} to retry, {self.given_up} given up."]


def retry_delay(attempts: int) -> timedelta:
    """How long to wait after the ``attempts``-th failure: 30 s, doubling, at most an hour."""
    return timedelta(seconds=min(FIRST_RETRY_SECONDS * 2 ** (attempts - 1), LONGEST_WAIT_SECONDS))


def deliver_due_notifications(*, now: datetime | None = None, limit: int = 200) -> DeliveryReport:
    """Send up to ``limit`` pending notifications whose time has come, oldest first."""
    now = now or timezone.now()
    due = list(
        Notification.objects.filter(state=Notification.State.PENDING, next_attempt_at__lte=now)
        .select_related("webhook")
        .order_by("next_attempt_at", "pk")[:limit]
    )
    sent = retrying = given_up = 0
    connection = get_connection(fail_silently=False) if any(n.channel == "email" for n in due) else None
    for notification in due:
        error = _send(notification, connection)
        if error is None:
            _settle(notification, state=Notification.State.SENT, sent_at=timezone.now(), last_error="")
            sent += 1
            continue
        attempts = notification.attempts + 1
        if attempts >= settings.CATALOG_NOTIFICATION_MAX_ATTEMPTS:
            _settle(notification, state=Notification.State.FAILED, attempts=attempts, last_error=error)
            logger.warning("Notification %s given up after %s attempts: %s", notification.pk, attempts, error)
            given_up += 1
        else:
            _settle(notification, attempts=attempts, last_error=error, next_attempt_at=now + retry_delay(attempts))
            retrying += 1
    return DeliveryReport(sent, retrying, given_up)


def _send(notification: Notification, connection: BaseEmailBackend | None) -> str | None:
    """Send one notification; the reason it failed, or None."""
    try:
        if notification.channel == Notification.Channel.EMAIL:
            EmailMessage(
                notification.subject, notification.body, settings.DEFAULT_FROM_EMAIL, [notification.recipient],
                connection=connection,
            ).send()  # fmt: skip
        else:
            _post(notification)
    except Exception as exc:  # a mail server or chat service's failure is retried, never raised into the worker
        return first_line(exc) or type(exc).__name__
    return None


def _post(notification: Notification) -> None:
    hook = notification.webhook
    if hook is None or not hook.active:
        raise RuntimeError("the webhook was removed or switched off")
    post = urllib.request.Request(  # noqa: S310 (an admin-configured http(s) URL: URLField validated)
        hook.url,
        data=notification.body.encode(),
        headers={"Content-Type": "application/json", "User-Agent": "catalog-admin"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(post, timeout=settings.CATALOG_WEBHOOK_TIMEOUT_SECONDS) as answer:  # noqa: S310
            answer.read(1024)
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"{hook.name} answered HTTP {exc.code}") from exc


def _settle(notification: Notification, **fields: object) -> None:
    Notification.objects.filter(Q(pk=notification.pk), Q(state=Notification.State.PENDING)).update(**fields)

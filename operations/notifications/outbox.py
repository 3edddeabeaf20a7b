"""Write a transition's notifications into the outbox, in the transition's own transaction: a transition that
commits has its messages queued, one that rolls back has none, and no request waits for a mail server."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from operations.models import ChangeRequest, Notification
from operations.notifications.messages import email_body, subject_line, webhook_payload
from operations.notifications.recipients import audiences_of, email_recipients, webhooks_for

__all__ = ("notify_transition",)


def notify_transition(request: ChangeRequest, outcome: str, actor: AbstractBaseUser | None) -> list[Notification]:
    """Queue the e-mails (when e-mail is configured) and webhook posts a transition to ``outcome`` calls for."""
    now = timezone.now()
    subject = subject_line(request, outcome)
    rows = []
    if getattr(settings, "CATALOG_EMAIL_ENABLED", False):  # set by mail_config.email_settings
        rows += [
            Notification(
                request=request, audience=recipient.audience, outcome=outcome, channel=Notification.Channel.EMAIL,
                recipient=recipient.email, subject=subject,
                body=email_body(request, outcome, actor, recipient.audience), next_attempt_at=now,
            )
            for recipient in email_recipients(request, outcome, actor)
        ]  # fmt: skip
    hooks = webhooks_for(request, outcome)
    if hooks:
        payload = webhook_payload(request, outcome, actor)
        audience = audiences_of(outcome)[0]
        rows += [
            Notification(
                request=request, audience=audience, outcome=outcome, channel=Notification.Channel.WEBHOOK,
                recipient=hook.name, webhook=hook, subject=subject, body=_json(payload), next_attempt_at=now,
            )
            for hook in hooks
        ]  # fmt: skip
    return Notification.objects.bulk_create(rows)


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)

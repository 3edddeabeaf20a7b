"""The words of a notification: an e-mail's subject and body, and a webhook's Slack-compatible JSON."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.urls import reverse

from operations.models import Audience, ChangeRequest

__all__ = ("email_body", "request_link", "subject_line", "webhook_payload")

STATEMENT_CHARS = 500  # a longer statement is cut in a message (the request page has it whole)


def subject_line(request: ChangeRequest, outcome: str) -> str:
    return f"[catalog-admin] #{request.pk} {outcome}: {request.database_name}.{request.table_name}"[:255]


def request_link(request: ChangeRequest) -> str:
    """The request page's address (absolute when ``CATALOG_BASE_URL`` is set)."""
    path = reverse("operations:detail", args=[request.pk])
    return f"{settings.CATALOG_BASE_URL.rstrip('/')}{path}"


def email_body(request: ChangeRequest, outcome: str, actor: AbstractBaseUser | None, audience: str) -> str:
    by = f" by {actor.get_username()}" if actor is not None else ""
    lines = [
        f"Change request #{request.pk} is now {request.get_state_display().lower()} ({outcome}){by}.",
        "",
        f"Metastore: {request.metastore}",
        f"Statement: {_cut(request.statement)}",
        f"Reason: {request.reason or '(none given)'}",
        f"Risk: {request.risk}",
        f"Approvals: {request.approvals_given}/{request.required_approvals}",
    ]
    if request.error:
        lines.append(f"Error: {_cut(request.error)}")
    lines += [
        "",
        f"Open it: {request_link(request)}",
        "",
        f"You receive this as: {Audience(audience).label}. Choose what you receive on your notifications page "
        f"({settings.CATALOG_BASE_URL.rstrip('/')}{reverse('account-notifications')}).",
    ]
    return "\n".join(lines) + "\n"


def webhook_payload(request: ChangeRequest, outcome: str, actor: AbstractBaseUser | None) -> dict[str, Any]:
    """Slack's incoming-webhook shape (``text``, mrkdwn), which Mattermost, Rocket.Chat and Teams' Slack-compatible
    endpoints take as well."""
    by = f" by {actor.get_username()}" if actor is not None else ""
    target = f"{request.database_name}.{request.table_name}" if request.table_name else request.database_name
    text = (
        f"*<{request_link(request)}|#{request.pk}> {outcome}*{by}: `{target}` on {request.metastore} "
        f"(risk {request.risk}, approvals {request.approvals_given}/{request.required_approvals})\n"
        f"```{_cut(request.statement)}```"
    )
    return {"text": text}


def _cut(text: str) -> str:
    return text if len(text) <= STATEMENT_CHARS else text[: STATEMENT_CHARS - 1] + "…"

"""Email notifications to approvers and the requester on each transition (Django's email backend)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db.models import Q

from catalog_admin.roles import Role
from operations.models import ChangeRequest

__all__ = ("notify_transition",)

logger = logging.getLogger(__name__)


def notify_transition(request: ChangeRequest, outcome: str, actor: AbstractBaseUser | None) -> None:
    """Tell the requester and the approvers what happened (failures are logged, never raised; off without e-mail)."""
    if not getattr(settings, "CATALOG_EMAIL_ENABLED", False):
        return
    recipients = set(_approver_emails()) | {request.requester.email}
    if actor is not None and getattr(actor, "email", ""):
        recipients.discard(actor.email)
    recipients.discard("")
    if not recipients:
        return
    subject = f"[catalog-admin] #{request.pk} {outcome}: {request.database_name}.{request.table_name}"
    body = (
        f"Change request #{request.pk} is now {request.get_state_display().lower()} ({outcome})"
        f"{' by ' + actor.get_username() if actor else ''}.\n\n"
        f"Metastore: {request.metastore}\nStatement: {request.statement}\nRisk: {request.risk}\n"
        f"Approvals: {request.approvals_given}/{request.required_approvals}\n"
    )
    try:
        send_mail(subject, body, getattr(settings, "DEFAULT_FROM_EMAIL", None), sorted(recipients))
    except Exception:  # notification is best effort; the transition already happened
        logger.exception("Could not send the notification for request %s", request.pk)


def _approver_emails() -> list[str]:
    users = get_user_model().objects.filter(is_active=True).exclude(email="")
    return list(
        users.filter(Q(groups__name__in=[Role.APPROVER, Role.ADMIN]) | Q(is_superuser=True))
        .distinct()
        .values_list("email", flat=True)
    )

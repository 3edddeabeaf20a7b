"""Who hears of a transition: the people who can act on it, each by their own choice, and the webhooks in scope."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from django.contrib.auth.models import AbstractBaseUser, User
from django.db.models import Q, QuerySet

from catalog_admin.roles import Role
from operations.lifecycle import databases_touched
from operations.models import Audience, ChangeRequest, Webhook
from operations.policy import can_approve

__all__ = ("Recipient", "audiences_of", "email_recipients", "webhooks_for")

# The transitions each audience hears of (an outcome not named here tells nobody: a comment, a refresh).
AUDIENCE_OUTCOMES: dict[str, frozenset[str]] = {
    Audience.AWAITING_APPROVAL: frozenset({"submitted", "approval recorded"}),
    Audience.DECISIONS: frozenset({"approved", "rejected", "cancelled"}),
    Audience.OUTCOMES: frozenset({"succeeded", "failed", "errored"}),
    Audience.FAILED_JOBS: frozenset({"failed", "errored"}),
}


@dataclass(frozen=True)
class Recipient:
    """One e-mail address and why it hears of the transition."""

    email: str
    audience: str


def audiences_of(outcome: str) -> tuple[str, ...]:
    """The audiences of a transition ending in ``outcome``."""
    return tuple(audience for audience, outcomes in AUDIENCE_OUTCOMES.items() if outcome in outcomes)


def email_recipients(request: ChangeRequest, outcome: str, actor: AbstractBaseUser | None) -> list[Recipient]:
    """Who gets an e-mail: approvers whose scope covers the change and who have not decided on this plan (while it
    waits), the requester (decisions and outcomes), operators (failures); never the actor; each address once, only
    for what its user chose to receive."""
    found: dict[str, Recipient] = {}
    for audience in audiences_of(outcome):
        for user in _audience_users(request, audience):
            if actor is not None and user.pk == actor.pk:
                continue
            found.setdefault(user.email.lower(), Recipient(user.email, audience))
    return list(found.values())


def webhooks_for(request: ChangeRequest, outcome: str) -> list[Webhook]:
    """The active webhooks whose metastore, database pattern and audiences cover this transition."""
    audiences = set(audiences_of(outcome))
    if not audiences:
        return []
    databases = databases_touched(request)
    hooks = Webhook.objects.filter(active=True).filter(Q(metastore="") | Q(metastore=request.metastore))
    return [
        hook
        for hook in hooks.order_by("name")
        if _covers(hook.database_pattern, databases) and (not hook.audiences or audiences & set(hook.audiences))
    ]


def _covers(pattern: str, databases: Iterable[str]) -> bool:
    return not pattern or any(fnmatchcase(name, pattern) for name in databases)


def _audience_users(request: ChangeRequest, audience: str) -> Iterable[User]:
    users = _reachable().exclude(**{f"notification_preference__{audience}": False})
    if audience == Audience.AWAITING_APPROVAL:
        return _undecided_approvers(request, users)
    if audience == Audience.FAILED_JOBS:
        return users.filter(Q(is_staff=True) | Q(is_superuser=True) | Q(groups__name=Role.ADMIN)).distinct()
    return users.filter(pk=request.requester_id)


def _undecided_approvers(request: ChangeRequest, users: QuerySet[User]) -> list[User]:
    decided = request.approvals.filter(fingerprint=request.fingerprint).values("approver_id")
    candidates = (
        users.filter(Q(groups__name__in=[Role.APPROVER, Role.ADMIN]) | Q(is_superuser=True))
        .exclude(pk__in=decided)
        .distinct()
        .order_by("pk")
    )
    databases = databases_touched(request)
    return [u for u in candidates if can_approve(u, requester_id=request.requester_id, databases=databases)]


def _reachable() -> QuerySet[User]:
    return User.objects.filter(is_active=True).exclude(email="")

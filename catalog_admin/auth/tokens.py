"""
API tokens: issue (the secret shown once), list, revoke, and authenticate a request's ``Token cat_…``.

A token is ``cat_`` and 43 URL-safe characters (256 random bits); only its SHA-256 is stored. Every token expires:
after ``CATALOG_API_TOKEN_TTL_DAYS`` unless its owner picks another lifetime, never after more than
``CATALOG_API_TOKEN_MAX_DAYS``. Refusals speak the console's one vocabulary (``ApplicationError``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.tokens.models import ApiToken

__all__ = (
    "NAME_MAX_LENGTH",
    "SECRET_PREFIX",
    "IssuedToken",
    "digest",
    "token_authenticate",
    "token_issue",
    "token_revoke",
    "user_tokens",
)

SECRET_PREFIX = "cat_"
NAME_MAX_LENGTH = ApiToken._meta.get_field("name").max_length or 100
SHOWN_PREFIX_LENGTH = len(SECRET_PREFIX) + 8
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used is written at most once a minute per token


@dataclass(frozen=True)
class IssuedToken:
    """A new token and its secret: the only time the secret exists outside the caller's hands."""

    token: ApiToken
    secret: str


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def user_tokens(user: AbstractBaseUser) -> QuerySet[ApiToken]:
    """The user's tokens, newest first, revoked and expired ones included."""
    return ApiToken.objects.filter(user_id=user.pk)


def token_issue(*, user: AbstractBaseUser, name: str, days: int | None = None) -> IssuedToken:
    """A new token named ``name`` for ``user``, expiring in ``days`` (default ``CATALOG_API_TOKEN_TTL_DAYS``)."""
    name = _checked_name(name)
    lifetime = _checked_days(settings.CATALOG_API_TOKEN_TTL_DAYS if days is None else days)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        if _live(user_tokens(user)).filter(name=name).exists():
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                f"You already have an active token named '{name}'; pick another name or revoke that one.",
                {"parameter": "name"},
            )
        token = ApiToken.objects.create(
            user_id=user.pk,
            name=name,
            prefix=secret[:SHOWN_PREFIX_LENGTH],
            digest=digest(secret),
            expires=timezone.now() + timedelta(days=lifetime),
        )
    return IssuedToken(token=token, secret=secret)


def token_revoke(*, user: AbstractBaseUser, token_id: int) -> ApiToken:
    """Revoke one of ``user``'s tokens; from now on the API refuses it."""
    with transaction.atomic():
        token = user_tokens(user).select_for_update().filter(pk=token_id).first()
        if token is None:
            raise ApplicationError(ErrorCode.NOT_FOUND, f"You have no API token #{token_id}.", {"token": token_id})
        if token.revoked is not None:
            raise ApplicationError(ErrorCode.INVALID_STATE, f"Token '{token.name}' is already revoked.")
        token.revoked = timezone.now()
        token.save(update_fields=["revoked"])
    return token


def token_authenticate(secret: str) -> ApiToken:
    """The live token whose secret this is (its ``last_used`` kept current), or ``not_authenticated``."""
    token = ApiToken.objects.select_related("user").filter(digest=digest(secret)).first()
    now = timezone.now()
    if token is None or not token.user.is_active:
        raise ApplicationError(ErrorCode.NOT_AUTHENTICATED, "Invalid token.")
    if token.revoked is not None:
        raise ApplicationError(ErrorCode.NOT_AUTHENTICATED, "Token has been revoked; create a new one.")
    if token.expires <= now:
        raise ApplicationError(ErrorCode.NOT_AUTHENTICATED, "Token has expired; create a new one.")
    if token.last_used is None or token.last_used <= now - LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        token.last_used = now
    return token


def _live(tokens: QuerySet[ApiToken]) -> QuerySet[ApiToken]:
    return tokens.filter(revoked__isnull=True, expires__gt=timezone.now())


def _checked_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > NAME_MAX_LENGTH:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"A token needs a name of 1 to {NAME_MAX_LENGTH} characters (what will use it, e.g. 'nightly-sync').",
            {"parameter": "name"},
        )
    return name


def _checked_days(days: int) -> int:
    maximum = settings.CATALOG_API_TOKEN_MAX_DAYS
    if not 1 <= days <= maximum:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"A token's lifetime must be 1 to {maximum} days ({days} given).",
            {"parameter": "days"},
        )
    return days

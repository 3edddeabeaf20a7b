"""Token authentication for automation, with tokens that expire after ``settings.CATALOG_API_TOKEN_TTL``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

__all__ = ("ExpiringTokenAuthentication",)


class ExpiringTokenAuthentication(TokenAuthentication):
    """
    ``Authorization: Token <key>``, refused (401 ``not_authenticated``) once the token is older than the TTL.

    ``CATALOG_API_TOKEN_TTL`` is a ``timedelta``; ``None`` means tokens never expire. An administrator issues a
    new token by deleting the old one (``manage.py drf_create_token -r <user>``).
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        user, token = super().authenticate_credentials(key)
        ttl = getattr(settings, "CATALOG_API_TOKEN_TTL", None)
        if ttl and token.created + ttl <= timezone.now():
            raise AuthenticationFailed("Token has expired; ask an administrator for a new one.")
        return user, token

"""``Authorization: Token cat_…`` for automation: a user's API token (``catalog_admin.auth.tokens``)."""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from catalog_admin.auth.tokens import token_authenticate
from catalog_admin.errors import ApplicationError

__all__ = ("ApiTokenAuthentication",)


class ApiTokenAuthentication(TokenAuthentication):
    """
    DRF's ``Token <key>`` header, checked against the hashed, expiring, revocable tokens users create on their
    ``/account/tokens/`` page (or ``manage.py api_token``). A refusal is 401 ``not_authenticated`` naming why.
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        try:
            token = token_authenticate(key)
        except ApplicationError as exc:
            raise AuthenticationFailed(exc.message) from exc
        return token.user, token

"""
OpenID Connect sign-in (mozilla-django-oidc, the authorization code flow with nonce and PKCE): a person's console
account is found, or created, by the provider's user-name claim, and at every sign-in the provider's groups claim
sets their roles and approver scopes, as a directory's groups do (:func:`~catalog_admin.auth.directory
.sync_directory_groups`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation
from django.db.models import QuerySet
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from catalog_admin.auth.directory import sync_directory_groups

__all__ = ("CompanySignInBackend", "claimed_groups")

USERNAME_MAX_LENGTH = 150  # Django's User.username


class CompanySignInBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend: users by the user-name claim (not the e-mail, which people change and share),
    groups from the groups claim."""

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        return bool(self._username(claims))

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[User]:
        return User.objects.filter(username=self._username(claims))

    def create_user(self, claims: dict[str, Any]) -> User:
        user = User.objects.create_user(self._username(claims), email=claims.get("email") or "")
        user.set_unusable_password()  # signs in through the provider only
        return self.update_user(user, claims)

    def update_user(self, user: User, claims: dict[str, Any]) -> User:
        if not user.is_active:
            raise SuspiciousOperation(f"the console account {user.username} is switched off")
        user.email = claims.get("email") or user.email
        user.first_name = str(claims.get("given_name") or user.first_name)[:150]
        user.last_name = str(claims.get("family_name") or user.last_name)[:150]
        user.save(update_fields=["email", "first_name", "last_name", "password"])
        sync_directory_groups(user, claimed_groups(claims))
        return user

    @staticmethod
    def _username(claims: dict[str, Any]) -> str:
        name = claims.get(settings.CATALOG_OIDC_USERNAME_CLAIM)
        if not isinstance(name, str) or not name.strip() or len(name) > USERNAME_MAX_LENGTH:
            return ""
        return name.strip()


def claimed_groups(claims: dict[str, Any]) -> set[str]:
    """The groups claim as lower-cased names (a list of strings; a single string is one group; else none)."""
    value = claims.get(settings.CATALOG_OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return set()
    return {group.strip().lower() for group in value if isinstance(group, str) and group.strip()}

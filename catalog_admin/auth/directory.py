"""
LDAP/Active Directory sign-in (django-auth-ldap): at each sign-in the user's directory groups decide their roles and
approver scopes.

The console's groups named in ``CATALOG_ROLE_GROUPS`` (roles) and ``CATALOG_APPROVER_SCOPE_GROUPS`` (scopes) are the
directory's to manage: a directory user is added to those their directory groups map to and removed from the others,
so a user taken out of a directory group loses the role when they next sign in. Groups not mapped are left alone.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction
from django_auth_ldap.backend import LDAPBackend, _LDAPUser

__all__ = ("DirectoryBackend", "sync_directory_groups")


class DirectoryBackend(LDAPBackend):
    """django-auth-ldap's backend, mapping directory groups to the console's groups at each sign-in."""

    def authenticate_ldap_user(self, ldap_user: _LDAPUser, password: str) -> Any:
        user = super().authenticate_ldap_user(ldap_user, password)
        if user is not None:
            sync_directory_groups(user, {dn.lower() for dn in ldap_user.group_dns})
        return user


def sync_directory_groups(user: Any, member_of: set[str]) -> None:
    """Give ``user`` exactly the mapped console groups whose directory groups (lower-cased DNs) are in ``member_of``."""
    mapping = {**getattr(settings, "CATALOG_ROLE_GROUPS", {}), **getattr(settings, "CATALOG_APPROVER_SCOPE_GROUPS", {})}
    wanted = {name for name, dns in mapping.items() if member_of & set(dns)}
    with transaction.atomic():
        managed = {group.name: group for group in Group.objects.filter(name__in=list(mapping))}
        for name in wanted - set(managed):
            managed[name] = Group.objects.create(name=name)
        user.groups.remove(*(group for name, group in managed.items() if name not in wanted))
        user.groups.add(*(managed[name] for name in wanted))

"""``manage.py roles``: the first administrator, roles and scopes given and taken; bad input refused."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import RequestFactory

pytestmark = pytest.mark.django_db


def _roles(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("roles", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _groups(username: str) -> set[str]:
    return set(get_user_model().objects.get(username=username).groups.values_list("name", flat=True))


def test_create_first_admin_who_can_sign_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """--create-admin makes a superuser with the admin role who signs in with the password from the environment."""
    # given
    monkeypatch.setenv("CATALOG_ADMIN_PASSWORD", "a-long-admin-password")

    # when
    out, _ = _roles("root", "--create-admin", "--email", "root@example.org")

    # then
    assert out == "root: admin (superuser)\n"
    request = RequestFactory().post("/accounts/login/")
    assert authenticate(request, username="root", password="a-long-admin-password") is not None


def test_create_admin_refuses_existing_user_and_weak_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """An existing name or a password the validators refuse: an error naming why, no user made."""
    get_user_model().objects.create_user("root")
    with pytest.raises(CommandError, match="User 'root' already exists"):
        _roles("root", "--create-admin", "--no-password")
    monkeypatch.setenv("CATALOG_ADMIN_PASSWORD", "short")
    with pytest.raises(CommandError, match="Password refused"):
        _roles("newroot", "--create-admin")
    assert not get_user_model().objects.filter(username="newroot").exists()


def test_grant_revoke_scope(settings: Any) -> None:
    """Roles and scopes given, then some taken away; the command prints the user's groups."""
    settings.CATALOG_APPROVER_SCOPES = {"marketing": ["marketing"]}
    get_user_model().objects.create_user("gina")
    assert _roles("gina", "--grant", "approver", "--grant", "viewer", "--scope", "marketing")[0] == (
        "gina: approver, marketing, viewer\n"
    )
    _roles("gina", "--revoke", "viewer", "--unscope", "marketing")
    assert _groups("gina") == {"approver"}
    assert _roles("gina")[0] == "gina: approver\n"


def test_unknown_user_scope_or_role_refused(settings: Any) -> None:
    """An unknown user, scope or role is refused by name, and nothing is given."""
    settings.CATALOG_APPROVER_SCOPES = {}
    get_user_model().objects.create_user("gina")
    with pytest.raises(CommandError, match="No user 'nobody'"):
        _roles("nobody", "--grant", "approver")
    with pytest.raises(CommandError, match="Unknown approver scope sales: CATALOG_APPROVER_SCOPES names none"):
        _roles("gina", "--grant", "approver", "--scope", "sales")
    with pytest.raises(CommandError, match="invalid choice: 'owner'"):
        _roles("gina", "--grant", "owner")
    assert _groups("gina") == set()


def test_directory_managed_role_warns(settings: Any) -> None:
    """Changing a group the directory maps warns that the next directory sign-in sets it again."""
    settings.CATALOG_ROLE_GROUPS = {"approver": ["cn=hive-approvers,dc=example,dc=org"]}
    get_user_model().objects.create_user("gina")
    _, err = _roles("gina", "--grant", "approver")
    assert "'approver' follows the directory's groups" in err

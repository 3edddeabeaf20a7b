"""``manage.py roles``: create the first administrator, and give or take a user's roles and approver scopes.

* ``manage.py roles alice --create-admin``: creates ``alice`` as a superuser with the ``admin`` role; the password is
  read from ``CATALOG_ADMIN_PASSWORD`` or asked for (``--no-password``: none, for a directory user who signs in
  through LDAP);
* ``manage.py roles alice --grant approver --grant steward --scope marketing --revoke viewer --unscope sales``;
* ``manage.py roles alice``: prints the user's roles and scopes.

Groups that ``CATALOG_ROLE_GROUPS`` / ``CATALOG_APPROVER_SCOPE_GROUPS`` map are the directory's: a directory user's next
sign-in sets them again, so the command warns when it changes one.
"""

from __future__ import annotations

import getpass
import os
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from catalog_admin.roles import Role


class Command(BaseCommand):
    help = "Create the first administrator; grant or revoke a user's roles and approver scopes; show them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--create-admin", action="store_true", help="create the user as a superuser and admin")
        parser.add_argument("--email", default="", help="with --create-admin: the user's email")
        parser.add_argument("--no-password", action="store_true", help="with --create-admin: no local password")
        parser.add_argument("--grant", action="append", default=[], choices=list(Role), help="a role to give")
        parser.add_argument("--revoke", action="append", default=[], choices=list(Role), help="a role to take away")
        parser.add_argument("--scope", action="append", default=[], help="an approver scope to give")
        parser.add_argument("--unscope", action="append", default=[], help="an approver scope to take away")

    def handle(self, *args: Any, **options: Any) -> None:
        _check_scopes([*options["scope"], *options["unscope"]])
        username = options["username"]
        with transaction.atomic():
            if options["create_admin"]:
                user = _create_admin(username, options["email"], None if options["no_password"] else _password())
                options["grant"].append(Role.ADMIN)
            else:
                user = get_user_model().objects.filter(username=username).first()
                if user is None:
                    raise CommandError(f"No user '{username}': create one with --create-admin, or sign them in once.")
            grant, revoke = [*options["grant"], *options["scope"]], [*options["revoke"], *options["unscope"]]
            user.groups.remove(*Group.objects.filter(name__in=revoke))
            user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in grant))
        self._warn_directory_managed([*grant, *revoke])
        names = sorted(user.groups.values_list("name", flat=True))
        self.stdout.write(f"{username}: {', '.join(names) or 'no roles'}{' (superuser)' if user.is_superuser else ''}")

    def _warn_directory_managed(self, names: list[str]) -> None:
        managed = {
            **getattr(settings, "CATALOG_ROLE_GROUPS", {}),
            **getattr(settings, "CATALOG_APPROVER_SCOPE_GROUPS", {}),
        }
        for name in sorted(set(names) & set(managed)):
            self.stderr.write(
                f"'{name}' follows the directory's groups: a directory user's next sign-in sets it again."
            )


def _check_scopes(names: list[str]) -> None:
    scopes = getattr(settings, "CATALOG_APPROVER_SCOPES", {})
    unknown = sorted(set(names) - set(scopes))
    if unknown:
        raise CommandError(
            f"Unknown approver scope {', '.join(unknown)}: CATALOG_APPROVER_SCOPES names {', '.join(scopes) or 'none'}."
        )


def _create_admin(username: str, email: str, password: str | None) -> Any:
    model = get_user_model()
    if model.objects.filter(username=username).exists():
        raise CommandError(f"User '{username}' already exists: give them the role with --grant admin.")
    return model.objects.create_superuser(username, email, password)


def _password() -> str:
    password = os.environ.get("CATALOG_ADMIN_PASSWORD") or getpass.getpass("Password: ")
    if not os.environ.get("CATALOG_ADMIN_PASSWORD") and getpass.getpass("Password (again): ") != password:
        raise CommandError("The passwords differ.")
    try:
        validate_password(password)
    except ValidationError as exc:
        raise CommandError(f"Password refused: {' '.join(exc.messages)}") from exc
    return password

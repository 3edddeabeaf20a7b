"""``manage.py api_token``: API tokens for automation, from the command line.

* ``manage.py api_token create alice --name nightly-sync [--days 30]``: prints the new token (stdout, alone on its line:
  ``TOKEN=$(manage.py api_token create …)``); it is never shown again;
* ``manage.py api_token list alice``: the user's tokens (name, prefix, created, last used, expires, state);
* ``manage.py api_token revoke alice --name nightly-sync``: the API refuses it from now on.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from catalog_admin.auth.tokens import token_issue, token_revoke, user_tokens
from catalog_admin.errors import ApplicationError


class Command(BaseCommand):
    help = "Create, list or revoke a user's API tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["create", "list", "revoke"])
        parser.add_argument("username")
        parser.add_argument("--name", help="create, revoke: the token's name")
        parser.add_argument("--days", type=int, help="create: days to expiry (default CATALOG_API_TOKEN_TTL_DAYS)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user '{options['username']}'.")
        if options["action"] != "list" and not options["name"]:
            raise CommandError(f"api_token {options['action']} needs --name.")
        try:
            getattr(self, options["action"])(user, options)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc

    def create(self, user: AbstractBaseUser, options: dict[str, Any]) -> None:
        issued = token_issue(user=user, name=options["name"], days=options["days"])
        self.stderr.write(f"Token '{issued.token.name}' expires {issued.token.expires:%Y-%m-%d %H:%M} UTC.")
        self.stdout.write(issued.secret)

    def list(self, user: AbstractBaseUser, options: dict[str, Any]) -> None:
        now = timezone.now()
        for token in user_tokens(user):
            used = f"{token.last_used:%Y-%m-%d %H:%M}" if token.last_used else "never"
            self.stdout.write(
                f"{token.name}\t{token.prefix}…\tcreated {token.created:%Y-%m-%d %H:%M}\tlast used {used}"
                f"\texpires {token.expires:%Y-%m-%d %H:%M}\t{token.state(now)}"
            )

    def revoke(self, user: AbstractBaseUser, options: dict[str, Any]) -> None:
        token = user_tokens(user).filter(name=options["name"], revoked__isnull=True).first()
        if token is None:
            raise CommandError(f"{user.get_username()} has no unrevoked token named '{options['name']}'.")
        token_revoke(user=user, token_id=token.pk)
        self.stdout.write(f"Token '{token.name}' revoked.")

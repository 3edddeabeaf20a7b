"""
API tokens per user: hashed, named, expiring (default and maximum from the settings), revocable; the API refuses
an expired, revoked or unknown token with ``not_authenticated``; the page and ``manage.py api_token`` issue and revoke
them.
"""

from __future__ import annotations

import importlib
import io
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from catalog_admin.auth.tokens import (
    LAST_USED_RESOLUTION,
    SECRET_PREFIX,
    digest,
    token_authenticate,
    token_issue,
    token_revoke,
)
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.tokens.models import ApiToken
from tests.fixtures.factories import make_user

pytestmark = pytest.mark.django_db

METASTORES = "/api/metastores/"


@pytest.fixture
def alice(db: None) -> User:
    return make_user("token-alice", "viewer")


def client_with(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


def refusal(secret: str) -> dict[str, object]:
    response = client_with(secret).get(METASTORES)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    body = response.json()
    assert body["code"] == "not_authenticated"
    return body


# The service -------------------------------------------------------------------------------------------------------


def test_a_token_is_stored_only_as_its_hash(alice: User, settings) -> None:
    # when
    issued = token_issue(user=alice, name="nightly-sync")

    # then
    stored = ApiToken.objects.get(pk=issued.token.pk)
    assert issued.secret.startswith(SECRET_PREFIX) and len(issued.secret) > 40
    assert stored.digest == digest(issued.secret) != issued.secret
    assert issued.secret not in {getattr(stored, field.attname) for field in ApiToken._meta.concrete_fields}
    assert issued.secret.startswith(stored.prefix)
    lifetime = stored.expires - stored.created
    assert abs(lifetime - timedelta(days=settings.CATALOG_API_TOKEN_TTL_DAYS)) < timedelta(minutes=1)


def test_a_token_lets_its_owner_in_and_records_its_last_use(alice: User) -> None:
    # given
    issued = token_issue(user=alice, name="ci", days=7)

    # when
    response = client_with(issued.secret).get(METASTORES)

    # then
    assert response.status_code == 200
    used = ApiToken.objects.get(pk=issued.token.pk).last_used
    assert used is not None and timezone.now() - used < LAST_USED_RESOLUTION


@pytest.mark.parametrize(
    ("days", "problem"),
    [(0, "1 to 30 days (0 given)"), (31, "1 to 30 days (31 given)"), (-5, "1 to 30 days (-5 given)")],
)
def test_a_lifetime_outside_one_to_the_maximum_is_refused(alice: User, settings, days: int, problem: str) -> None:
    settings.CATALOG_API_TOKEN_MAX_DAYS = 30

    with pytest.raises(ApplicationError) as raised:
        token_issue(user=alice, name="too-long", days=days)

    assert raised.value.code == ErrorCode.INVALID_PARAMETER
    assert problem in raised.value.message
    assert raised.value.details == {"parameter": "days"}
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_token_needs_a_name(alice: User, name: str) -> None:
    with pytest.raises(ApplicationError) as raised:
        token_issue(user=alice, name=name)

    assert raised.value.details == {"parameter": "name"}
    assert not ApiToken.objects.exists()


def test_two_live_tokens_cannot_share_a_name_but_a_revoked_name_can_be_reused(alice: User) -> None:
    # given
    first = token_issue(user=alice, name="deploy")

    # when / then
    with pytest.raises(ApplicationError, match="already have an active token named 'deploy'"):
        token_issue(user=alice, name="deploy")
    token_revoke(user=alice, token_id=first.token.pk)
    assert token_issue(user=alice, name="deploy").token.pk != first.token.pk
    assert token_issue(user=make_user("token-bob"), name="deploy").token.name == "deploy"


def test_nobody_revokes_another_users_token(alice: User) -> None:
    # given
    issued = token_issue(user=alice, name="mine")

    # when
    with pytest.raises(ApplicationError) as raised:
        token_revoke(user=make_user("token-mallory"), token_id=issued.token.pk)

    # then
    assert raised.value.code == ErrorCode.NOT_FOUND
    assert ApiToken.objects.get(pk=issued.token.pk).revoked is None
    assert token_authenticate(issued.secret).user == alice


# The API refuses --------------------------------------------------------------------------------------------------


def test_the_api_refuses_a_revoked_token(alice: User) -> None:
    # given
    issued = token_issue(user=alice, name="leaked")
    assert client_with(issued.secret).get(METASTORES).status_code == 200

    # when
    token_revoke(user=alice, token_id=issued.token.pk)

    # then
    assert refusal(issued.secret)["message"] == "Token has been revoked; create a new one."


def test_the_api_refuses_an_expired_token(alice: User) -> None:
    issued = token_issue(user=alice, name="old", days=1)
    ApiToken.objects.filter(pk=issued.token.pk).update(expires=timezone.now() - timedelta(seconds=1))

    assert refusal(issued.secret)["message"] == "Token has expired; create a new one."


def test_the_api_refuses_an_unknown_token_and_an_inactive_users_token(alice: User) -> None:
    issued = token_issue(user=alice, name="ci")
    assert refusal(issued.secret[:-1] + "?")["message"] == "Invalid token."

    User.objects.filter(pk=alice.pk).update(is_active=False)

    assert refusal(issued.secret)["message"] == "Invalid token."


# The page ---------------------------------------------------------------------------------------------------------


def test_the_page_creates_a_token_shown_once_and_revokes_it(alice: User, client: Client) -> None:
    # given
    client.force_login(alice)
    page = reverse("account-tokens")

    # when
    created = client.post(page, {"name": "laptop", "days": "10"})

    # then: the secret is in that answer only
    token = ApiToken.objects.get(user=alice)
    secret = created.context["issued"].secret
    assert created.status_code == 200
    assert secret in created.content.decode()
    assert "no-store" in created["Cache-Control"]
    assert digest(secret) == token.digest
    assert secret not in client.get(page).content.decode()
    assert token.prefix in client.get(page).content.decode()

    # when
    revoked = client.post(reverse("account-token-revoke", args=[token.pk]), follow=True)

    # then
    assert "Token &#x27;laptop&#x27; revoked" in revoked.content.decode()
    assert ApiToken.objects.get(pk=token.pk).revoked is not None
    assert refusal(secret)["code"] == "not_authenticated"


def test_the_page_names_a_lifetime_over_the_maximum_and_writes_nothing(alice: User, client: Client, settings) -> None:
    settings.CATALOG_API_TOKEN_MAX_DAYS = 30
    client.force_login(alice)

    response = client.post(reverse("account-tokens"), {"name": "forever", "days": "400"})

    assert response.status_code == 400
    assert "A token&#x27;s lifetime must be 1 to 30 days (400 given)." in response.content.decode()
    assert not ApiToken.objects.exists()


def test_the_page_lists_only_the_users_own_tokens(alice: User, client: Client) -> None:
    token_issue(user=alice, name="alice-ci")
    token_issue(user=make_user("token-carol"), name="carol-ci")
    client.force_login(alice)

    body = client.get(reverse("account-tokens")).content.decode()

    assert "alice-ci" in body and "carol-ci" not in body


# The command ------------------------------------------------------------------------------------------------------


def test_the_command_creates_lists_and_revokes_a_token(alice: User) -> None:
    # when
    out, err = io.StringIO(), io.StringIO()
    call_command("api_token", "create", alice.username, name="nightly", days=5, stdout=out, stderr=err)

    # then: stdout is the secret alone; it works
    secret = out.getvalue().strip()
    assert client_with(secret).get(METASTORES).status_code == 200
    assert "expires" in err.getvalue()

    listed = io.StringIO()
    call_command("api_token", "list", alice.username, stdout=listed)
    assert "nightly" in listed.getvalue() and "active" in listed.getvalue() and secret not in listed.getvalue()

    call_command("api_token", "revoke", alice.username, name="nightly", stdout=io.StringIO())
    assert refusal(secret)["message"].startswith("Token has been revoked")


def test_the_command_names_what_is_wrong(alice: User, settings) -> None:
    settings.CATALOG_API_TOKEN_MAX_DAYS = 30
    with pytest.raises(CommandError, match="No user 'nobody'"):
        call_command("api_token", "create", "nobody", name="x")
    with pytest.raises(CommandError, match="needs --name"):
        call_command("api_token", "create", alice.username)
    with pytest.raises(CommandError, match=r"1 to 30 days \(90 given\)"):
        call_command("api_token", "create", alice.username, name="x", days=90)
    assert not ApiToken.objects.exists()


# The former plaintext tokens ---------------------------------------------------------------------------------------


def test_the_migration_hashes_the_former_plaintext_tokens_and_drops_their_table(alice: User, settings) -> None:
    # given: Django REST framework's authtoken table, as an older console left it
    legacy = importlib.import_module("catalog_admin.tokens.migrations.0002_legacy_tokens")
    created = timezone.now() - timedelta(days=10)
    with connection.cursor() as cursor:
        cursor.execute(
            'CREATE TABLE authtoken_token ("key" varchar(40) PRIMARY KEY, user_id integer, created timestamptz)'
        )
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, %s)", ["a" * 40, alice.pk, created])

    # when
    with connection.schema_editor() as editor:
        legacy.import_legacy_tokens(apps, editor)

    # then
    token = ApiToken.objects.get(user=alice)
    assert (token.name, token.digest, token.created) == ("legacy token", digest("a" * 40), created)
    assert token.expires == created + timedelta(days=settings.CATALOG_API_TOKEN_TTL_DAYS)
    assert "authtoken_token" not in connection.introspection.table_names()
    assert client_with("a" * 40).get(METASTORES).status_code == 200

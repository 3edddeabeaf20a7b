"""Sign-in through a real OpenLDAP directory (tests/fixtures/directory.py): the login form, roles from groups."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from catalog_admin.roles import Role
from tests.fixtures.directory import LdapServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

SignIn = Callable[[Mapping[str, str]], LdapServer]


def _sign_in(username: str, password: str) -> tuple[Client, int]:
    """Post the login form; the client and the answer's status (302: signed in, 200: the form again)."""
    client = Client()
    response = client.post("/accounts/login/", {"username": username, "password": password})
    return client, response.status_code


def _groups(username: str) -> set[str]:
    return set(get_user_model().objects.get(username=username).groups.values_list("name", flat=True))


def test_directory_user_lands_with_mapped_roles_and_scope(ldap_sign_in: SignIn) -> None:
    """alice (approvers, stewards, marketing approvers) gets both roles and the scope, her name and email."""
    # given
    ldap_sign_in({})

    # when
    client, status = _sign_in("alice", "alice-pw")

    # then
    assert status == 302
    assert client.get("/").status_code != 302  # signed in: not sent back to the login page
    assert _groups("alice") == {Role.APPROVER, Role.STEWARD, "marketing-scope"}
    user = get_user_model().objects.get(username="alice")
    assert (user.email, user.first_name, user.has_usable_password()) == ("alice@example.org", "Alice", False)


def test_wrong_password_refused(ldap_sign_in: SignIn) -> None:
    """A wrong directory password: the form again, no session, no console account made."""
    # given
    ldap_sign_in({})

    # when
    client, status = _sign_in("bob", "not-bob-pw")

    # then
    assert status == 200
    assert "_auth_user_id" not in client.session
    assert not get_user_model().objects.filter(username="bob").exists()


def test_group_removed_role_gone_at_next_sign_in(ldap_sign_in: SignIn) -> None:
    """bob, moved from the stewards' directory group to the approvers', is approver and no longer steward."""
    # given: bob signed in once as a steward
    server = ldap_sign_in({})
    _, status = _sign_in("bob", "bob-pw")
    assert (status, _groups("bob")) == (302, {Role.STEWARD})

    # when: the directory moves him, and he signs in again
    server.set_member("hive-stewards", "bob", member=False)
    server.set_member("hive-approvers", "bob", member=True)
    try:
        _, status = _sign_in("bob", "bob-pw")

        # then
        assert (status, _groups("bob")) == (302, {Role.APPROVER})
    finally:
        server.set_member("hive-approvers", "bob", member=False)
        server.set_member("hive-stewards", "bob", member=True)


def test_unmapped_groups_are_left_alone(ldap_sign_in: SignIn) -> None:
    """A console group no directory group maps to (viewer, here) is the console's to give: a sign-in keeps it."""
    # given: carol (no mapped directory group) made a viewer by hand after her first sign-in
    ldap_sign_in({})
    _sign_in("carol", "carol-pw")
    carol = get_user_model().objects.get(username="carol")
    # get_or_create: a transactional test earlier on this worker may have flushed the data migration's groups
    carol.groups.add(carol.groups.model.objects.get_or_create(name=Role.VIEWER)[0])

    # when
    _, status = _sign_in("carol", "carol-pw")

    # then
    assert (status, _groups("carol")) == (302, {Role.VIEWER})


def test_local_accounts_off_refuses_local_user(ldap_sign_in: SignIn) -> None:
    """With CATALOG_LOCAL_ACCOUNTS=false a local account's right password is refused; directory users still sign in."""
    # given: a local account that signs in while local accounts are on (the default)
    get_user_model().objects.create_user("dora", password="dora-local-pw")
    ldap_sign_in({})
    assert _sign_in("dora", "dora-local-pw")[1] == 302

    # when
    ldap_sign_in({"CATALOG_LOCAL_ACCOUNTS": "false"})

    # then
    assert _sign_in("dora", "dora-local-pw")[1] == 200
    assert _sign_in("alice", "alice-pw")[1] == 302  # the directory still signs people in

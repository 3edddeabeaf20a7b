"""
Signing in through a real OpenID Connect provider (django-oidc-provider on loopback, tests/fixtures/oidc.py) in a real
browser (headless Debian Chromium through Playwright) against the live server: the authorization code flow with a
nonce and PKCE; the person lands where they were going with the roles and approver scope their provider groups map
to, evaluated again at the next sign-in; a wrong provider password leaves them at the provider.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from catalog_admin.roles import Role
from tests.fixtures.browser import launch_chromium
from tests.fixtures.oidc import OidcProvider

NEXT = "/account/notifications/"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default"]),
    pytest.mark.usefixtures("restore_roles"),
]


def oidc_provider_url(live_server: object, page: object) -> str:
    """Where the page is, when it is not the console (the provider's address)."""
    url: str = page.url  # type: ignore[attr-defined]
    assert not url.startswith(live_server.url)  # type: ignore[attr-defined]
    return url.split("/accounts/")[0]


def sign_in_with_provider(browser: object, base_url: str, name: str, password: str) -> object:
    """Through the provider, asking for the notifications page (Home, the default, reads the metastores, which
    these tests leave out)."""
    page = browser.new_context().new_page()  # type: ignore[attr-defined]
    page.goto(f"{base_url}/accounts/login/?next={NEXT}")
    page.click("#sso-sign-in")
    page.fill("#id_username", name)
    page.fill("#id_password", password)
    page.click("#provider-submit")
    return page


def test_a_provider_user_signs_in_with_the_roles_their_groups_map_to(
    live_server: object, oidc_sign_in: Callable[[Mapping[str, str]], OidcProvider]
) -> None:
    # given: the console signs in through the provider only
    from playwright.sync_api import expect, sync_playwright

    oidc_sign_in({"CATALOG_LOCAL_ACCOUNTS": "false"})
    base_url = live_server.url  # type: ignore[attr-defined]

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # when: the sign-in page offers the provider only; a wrong password at the provider
            page = browser.new_context().new_page()
            page.goto(f"{base_url}/accounts/login/")
            expect(page.locator("#sso-sign-in")).to_have_text("Sign in with Example Corp")
            expect(page.locator("#id_password")).to_have_count(0)
            page = sign_in_with_provider(browser, base_url, "carol", "not-carol-pw")

            # then: still at the provider (no console account is made: checked below)
            expect(page.locator("#provider-error")).to_be_visible()
            assert page.url.startswith(oidc_provider_url(live_server, page))

            # when: the right password
            page = sign_in_with_provider(browser, base_url, "carol", "carol-pw")

            # then: the page asked for, as carol
            expect(page).to_have_url(f"{base_url}{NEXT}")
            expect(page.locator("#nav-account")).to_have_text("carol")
        finally:
            browser.close()
    carol = get_user_model().objects.get(username="carol")
    assert carol.email == "carol@example.org"
    assert not carol.has_usable_password()
    assert set(carol.groups.values_list("name", flat=True)) == {Role.APPROVER, Role.STEWARD, "marketing-scope"}


def test_groups_are_evaluated_again_at_each_sign_in(
    live_server: object, oidc_sign_in: Callable[[Mapping[str, str]], OidcProvider]
) -> None:
    # given: dave is a viewer at the provider, but the console still has him as an approver (an old mapping), and
    # in a group no provider group maps to
    from playwright.sync_api import expect, sync_playwright

    oidc_sign_in({})
    dave = get_user_model().objects.create_user("dave", "old@example.org")
    dave.groups.add(Group.objects.get_or_create(name=Role.APPROVER)[0], Group.objects.create(name="hand-made"))
    base_url = live_server.url  # type: ignore[attr-defined]

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = sign_in_with_provider(browser, base_url, "dave", "dave-pw")
            expect(page).to_have_url(f"{base_url}{NEXT}")
        finally:
            browser.close()

    dave.refresh_from_db()
    assert set(dave.groups.values_list("name", flat=True)) == {Role.VIEWER, "hand-made"}
    assert dave.email == "dave@example.org"

"""
Signing in through the real OpenLDAP directory (tests/fixtures/directory.py) in a real browser (headless Debian
Chromium through Playwright) against the live server: a directory user lands signed in with the roles their directory
groups map to; a wrong directory password leaves them on the login form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from django.contrib.auth import get_user_model

from catalog_admin.roles import Role
from tests.fixtures.browser import launch_chromium, sign_in
from tests.fixtures.directory import LdapServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default"]),
    pytest.mark.usefixtures("restore_roles"),
]


def test_directory_user_signs_in_with_mapped_roles(
    live_server: object, ldap_sign_in: Callable[[Mapping[str, str]], LdapServer]
) -> None:
    """alice, in the approvers' and stewards' directory groups, lands on the changes page as approver and steward."""
    # given: the console signs in through the directory only
    from playwright.sync_api import expect, sync_playwright

    ldap_sign_in({"CATALOG_LOCAL_ACCOUNTS": "false"})
    base_url = live_server.url  # type: ignore[attr-defined]

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # when: a wrong directory password
            page = browser.new_page()
            page.goto(f"{base_url}/accounts/login/?next=/changes/")
            page.fill("#id_username", "alice")
            page.fill("#id_password", "not-alice-pw")
            page.click("button[type=submit]")

            # then: the login form again, nobody signed in
            expect(page.locator("#id_password")).to_be_visible()
            assert "/accounts/login/" in page.url

            # when: the right one
            page = sign_in(browser, base_url, "alice", "alice-pw")

            # then: the changes page, and alice's console account has the mapped roles and scope
            expect(page).to_have_url(f"{base_url}/changes/")
            expect(page.locator("body")).to_contain_text("alice")
        finally:
            browser.close()
    groups = set(get_user_model().objects.get(username="alice").groups.values_list("name", flat=True))
    assert groups == {Role.APPROVER, Role.STEWARD, "marketing-scope"}

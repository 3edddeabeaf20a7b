"""
A user's API tokens in a real browser (Chromium through Playwright) against the live server: from the header's link to
the tokens page, create one (shown once), call the API with it, revoke it, and the API refuses it.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest
from django.conf import settings

from tests.fixtures.browser import launch_chromium, sign_in
from tests.fixtures.factories import PASSWORD, make_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", settings.DEFAULT_METASTORE]),
    pytest.mark.usefixtures("restore_roles"),
]


def api_get(url: str, secret: str) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {secret}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (the live server)
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_a_user_creates_uses_and_revokes_an_api_token(live_server) -> None:
    # given
    from playwright.sync_api import expect, sync_playwright

    make_user("automator", "viewer")
    requests = f"{live_server.url}/api/change-requests/"  # the console's own database only

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = sign_in(browser, live_server.url, "automator", PASSWORD, then="/changes/")

            # when: from the header to the tokens page, a token for 7 days
            page.get_by_role("link", name="API tokens").click()
            expect(page).to_have_url(re.compile(r"/account/tokens/$"))
            page.fill("#id_name", "nightly-sync")
            page.fill("#id_days", "7")
            page.get_by_role("button", name="Create token").click()

            # then: shown once, listed as active, and the API lets it in
            secret = page.locator("#new-token-secret").inner_text().strip()
            assert secret.startswith("cat_")
            row = page.locator("#tokens tbody tr", has_text="nightly-sync")
            expect(row).to_have_attribute("data-state", "active")
            expect(row).to_contain_text(secret[:12])
            assert api_get(requests, secret)[0] == 200
            page.reload()
            expect(page.locator("#new-token-secret")).to_have_count(0)
            expect(page.locator("body")).not_to_contain_text(secret)

            # when: revoked
            row.get_by_role("button", name="Revoke nightly-sync").click()

            # then
            expect(page.locator("#messages")).to_contain_text("Token 'nightly-sync' revoked")
            expect(page.locator("#tokens tbody tr", has_text="nightly-sync")).to_have_attribute("data-state", "revoked")
            status, body = api_get(requests, secret)
            assert status == 401
            assert body["code"] == "not_authenticated"
            assert body["message"] == "Token has been revoked; create a new one."
        finally:
            browser.close()

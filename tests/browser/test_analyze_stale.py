"""
The stale-statistics anomaly's action in a real browser (headless Debian Chromium through Playwright) against the live
server: a steward filters a table's partitions to "stale statistics", follows "Recompute statistics where stale" and
lands on the guided request whose ``ANALYZE … WITH ('only_stale'='true')`` previews at once (no parse error), with the
partitions the job reads.

Nothing is submitted or written; the live server answers from its own thread, so the users are committed
(``transaction=True``) and the module puts the role groups back afterwards. Chromium must be installed at
/usr/bin/chromium; without it this test fails and says so, it is never skipped.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from tests.fixtures.browser import launch_chromium
from tests.fixtures.factories import PASSWORD, make_user

METASTORE = settings.DEFAULT_METASTORE
STALE = "ANALYZE TABLE `sales`.`orders` COMPUTE STATISTICS WITH ('only_stale'='true')"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", METASTORE]),
    pytest.mark.usefixtures("restore_roles"),
]


def test_the_stale_statistics_list_leads_to_a_guided_analyze_that_previews(live_server) -> None:
    # given: a steward signed in
    from playwright.sync_api import expect, sync_playwright

    make_user("steward", "steward")
    base = live_server.url
    partitions = f"{base}/m/{METASTORE}/db/sales/t/orders/partitions/"

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.goto(f"{base}/accounts/login/?next=/changes/")
            page.fill("#id_username", "steward")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(re.compile(r"^(?!.*accounts/login)"))

            # when: the partitions narrowed to stale statistics, and the action followed
            page.goto(f"{partitions}?anomaly=stale")
            action = page.locator("#request-analyze-stale")
            expect(action).to_be_visible()
            action.click()

            # then: the guided request holds the statement, and its preview shows it with no parse error
            expect(page.locator("textarea[name=statement]")).to_have_value(STALE)
            expect(page.locator("#preview-statement")).to_contain_text("only_stale")
            expect(page.locator("#parse-error")).to_have_count(0)
        finally:
            browser.close()

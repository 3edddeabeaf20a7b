"""
The header at 800 px in a real browser (headless Debian Chromium through Playwright) against the live server: the
top bar wraps instead of overflowing, so Sign out stays on screen; the skip link is the first thing Tab reaches and
takes the keyboard to the page's content. Screenshots go to ``$CATALOG_ADMIN_SCREENSHOTS`` (else
``var/screenshots/narrow-header``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from tests.fixtures.browser import launch_chromium, screenshot_folder, sign_in
from tests.fixtures.factories import PASSWORD, make_user

REPOSITORY = Path(__file__).resolve().parents[2]
WIDTH = 800
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", settings.DEFAULT_METASTORE]),
    pytest.mark.usefixtures("restore_roles"),
]


def test_at_800_px_sign_out_stays_in_the_viewport_and_a_skip_link_leads_to_the_content(live_server) -> None:
    # given: a steward (every navigation link of the bar: Home, Changes, … + New request) on an 800 px window
    from playwright.sync_api import expect, sync_playwright

    make_user("narrow", "steward")
    shots = screenshot_folder(REPOSITORY / "var" / "screenshots" / "narrow-header")

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = sign_in(browser, live_server.url, "narrow", PASSWORD, width=WIDTH, then="/changes/home/")

            # when
            page.screenshot(path=str(shots / "home-800px.png"))
            sign_out = page.get_by_role("button", name="Sign out")
            box = sign_out.bounding_box()
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")

            # then: Sign out is visible inside the viewport, and the page does not scroll sideways
            expect(sign_out).to_be_visible()
            assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= WIDTH, box
            assert overflow <= 0
            expect(page.locator("#nav-api-docs")).to_be_visible()

            # when: the keyboard's first Tab, then Enter
            page.keyboard.press("Tab")
            skip = page.locator(".skip-link")
            expect(skip).to_be_focused()
            page.screenshot(path=str(shots / "skip-link-800px.png"))
            page.keyboard.press("Enter")

            # then: the content has the focus
            expect(page.locator("main#main")).to_be_focused()
        finally:
            browser.close()

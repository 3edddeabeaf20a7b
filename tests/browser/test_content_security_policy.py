"""
The console's main pages under its Content-Security-Policy in a real browser (headless Debian Chromium through
Playwright): signing in, browsing a database (with htmx's live filter), a table and its partitions, writing a change
request (htmx's live preview) and opening it, the lists, the audit log and the API docs. Chromium reports no CSP
violation on any of them, and htmx runs with eval off.

Violations are collected twice: Chromium's console messages ("Refused to …") and the page's
``securitypolicyviolation`` events (listened to by a script Playwright injects, which the policy does not govern).

Chromium must be installed at /usr/bin/chromium; without it this test fails and says so, it is never skipped.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from tests.fixtures.browser import launch_chromium

METASTORE = settings.DEFAULT_METASTORE
PASSWORD = "not-a-secret-1"
STATEMENT = "ALTER TABLE sales.customers SET OWNER USER bob"
LISTEN = (
    "window.__csp = [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));"
)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", METASTORE]),
    pytest.mark.usefixtures("restore_roles"),
]


def test_the_main_pages_report_no_csp_violation(live_server, django_user_model) -> None:
    """Every main page and its htmx interactions run under the policy without one violation."""
    # given
    from playwright.sync_api import expect, sync_playwright

    django_user_model.objects.create_superuser("admin", "admin@example.com", PASSWORD)
    base = live_server.url
    database = f"/m/{METASTORE}/db/sales/"
    violations: list[str] = []

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page()
            page.add_init_script(LISTEN)
            page.on("console", lambda message: record_refusal(violations, page.url, message.text))

            def visit(path: str) -> None:
                page.goto(f"{base}{path}")
                page.wait_for_load_state("networkidle")
                violations.extend(f"{path}: {v}" for v in page.evaluate("window.__csp"))

            # when: signing in, then browsing
            # (not the metastore list: it reads every metastore, and this test may use the default one only)
            page.goto(f"{base}/accounts/login/?next={database}")
            page.fill("#id_username", "admin")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            expect(page).to_have_url(f"{base}{database}")
            for path in (f"/m/{METASTORE}/", database):
                visit(path)
            with page.expect_response(lambda r: r.request.headers.get("hx-request") == "true"):
                page.locator("form.filters input[name=q]").press_sequentially("cust", delay=20)
            visit(f"{database}t/orders/")
            visit(f"{database}t/orders/partitions/")

            # and writing a change request, with its live preview
            visit("/changes/new/")
            with page.expect_response(lambda r: r.url.endswith("/changes/preview/") and r.status == 200):
                page.locator("textarea[name=statement]").press_sequentially(STATEMENT, delay=5)
            expect(page.locator("#preview-statement")).to_be_visible()
            page.fill("textarea[name=reason]", "Bob owns the customers now")
            page.get_by_role("button", name="Save as draft").click()
            expect(page).to_have_url(re.compile(r"/changes/\d+/$"))
            visit(page.url.removeprefix(base))
            for path in ("/changes/", "/changes/inbox/", "/changes/mine/", "/changes/audit/", "/api/docs/"):
                visit(path)
            expect(page.locator(".swagger-ui")).to_be_visible()
            visit(database)
            htmx_allows_eval = page.evaluate("htmx.config.allowEval")
            found = list(violations)
            # and, to show the reports are seen: an inline script added to the page, which the policy refuses
            page.evaluate("document.body.append(Object.assign(document.createElement('script'), {text: 'ran = 1'}))")
            page.wait_for_function("window.__csp.length > 0")
            control = page.evaluate("[window.__csp.length, typeof window.ran]")

            # then
            assert found == []
            assert htmx_allows_eval is False
            assert control == [1, "undefined"] and len(violations) == 1
        finally:
            browser.close()


def record_refusal(violations: list[str], url: str, text: str) -> None:
    """Keep Chromium's console reports of a Content-Security-Policy refusal."""
    if "Content Security Policy" in text or text.startswith("Refused to"):
        violations.append(f"{url}: {text}")

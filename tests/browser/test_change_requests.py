"""
Change requests in a real browser (headless Debian Chromium through Playwright) against the live server: a steward
types a rename and watches its preview appear, saves and submits it; two approvers approve it from their inbox
(the default policy asks two approvals for a managed rename, which moves data); the steward confirms the execution
and the page follows the job until it is done; the table then shows under its new name, and the audit log holds
every step. And the four-eyes rule: the requester's own approve button is disabled with the reason, and posting
anyway is refused.

How the job runs here: as in production, in a separate worker process (``manage.py run_jobs``, started by the
``job_workers`` fixture) that takes the job's task from the console's database. The live server answers from its
own thread, so the test data must be committed (``transaction=True``); the worker opens its own connections to the
same test databases and sees the committed request. ("eager" would work too, but the execute request would only
answer once the job is done, and the progress bar would never be seen polling.)

The execution really renames the metastore's rows and the table's directory, and commits: the test puts the
metastore back afterwards by rebuilding it (schema and seed, as at the start of the session). A transactional test
also flushes the console's database, including the role groups of the data migration: the module recreates them
at its end for the tests that follow.

Chromium must be installed at /usr/bin/chromium; without it this test fails and says so, it is never skipped.
Screenshots go to ``$CATALOG_ADMIN_SCREENSHOTS`` if set, else to the test's tmp_path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.conf import settings

from catalog_admin.models import Table
from operations.models import Approval, AuditRecord, ChangeRequest
from tests.fixtures.browser import launch_chromium
from tests.fixtures.factories import PASSWORD, make_user

METASTORE = settings.DEFAULT_METASTORE
RENAME = "ALTER TABLE sales.customers RENAME TO sales.clients"
NORMALIZED = "ALTER TABLE `sales`.`customers` RENAME TO `sales`.`clients`"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", METASTORE]),
    pytest.mark.usefixtures("restore_roles"),
]


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CATALOG_ADMIN_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sign_in(browser, base_url: str, username: str):
    """A page of a fresh browser context (its own cookies) signed in as ``username``."""
    page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    page.goto(f"{base_url}/accounts/login/?next=/changes/")  # not the overview: it reads every metastore
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"^(?!.*accounts/login)"))
    return page


def test_rename_requested_previewed_approved_twice_executed_and_audited(
    live_server, screenshots: Path, rebuilt_metastore, job_workers
):
    # given: a steward, two approvers; a job worker process
    from playwright.sync_api import expect, sync_playwright

    job_workers("browser")
    make_user("steward", "steward")
    make_user("approver1", "approver")
    make_user("approver2", "approver")
    base = live_server.url

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            steward = sign_in(browser, base, "steward")

            # when: the steward types the rename
            steward.goto(f"{base}/changes/new/")
            expect(steward.locator("#preview-empty")).to_be_visible()
            with steward.expect_response(lambda r: r.url.endswith("/changes/preview/") and r.status == 200):
                steward.locator("textarea[name=statement]").press_sequentially(RENAME, delay=5)

            # then: the live preview shows the normalized statement, the moves, the risk and the approvals needed
            expect(steward.locator("#preview-statement")).to_have_text(NORMALIZED)
            expect(steward.locator("#preview-risk")).to_have_text("high risk")
            expect(steward.locator("#preview-approvals .value")).to_have_text("2")
            expect(steward.locator("#preview-moves")).to_contain_text("sales.db/clients")
            expect(steward.locator("#preview-counts")).to_contain_text("TBLS")
            steward.screenshot(path=str(screenshots / "new-request.png"), full_page=True)

            # when: saving and submitting it
            steward.fill("textarea[name=reason]", "Customers are clients now")
            steward.get_by_role("button", name="Save as draft").click()
            expect(steward).to_have_url(re.compile(r"/changes/\d+/$"))
            request_url = steward.url
            pk = int(re.search(r"/changes/(\d+)/$", request_url).group(1))
            steward.get_by_role("button", name="Submit for approval").click()

            # then
            expect(steward.locator("#state-badge")).to_have_text("Waiting for approval")
            expect(steward.locator("#reason-execute")).to_have_text(
                f"Request #{pk} is waiting for approval: 0 of 2 approvals given."
            )

            # when: two approvers approve it from their inbox
            for number, name in enumerate(("approver1", "approver2"), start=1):
                approver = sign_in(browser, base, name)
                approver.goto(f"{base}/changes/inbox/")
                expect(approver.locator("#nav-inbox-count")).to_have_text("1")
                row = approver.locator(f'#requests tr[data-request="{pk}"]')
                expect(row).to_contain_text("sales.customers")
                if number == 1:
                    approver.screenshot(path=str(screenshots / "inbox.png"), full_page=True)
                row.get_by_role("link", name=f"#{pk}").click()
                approver.fill("#decision textarea[name=comment]", f"Checked the move ({name})")
                approver.get_by_role("button", name="Approve").click()
                expect(approver.locator(".message.success")).to_be_visible()
                expect(approver.locator("#approval-count")).to_have_text(f"{number} of 2")
                approver.context.close()

            # and the steward executes it, after confirming
            steward.goto(request_url)
            expect(steward.locator("#state-badge")).to_have_text("Approved")
            steward.screenshot(path=str(screenshots / "request-approved.png"), full_page=True)
            steward.get_by_role("link", name="Execute…").click()
            expect(steward.locator("#confirm-preview #preview-statement")).to_have_text(NORMALIZED)
            expect(steward.locator("#id_confirm")).not_to_be_checked()
            steward.get_by_role("button", name="Execute now").click()  # not ticked: refused
            expect(steward.locator("#confirm-error")).to_have_text(
                "Tick the confirmation box: nothing runs without it."
            )
            steward.screenshot(path=str(screenshots / "confirm.png"), full_page=True)
            steward.check("#id_confirm")
            steward.get_by_role("button", name="Execute now").click()

            # then: the request page follows the job until it is done, then shows actual counts and the duration
            expect(steward).to_have_url(request_url)
            expect(steward.locator("#job")).to_have_attribute("data-state", "succeeded", timeout=20_000)
            expect(steward.locator("#state-badge")).to_have_text("Succeeded")
            expect(steward.locator("#execution-duration")).to_be_visible()
            expect(steward.locator('#execution-counts tr[data-table="TBLS"] td.actual').nth(1)).to_have_text("1")
            expect(steward.locator("#action-revert button")).to_be_enabled()
            expect(steward.locator("#history li").last).to_have_attribute("data-action", "finish")
            steward.screenshot(path=str(screenshots / "request-succeeded.png"), full_page=True)

            # and the table shows under its new name, with its change history
            steward.goto(f"{base}/m/{METASTORE}/db/sales/t/clients/")
            expect(steward.locator("h1")).to_contain_text("clients")
            expect(steward.locator("#change-history")).to_contain_text("finish")
            steward.goto(f"{base}/m/{METASTORE}/db/sales/")
            expect(steward.locator("#tables")).to_contain_text("clients")
            expect(steward.locator("#tables")).not_to_contain_text("customers")

            # and the audit log shows every step
            steward.goto(f"{base}/changes/audit/?request={pk}")
            logged = steward.locator("#audit tbody tr").evaluate_all("rows => rows.map(r => r.dataset.action)")
            steward.screenshot(path=str(screenshots / "audit.png"), full_page=True)
        finally:
            browser.close()

    # then (outside the browser's event loop, where the ORM may run)
    request = ChangeRequest.objects.get(pk=pk)
    assert request.state == "succeeded"
    assert request.execution.actual_counts == request.execution.expected_counts
    assert Table.objects.using(METASTORE).filter(database__name="sales", name="clients").exists()
    assert not Table.objects.using(METASTORE).filter(database__name="sales", name="customers").exists()
    assert logged == ["finish", "execute", "execute", "approve", "approve", "submit", "create"]
    assert list(AuditRecord.objects.filter(request_id_ref=pk).values_list("actor", "action")) == [
        ("steward", "create"),
        ("steward", "submit"),
        ("approver1", "approve"),
        ("approver2", "approve"),
        ("steward", "execute"),
        ("job", "finish"),
    ]


def test_the_requester_cannot_approve_their_own_request(live_server, screenshots: Path):
    # given: a steward who is also an approver, with a submitted request of their own
    from playwright.sync_api import expect, sync_playwright

    make_user("stella", "steward", "approver")
    base = live_server.url
    four_eyes = "Nobody approves their own change (four-eyes rule)."

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = sign_in(browser, base, "stella")
            page.goto(f"{base}/changes/new/?statement=ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='crm')")
            expect(page.locator("#preview-risk")).to_have_text("low risk")
            page.get_by_role("button", name="Save as draft").click()
            page.get_by_role("button", name="Submit for approval").click()
            expect(page.locator("#state-badge")).to_have_text("Waiting for approval")
            pk = int(re.search(r"/changes/(\d+)/$", page.url).group(1))

            # then: the approve button is disabled, and says why
            approve = page.locator("#action-approve button")
            expect(approve).to_be_disabled()
            expect(page.locator("#reason-approve")).to_have_text(four_eyes)
            expect(approve).to_have_attribute("title", four_eyes)
            page.goto(f"{base}/changes/inbox/")
            expect(page.locator("#requests")).to_contain_text("Nothing is waiting for you.")
            page.screenshot(path=str(screenshots / "inbox-empty.png"), full_page=True)

            # when: posting anyway (the button enabled by hand)
            page.goto(f"{base}/changes/{pk}/")
            page.evaluate(
                "const b = document.querySelector('#action-approve button');"
                "b.disabled = false; b.removeAttribute('aria-disabled');"
            )
            approve.click()

            # then: refused with the same words
            expect(page.locator(".message.error")).to_have_text(four_eyes)
            expect(page.locator("#state-badge")).to_have_text("Waiting for approval")
            expect(page.locator("#approval-count")).to_have_text("0 of 1")
            page.screenshot(path=str(screenshots / "four-eyes.png"), full_page=True)
        finally:
            browser.close()

    assert not Approval.objects.filter(request_id=pk).exists()
    assert ChangeRequest.objects.get(pk=pk).state == "submitted"

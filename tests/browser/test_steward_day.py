"""
A steward's day in a real browser (headless Debian Chromium through Playwright) against the live server (issue 14):
the home page, a table, a guided request (an operation picked, its statement edited), the live preview (a readable
diff, the risk criteria; typing the reason does not re-run it), save and submit; an approver approves from their home
page; the steward executes it and the page follows the job to the end (the counts table stays inside its card); then
the revert, approved and executed the same way, puts the table back.

Jobs run in a separate worker process (``manage.py run_jobs``, the ``job_workers`` fixture), as in production, so the
data is committed (``transaction=True``) and the metastore is rebuilt (schema and seed) afterwards. Screenshots of
every step go to ``$CATALOG_ADMIN_SCREENSHOTS`` (``.ci/run`` sets ``var/screenshots``) or else
``var/screenshots/steward-day``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from catalog_admin.models import Column, Table
from operations.models import AuditRecord, ChangeRequest
from tests.fixtures.browser import follow, launch_chromium, screenshot_folder, sign_in
from tests.fixtures.factories import PASSWORD, make_user

METASTORE = settings.DEFAULT_METASTORE
ADD_TIER = "ALTER TABLE `sales`.`customers` ADD COLUMNS (tier string COMMENT 'loyalty tier')"
REPOSITORY = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", METASTORE]),
    pytest.mark.usefixtures("restore_roles"),
]


def columns_of(database: str, table: str) -> list[str]:
    sd = Table.objects.using(METASTORE).select_related("sd").get(database__name=database, name=table).sd
    return list(
        Column.objects.using(METASTORE).filter(cd_id=sd.cd_id).order_by("position").values_list("name", flat=True)
    )


def inside_its_card(page, selector: str) -> bool:
    """Whether the element's right edge stays within the card (``.panel``) that holds it."""
    return page.locator(selector).evaluate(
        "el => el.getBoundingClientRect().right <= el.closest('.panel').getBoundingClientRect().right + 0.5"
    )


def approve_from_home(browser, base: str, pk: int, shots: Path, name: str) -> None:
    """The approver opens their home page, finds the request waiting and approves it there."""
    from playwright.sync_api import expect

    approver = sign_in(browser, base, "abe", PASSWORD, then=f"/changes/home/?metastore={METASTORE}")
    waiting = approver.locator(f'#home-waiting [data-request="{pk}"]')
    expect(waiting).to_be_visible()
    approver.screenshot(path=str(shots / f"{name}-approver-home.png"), full_page=True)
    waiting.locator("input[name=comment]").fill("Checked the preview")
    waiting.get_by_role("button", name="Approve").click()
    expect(approver.locator(".message.success")).to_contain_text(f"Request #{pk} is approved")
    expect(approver).to_have_url(re.compile(r"/changes/home/"))
    expect(approver.locator(f'#home-waiting [data-request="{pk}"]')).to_have_count(0)
    approver.context.close()


def execute_and_follow(page, shots: Path, name: str) -> None:
    """Confirm, execute, and follow the job's progress until it succeeded."""
    from playwright.sync_api import expect

    page.get_by_role("link", name="Execute…").click()
    page.check("#id_confirm")
    page.get_by_role("button", name="Execute now").click()
    expect(page.locator("#job")).to_be_visible()
    expect(page.locator("#job progress")).to_be_visible()
    expect(page.locator("#job")).to_have_attribute("data-state", "succeeded", timeout=30_000)
    expect(page.locator("#state-badge")).to_have_text("Succeeded")
    page.screenshot(path=str(shots / f"{name}-executed.png"), full_page=True)


def test_a_stewards_day(live_server, rebuilt_metastore, job_workers) -> None:
    # given: a steward and an approver; a job worker process, as in production
    from playwright.sync_api import expect, sync_playwright

    job_workers("steward-day")
    make_user("sam", "steward")
    make_user("abe", "approver")
    base = live_server.url
    shots = screenshot_folder(REPOSITORY / "var" / "screenshots" / "steward-day")
    previews: list[str] = []
    columns_before = columns_of("sales", "customers")

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # when: the steward starts from the home page, then opens a table
            steward = sign_in(browser, base, "sam", PASSWORD, width=1100, then="/changes/")
            steward.locator("#nav-home").click()
            expect(steward.locator("h1")).to_contain_text(METASTORE)
            expect(steward.locator("#home-anomalies")).to_contain_text("sales.orders")
            steward.screenshot(path=str(shots / "01-home.png"), full_page=True)
            steward.goto(f"{base}/m/{METASTORE}/db/sales/t/customers/")
            follow(steward, steward.locator("#request-change"))

            # then: a guided request with a statement that previews at once
            expect(steward.locator("#guided-picker")).to_be_visible()
            expect(steward.locator("#preview-statement")).to_contain_text("SET TBLPROPERTIES")
            expect(steward.locator("#parse-error")).to_have_count(0)
            steward.screenshot(path=str(shots / "02-guided-request.png"), full_page=True)

            # when: picking "Add columns" and editing the statement it produced
            steward.on("request", lambda r: previews.append(r.url) if r.url.endswith("/changes/preview/") else None)
            with steward.expect_response(lambda r: r.url.endswith("/changes/preview/")):
                steward.locator('#guided-picker a[data-operation="add_columns"]').click()
            expect(steward.locator("textarea[name=statement]")).to_have_value(re.compile(r"ADD COLUMNS"))
            with steward.expect_response(lambda r: r.url.endswith("/changes/preview/") and r.status == 200):
                steward.fill("textarea[name=statement]", ADD_TIER)

            # then: the preview shows the new column as a diff entry, the risk and why
            diff = steward.locator("#preview-diff")
            expect(diff.locator("li.added")).to_contain_text("tier")
            expect(diff).not_to_contain_text("((")
            expect(steward.locator("#preview-risk")).to_have_text("medium risk")
            expect(steward.locator('#preview-criteria [data-criterion="columns_changed"]')).to_be_visible()
            steward.screenshot(path=str(shots / "03-preview.png"), full_page=True)

            # and typing the reason does not re-run the preview
            seen = len(previews)
            steward.locator("textarea[name=reason]").press_sequentially("Loyalty tiers for the CRM team", delay=20)
            steward.wait_for_timeout(900)  # longer than the statement's 500 ms debounce
            assert len(previews) == seen

            # when: saved and submitted
            steward.get_by_role("button", name="Save as draft").click()
            expect(steward).to_have_url(re.compile(r"/changes/\d+/$"))
            request_url = steward.url
            pk = int(re.search(r"/changes/(\d+)/$", request_url).group(1))
            steward.get_by_role("button", name="Submit for approval").click()
            expect(steward.locator("#state-badge")).to_have_text("Waiting for approval")
            steward.screenshot(path=str(shots / "04-submitted.png"), full_page=True)

            # and the approver approves it from their home page
            approve_from_home(browser, base, pk, shots, "05")

            # then: the steward's home shows it approved, not run; the steward executes it and follows the job
            steward.goto(f"{base}/changes/home/?metastore={METASTORE}")
            expect(steward.locator(f'#home-approved [data-request="{pk}"]')).to_be_visible()
            steward.screenshot(path=str(shots / "06-home-approved.png"), full_page=True)
            steward.locator(f'#home-approved [data-request="{pk}"] a').first.click()
            execute_and_follow(steward, shots, "07")
            assert inside_its_card(steward, "#execution-counts")
            assert inside_its_card(steward, "#preview-counts table")

            # when: the steward asks for the revert, which is approved and executed the same way
            steward.locator("#action-revert button").click()
            expect(steward.locator("#state-badge")).to_have_text("Draft")
            revert_pk = int(re.search(r"/changes/(\d+)/$", steward.url).group(1))
            steward.get_by_role("button", name="Submit for approval").click()
            expect(steward.locator("#state-badge")).to_have_text("Waiting for approval")
            approve_from_home(browser, base, revert_pk, shots, "08-revert")
            steward.goto(f"{base}/changes/{revert_pk}/")
            execute_and_follow(steward, shots, "09-revert")
            steward.goto(f"{base}/changes/home/?metastore={METASTORE}")
            expect(steward.locator("#home-executions")).to_contain_text(f"#{revert_pk}")
            steward.screenshot(path=str(shots / "10-home-after.png"), full_page=True)
        finally:
            browser.close()

    # then (outside the browser's event loop, where the ORM may run): the table is as it was, every step audited
    assert columns_of("sales", "customers") == columns_before and "tier" not in columns_before
    assert ChangeRequest.objects.get(pk=pk).state == "reverted"
    assert ChangeRequest.objects.get(pk=revert_pk).state == "succeeded"
    actions = list(AuditRecord.objects.filter(request_id_ref=pk).values_list("actor", "action"))
    assert actions[:4] == [("sam", "create"), ("sam", "submit"), ("abe", "approve"), ("sam", "execute")]

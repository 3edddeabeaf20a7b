"""
A steward's and the approvers' day at the size the console exists for (issue 29), in Chromium through Playwright
against the live server: ``bench.events`` with a year and a day of hourly partitions (8,784, seeded set-based by
``seed_metastore``, each directory real with one small file). The steward searches, browses the table and its
partitions, requests a range ``DROP PARTITION`` of the year (8,760 partitions) with a reason; the two approvers a high
risk needs approve it from Home with the reason, the risk criteria and the partition count in view; the steward
executes it and the page follows the job; the revert, approved and executed the same way, brings the rows and the
directories back.

Screenshots of every step go to ``$CATALOG_ADMIN_SCREENSHOTS`` (``.ci/run`` keeps them as artifacts) or else
``var/screenshots/steward-day-at-scale``. Jobs run in a worker process (``job_workers``), so the data is committed
and the metastore is rebuilt afterwards (``rebuilt_metastore``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from catalog_admin.models import Partition, Table
from catalog_admin.seeding.content import BENCH_FIRST_DAY
from operations.models import ChangeRequest
from tests.fixtures.browser import follow, launch_chromium, screenshot_folder, sign_in
from tests.fixtures.factories import PASSWORD, make_user

METASTORE = settings.DEFAULT_METASTORE
DAYS = 366  # a year of hourly partitions to drop, and one more day that stays
YEAR = 365 * 24
FILE = "part-00000.parquet"
REASON = "Events older than a year leave the warehouse (retention policy R-7)"
REPOSITORY = Path(__file__).resolve().parents[2]
PATIENCE_MS = 240_000  # how long a page or an expectation waits: each step plans 8,760 partitions on a shared machine
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True, databases=["default", METASTORE]),
    pytest.mark.usefixtures("restore_roles"),
]


@pytest.fixture
def patient_expectations() -> Iterator[None]:
    """Playwright's expectations wait ``PATIENCE_MS`` in this test (not 5 s), and again 5 s afterwards."""
    from playwright.sync_api import expect

    expect.set_options(timeout=PATIENCE_MS)
    yield
    expect.set_options(timeout=5_000)


def patient(page):
    """``page`` with its actions and navigations waiting ``PATIENCE_MS``."""
    page.set_default_timeout(PATIENCE_MS)
    return page


def seed_events(warehouse: Path) -> tuple[str, list[Path]]:
    """``bench.events`` with ``DAYS`` × 24 hourly partitions (set-based), each directory written with one file."""
    call_command(
        "seed_metastore", metastore=METASTORE, big_table_partitions=DAYS * 24, warehouse=str(warehouse), verbosity=0
    )
    table = Table.objects.using(METASTORE).filter(database__name="bench").order_by("-id").first()
    folders = []
    for location in partitions_of(table.name).order_by("name").values_list("sd__location", flat=True):
        folder = Path(location.removeprefix("file:"))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / FILE).write_bytes(b"x" * 64)
        folders.append(folder)
    return table.name, folders


def partitions_of(table: str):
    return Partition.objects.using(METASTORE).filter(table__database__name="bench", table__name=table)


def shot(page, shots: Path, name: str) -> None:
    page.screenshot(path=str(shots / f"{name}.png"), full_page=False)


def approve_from_home(
    browser, base: str, pk: int, shots: Path, name: str, *, partitions: int, reason: str, criterion: str
) -> None:
    """Both approvers a high-risk request needs find it on Home with its reason, risk criteria and partition count,
    and approve it there."""
    from playwright.sync_api import expect

    for approver_name, outcome in (("abe", "Approval recorded: 1 of 2."), ("ada", f"Request #{pk} is approved")):
        approver = patient(
            sign_in(browser, base, approver_name, PASSWORD, then=f"/changes/home/?metastore={METASTORE}")
        )
        waiting = approver.locator(f'#home-waiting [data-request="{pk}"]')
        expect(waiting).to_be_visible()
        expect(approver.locator(f"#home-reason-{pk}")).to_contain_text(reason)
        expect(approver.locator(f"#home-partitions-{pk}")).to_have_text(f"{partitions:,} partitions")
        expect(approver.locator(f'#home-criteria-{pk} [data-criterion="{criterion}"]')).to_be_visible()
        shot(approver, shots, f"{name}-{approver_name}-home")
        waiting.locator("input[name=comment]").fill("Checked the range and the retention policy")
        waiting.get_by_role("button", name="Approve").click()
        expect(approver.locator(".message.success")).to_contain_text(outcome)
        expect(approver.locator(f'#home-waiting [data-request="{pk}"]')).to_have_count(0)
        approver.context.close()


def execute_and_follow(page, shots: Path, name: str) -> None:
    """Confirm, execute, watch the job's progress until it succeeded."""
    from playwright.sync_api import expect

    page.get_by_role("link", name="Execute…").click()
    page.check("#id_confirm")
    shot(page, shots, f"{name}-confirm")
    page.get_by_role("button", name="Execute now").click()
    expect(page.locator("#job")).to_be_visible()
    expect(page.locator("#job progress")).to_be_visible()
    shot(page, shots, f"{name}-progress")
    expect(page.locator("#job")).to_have_attribute("data-state", "succeeded")
    expect(page.locator("#state-badge")).to_have_text("Succeeded")
    shot(page, shots, f"{name}-executed")


@pytest.mark.usefixtures("patient_expectations")
def test_a_stewards_and_approvers_day_at_scale(live_server, rebuilt_metastore, official_schemas, job_workers) -> None:
    # given: bench.events with 8,784 hourly partitions and their directories; a steward, two approvers, a job worker
    from playwright.sync_api import expect, sync_playwright

    table, folders = seed_events(official_schemas[METASTORE].warehouse)
    assert partitions_of(table).count() == DAYS * 24 and all((folder / FILE).exists() for folder in folders)
    cutoff = (BENCH_FIRST_DAY + timedelta(days=365)).isoformat()
    statement = f"ALTER TABLE `bench`.`{table}` DROP PARTITION (dt < '{cutoff}')"
    job_workers("steward-day-at-scale")
    make_user("sam", "steward")
    make_user("abe", "approver")
    make_user("ada", "approver")
    base = live_server.url
    shots = screenshot_folder(REPOSITORY / "var" / "screenshots" / "steward-day-at-scale")

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # when: the steward searches for the table and opens it
            steward = patient(sign_in(browser, base, "sam", PASSWORD, then=f"/search/?q={table}"))
            result = steward.locator(f'a[href$="/db/bench/t/{table}/"]').first
            expect(result).to_be_visible()
            shot(steward, shots, "01-search")
            result.click()

            # then: the table page counts every partition, and the request link is in its head
            expect(steward.locator("h1")).to_contain_text(table)
            expect(steward.locator("#partition-count")).to_contain_text(f"{DAYS * 24:,} partitions")
            expect(steward.locator(".page-head #request-change")).to_be_visible()
            shot(steward, shots, "02-table")

            # and the partitions page lists them in order, the first day first
            steward.locator("#partition-count").click()
            expect(steward.locator("#partitions")).to_contain_text(f"dt={BENCH_FIRST_DAY.isoformat()}/hour=0")
            shot(steward, shots, "03-partitions")

            # when: the steward asks for a range drop of the year from the guided request
            steward.goto(f"{base}/m/{METASTORE}/db/bench/t/{table}/")
            follow(steward, steward.locator(".page-head #request-change"))
            with steward.expect_response(lambda r: r.url.endswith("/changes/preview/") and r.status == 200):
                steward.locator('#guided-picker a[data-operation="partition_drop"]').click()
            with steward.expect_response(lambda r: r.url.endswith("/changes/preview/") and r.status == 200):
                steward.fill("textarea[name=statement]", statement)

            # then: the preview counts the year's partitions, names the risk and what happens to the data
            expect(steward.locator("#partition-totals")).to_contain_text(f"{YEAR:,} partitions")
            expect(steward.locator('#preview-criteria [data-criterion="partitions_dropped"]')).to_be_visible()
            expect(steward.locator("#preview-blockers")).to_have_count(0)
            shot(steward, shots, "04-preview")

            # when: the reason is written, the request saved and submitted
            steward.fill("textarea[name=reason]", REASON)
            steward.get_by_role("button", name="Save as draft").click()
            expect(steward).to_have_url(re.compile(r"/changes/\d+/$"))
            pk = int(re.search(r"/changes/(\d+)/$", steward.url).group(1))
            steward.get_by_role("button", name="Submit for approval").click()
            expect(steward.locator("#state-badge")).to_have_text("Waiting for approval")
            shot(steward, shots, "05-submitted")

            # and the approver approves it from Home, with the reason, the risk and the count in view
            approve_from_home(
                browser, base, pk, shots, "06", partitions=YEAR, reason=REASON, criterion="partitions_dropped"
            )

            # then: the steward executes it and follows the job
            steward.goto(f"{base}/changes/{pk}/")
            execute_and_follow(steward, shots, "07")
        finally:
            browser.close()

    # then (outside the browser's event loop): the year's rows and directories are gone, the last day stays
    assert ChangeRequest.objects.get(pk=pk).state == "succeeded"
    assert partitions_of(table).count() == 24
    assert not any(folder.exists() for folder in folders[:YEAR])
    assert all((folder / FILE).exists() for folder in folders[YEAR:])

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # when: the steward asks for the revert; it is approved from Home and executed the same way
            steward = patient(sign_in(browser, base, "sam", PASSWORD, then=f"/changes/{pk}/"))
            steward.locator("#action-revert button").click()
            expect(steward.locator("#state-badge")).to_have_text("Draft")
            revert_pk = int(re.search(r"/changes/(\d+)/$", steward.url).group(1))
            steward.get_by_role("button", name="Submit for approval").click()
            expect(steward.locator("#state-badge")).to_have_text("Waiting for approval")
            shot(steward, shots, "08-revert-submitted")
            revert_facts = {"partitions": YEAR, "reason": f"Revert of request #{pk}", "criterion": "data_moved"}
            approve_from_home(browser, base, revert_pk, shots, "09-revert", **revert_facts)
            steward.goto(f"{base}/changes/{revert_pk}/")
            execute_and_follow(steward, shots, "10-revert")
            steward.goto(f"{base}/m/{METASTORE}/db/bench/t/{table}/")
            expect(steward.locator("#partition-count")).to_contain_text(f"{DAYS * 24:,} partitions")
            shot(steward, shots, "11-table-after")
        finally:
            browser.close()

    # then: every row and every directory with its file is back
    assert ChangeRequest.objects.get(pk=pk).state == "reverted"
    assert ChangeRequest.objects.get(pk=revert_pk).state == "succeeded"
    assert partitions_of(table).count() == DAYS * 24
    assert all((folder / FILE).exists() for folder in folders)

"""
A Spark job's page in a real browser (Chromium through Playwright) against the live server, the job run by a real
worker process (``job_workers``) with a real Spark driver: the page follows the job through htmx polling (counters,
the Spark application and its UI link), an operator cancels it from the page, the page shows it cancelled and stops
polling.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import transaction

from operations.models import Job
from operations.services.spark_jobs import enqueue_spark_job
from tests.fixtures.browser import launch_chromium
from tests.fixtures.factories import PASSWORD, make_user
from tests.fixtures.spark_jobs import data_directories

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default"]),
    pytest.mark.usefixtures("restore_roles"),
]


def test_the_job_page_follows_a_spark_job_and_cancels_it(live_server, job_workers, tmp_path: Path) -> None:
    # given: a checksum job over four directories, a worker, an operator signed in
    from playwright.sync_api import expect, sync_playwright

    make_user("operator", "admin")
    with transaction.atomic():
        job = enqueue_spark_job(
            program="checksum",
            plan={"directories": data_directories(tmp_path / "data", count=4), "pause_seconds": 3},
            actor="operator",
        )
    job_workers("browser")
    polls: list[int] = []

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(f"{live_server.url}/accounts/login/?next=/changes/jobs/{job.pk}/")
            page.fill("#id_username", "operator")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(re.compile(rf"/changes/jobs/{job.pk}/$"))
            page.on("response", lambda r: r.url.endswith("/progress/") and polls.append(r.status))

            # when: the page polls while the driver works
            expect(page.locator("#job-state")).to_have_text("Running", timeout=240_000)
            expect(page.locator("#job-partitions")).to_have_text(re.compile(r"^[1-3] of 4$"), timeout=240_000)

            # then: counters and the Spark application with its UI
            expect(page.locator("#job-files")).to_contain_text("of 12")
            expect(page.locator("#job-spark-app")).to_contain_text("local-")
            expect(page.locator("#job-spark-ui")).to_have_attribute("href", re.compile(r"^http://"))

            # when: the operator cancels it
            page.get_by_role("button", name="Cancel job").click()
            expect(page.locator(".message.success")).to_have_text(f"Cancel requested for job #{job.pk}.")

            # then: the page shows it cancelled, and polling stops
            expect(page.locator("#job-state")).to_have_text("Cancelled", timeout=120_000)
            expect(page.locator("#action-cancel-job")).to_have_count(0)  # a finished job offers no cancel
            expect(page.locator("#job-spark-ui")).to_have_count(0)
            settled = len(polls)
            page.wait_for_timeout(2500)  # two more poll intervals: no request goes out
            assert len(polls) == settled and polls[-1] == 286
        finally:
            browser.close()

    finished = Job.objects.get(pk=job.pk)
    assert (finished.state, finished.result, finished.cancel_requested_by) == ("cancelled", None, "operator")
    assert 1 <= len(finished.completed) < 4

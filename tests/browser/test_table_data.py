"""
The table page's data in a real browser (headless Debian Chromium, Playwright, the live server): the partition charts
drawn by static/js/charts.js from the API, the anomaly counts and the sample loaded by htmx, the SHOW CREATE TABLE copy
button (the clipboard holds the statement), the search box's typeahead leading to a table, and the ACID delta counts
chart of a transactional table (stacked, with the Initiator's threshold line). No Content-Security-
Policy violation on the way. A screenshot of the table page goes to ``var/screenshots/`` for review.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.table_ddl import show_create_statement
from catalog_admin.selectors.tables import get_table_detail
from tests.fixtures.browser import launch_chromium

PASSWORD = "not-a-secret-1"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", settings.DEFAULT_METASTORE]),
]


def test_charts_anomalies_sample_copy_and_typeahead(live_server, django_user_model) -> None:
    # given
    from playwright.sync_api import expect, sync_playwright

    django_user_model.objects.create_user(username="steward", password=PASSWORD)
    metastore = get_metastore(settings.DEFAULT_METASTORE)
    statement = show_create_statement(metastore, get_table_detail(metastore, "sales", "orders"))
    table_path = f"/m/{metastore.name}/db/sales/t/orders/"

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context(
                viewport={"width": 1400, "height": 1000}, permissions=["clipboard-read", "clipboard-write"]
            )
            page = context.new_page()
            violations: list[str] = []
            page.on("console", lambda m: m.type == "error" and violations.append(m.text))

            # when: signing in on the way to sales.orders
            page.goto(f"{live_server.url}/accounts/login/?next={table_path}")
            page.fill("#id_username", "steward")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")

            # then: the charts are drawn from the API, one bar per day, and the anomalies are counted
            expect(page).to_have_url(f"{live_server.url}{table_path}")
            expect(page.locator("[data-charts-url]")).to_have_attribute("data-loaded", "true")
            expect(page.locator('figure[data-chart="partitions_per_day"] rect.bar')).to_have_count(3)
            expect(page.locator('figure[data-chart="file_sizes"] svg')).to_have_count(1)
            expect(page.locator("#anomaly-missing")).to_have_text("1 missing on disk")

            # when: scrolling to the sample (htmx loads it when revealed)
            page.locator("#sample").scroll_into_view_if_needed()

            # then
            expect(page.locator("#sample-rows tbody tr")).to_have_count(20)
            expect(page.locator("#sample-rows thead th")).to_have_count(6)

            # when: copying SHOW CREATE TABLE
            page.click("#copy-show-create")

            # then
            expect(page.locator("#copy-show-create")).to_have_text("Copied")
            assert page.evaluate("navigator.clipboard.readText()") == statement
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "table-data.png"), full_page=True)

            # when: typing a qualified name in the top bar's search box
            page.locator(".nav-search input[name=q]").press_sequentially("marketing.cli", delay=40)

            # then: the typeahead offers the table; choosing it opens its page
            suggestion = page.locator("#search-suggestions a", has_text="marketing.clicks")
            expect(suggestion).to_have_count(1)
            suggestion.click()
            expect(page).to_have_url(f"{live_server.url}/m/{metastore.name}/db/marketing/t/clicks/")

            # when: opening the ACID directories of a transactional table (four partitions, each delta_1 and delta_2)
            page.goto(f"{live_server.url}/m/{metastore.name}/db/ops/t/job_runs_acid/acid/")

            # then: the delta counts are drawn stacked (deltas, delete deltas) under the Initiator's threshold line
            chart = page.locator('figure[data-chart="delta_counts"]')
            expect(chart).to_have_attribute("data-bars", "4")
            expect(chart.locator('rect.bar[data-series="deltas"]')).to_have_count(4)
            expect(chart.locator('rect.bar[data-series="delete deltas"]')).to_have_count(4)
            expect(chart.locator("line.threshold")).to_have_attribute("data-value", "10")
            page.locator("#acid-charts").screenshot(path=str(SCREENSHOTS / "acid-delta-charts.png"))
            assert not [v for v in violations if "Content Security Policy" in v], violations
        finally:
            browser.close()

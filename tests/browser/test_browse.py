"""
Browsing in a real browser (headless Debian Chromium through Playwright) against the live server: sign in,
narrow a database's tables by typing in the filter (htmx swaps the list, no page load), then open the
partitions browser of a partitioned table and go to the next page.

Chromium must be installed at /usr/bin/chromium (``apt-get install -y chromium``); without it this test
fails and says so, it is never skipped.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from catalog_admin.selectors.databases import get_database
from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.partitions import PartitionFilter, list_partitions
from catalog_admin.selectors.tables import TableFilter, get_table_detail, list_tables
from tests.fixtures.browser import launch_chromium

DATABASE = "sales"
PAGE_SIZE = 5
PASSWORD = "not-a-secret-1"

# The live server answers from another thread, so the test data must be committed (transaction=True);
# only the console's database and the one metastore browsed are used (a TransactionTestCase flushes them).
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, databases=["default", settings.DEFAULT_METASTORE]),
]


def test_sign_in_filter_tables_and_page_through_partitions(live_server, django_user_model, tmp_path):
    # given: a steward, and what the seeded default metastore holds (read before the browser's event loop runs)
    from playwright.sync_api import expect, sync_playwright

    django_user_model.objects.create_user(username="steward", password=PASSWORD)
    metastore = get_metastore(settings.DEFAULT_METASTORE)
    database = get_database(metastore, DATABASE)
    every_table = list_tables(metastore, database, TableFilter(), size=500).items
    table = max(
        (row for row in every_table if row.is_partitioned),
        key=lambda row: get_table_detail(metastore, DATABASE, row.name).partition_count,
    )
    matching = list_tables(metastore, database, TableFilter(q=table.name), size=500).items
    detail = get_table_detail(metastore, DATABASE, table.name)
    partitions = list_partitions(metastore, detail.table, detail.partition_keys, PartitionFilter(), size=500)
    names = [row.name for row in partitions.items]
    assert len(matching) < len(every_table), "the seed needs a table name that narrows the list"
    assert len(names) > PAGE_SIZE, f"the seed needs more than {PAGE_SIZE} partitions in {DATABASE}.{table.name}"
    tables_path = f"/m/{metastore.name}/db/{DATABASE}/"

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})

            # when: signing in on the way to the database's tables
            page.goto(f"{live_server.url}/accounts/login/?next={tables_path}")
            page.fill("#id_username", "steward")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")

            # then
            expect(page).to_have_url(f"{live_server.url}{tables_path}")
            rows = page.locator("#tables tbody tr")
            expect(rows).to_have_count(len(every_table))

            # when: typing in the name filter
            page.evaluate("window.__loadedOnce = true")  # a full page load would drop this
            with page.expect_response(lambda r: r.request.headers.get("hx-request") == "true" and "q=" in r.url):
                page.locator("form.filters input[name=q]").press_sequentially(table.name, delay=30)

            # then: htmx swapped in the narrowed list, without a page load, and pushed the filter into the URL
            expect(rows).to_have_count(len(matching))
            expect(page.locator("#tables")).to_contain_text(table.name)
            assert page.evaluate("window.__loadedOnce === true"), "the filter reloaded the page instead of swapping"
            expect(page).to_have_url(re.compile(rf"{re.escape(tables_path)}\?(.*&)?q={re.escape(table.name)}(&|$)"))
            page.screenshot(path=str(tmp_path / "tables.png"), full_page=True)

            # when: opening the partitions browser from the table's "partitioned" flag, 5 partitions a page
            page.locator("#tables tbody tr", has_text=table.name).get_by_role("link", name="partitioned").first.click()
            expect(page.locator("#partitions")).to_be_visible()
            page.goto(f"{page.url}?page_size={PAGE_SIZE}")
            partition_links = page.locator("#partitions tbody tr td:first-child a")
            expect(partition_links).to_have_text(names[:PAGE_SIZE])

            # and going to the next page
            page.locator("a[rel=next]").first.click()

            # then
            expect(partition_links).to_have_text(names[PAGE_SIZE : 2 * PAGE_SIZE])
            expect(page).to_have_url(re.compile(r"[?&]cursor=[^&]+"))
            expect(page.get_by_role("link", name="« First page").first).to_be_visible()
            page.screenshot(path=str(tmp_path / "partitions.png"), full_page=True)
        finally:
            browser.close()

"""
"Recompute statistics where stale" offered where a steward meets stale statistics: on the "stale statistics" list of
a table's partitions and on the table page (a guided ``ANALYZE … WITH ('only_stale'='true')`` request, for those who
may request changes), never for a view or a transactional table, whose statistics ANALYZE does not recompute here.
"""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from catalog_admin.selectors.metastores import Metastore
from tests.fixtures.factories import html

pytestmark = pytest.mark.django_db(databases="__all__")

STALE = "ANALYZE TABLE `sales`.`orders` COMPUTE STATISTICS WITH ('only_stale'='true')"


def signed_in(user) -> Client:  # noqa: ANN001 - a Django user
    client = Client()
    client.force_login(user)
    return client


def live_preview(client: Client, metastore: Metastore, statement: str) -> str:
    response = client.post(
        reverse("operations:preview"), {"metastore": metastore.name, "statement": statement}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    return html(response)


def _statement(page: str) -> str:
    return unescape(re.search(r'<textarea name="statement"[^>]*>(.*?)</textarea>', page, re.DOTALL).group(1)).strip()


def test_the_stale_statistics_list_offers_the_recompute_to_stewards(metastore: Metastore, people: dict) -> None:
    """A steward sees "Recompute statistics where stale" on the stale-statistics list only; a viewer does not; a
    transactional table's stale list does not offer it."""
    # given
    steward, viewer = signed_in(people["steward"]), signed_in(people["viewer"])
    partitions = reverse("catalog:partitions", args=[metastore.name, "sales", "orders"])
    acid = reverse("catalog:partitions", args=[metastore.name, "ops", "job_runs_acid"])

    # when
    stale = html(steward.get(partitions, {"anomaly": "stale"}))
    every = html(steward.get(partitions))
    missing = html(steward.get(partitions, {"anomaly": "missing"}))
    as_viewer = html(viewer.get(partitions, {"anomaly": "stale"}))
    acid_stale = html(steward.get(acid, {"anomaly": "stale"}))

    # then
    assert 'id="request-analyze-stale"' in stale and "operation=analyze_stale" in stale
    assert 'id="request-analyze-stale"' not in every
    assert 'id="request-analyze-stale"' not in missing and 'id="request-msck-repair"' in missing
    assert 'id="request-analyze-stale"' not in as_viewer
    assert 'id="request-analyze-stale"' not in acid_stale


def test_the_table_page_offers_the_recompute_except_for_views_and_transactional_tables(
    metastore: Metastore, people: dict
) -> None:
    """The table page's link is there for a partitioned and an unpartitioned table, not for a view, a transactional
    table, or a viewer."""
    # given
    steward, viewer = signed_in(people["steward"]), signed_in(people["viewer"])

    def page(client: Client, database: str, table: str) -> str:
        return html(client.get(reverse("catalog:table", args=[metastore.name, database, table])))

    # when / then
    assert 'id="request-analyze-stale"' in page(steward, "sales", "orders")
    assert 'id="request-analyze-stale"' in page(steward, "sales", "customers")
    assert 'id="request-analyze-stale"' not in page(steward, "marketing", "campaign_performance")
    assert 'id="request-analyze-stale"' not in page(steward, "sales", "payments_acid")
    assert 'id="request-analyze-stale"' not in page(viewer, "sales", "orders")


def test_the_guided_recompute_is_the_only_stale_analyze_and_previews(metastore: Metastore, people: dict) -> None:
    """The link opens the guided request with ``ANALYZE … COMPUTE STATISTICS WITH ('only_stale'='true')``, which
    parses and previews (its columns sibling too); a transactional table's picker offers neither."""
    # given
    steward = signed_in(people["steward"])
    url = reverse("operations:new")

    # when
    guided = html(
        steward.get(url, {"metastore": metastore.name, "table": "sales.orders", "operation": "analyze_stale"})
    )
    columns = html(
        steward.get(url, {"metastore": metastore.name, "table": "sales.orders", "operation": "analyze_columns_stale"})
    )
    acid = html(steward.get(url, {"metastore": metastore.name, "table": "ops.job_runs_acid"}))

    # then
    assert _statement(guided) == STALE
    assert _statement(columns) == STALE.replace("STATISTICS", "STATISTICS FOR COLUMNS")
    for statement in (_statement(guided), _statement(columns)):
        preview = live_preview(steward, metastore, statement)
        assert 'id="parse-error"' not in preview and 'id="preview"' in preview, preview
    assert 'data-operation="analyze_stale"' not in acid and 'data-operation="analyze_columns_stale"' not in acid

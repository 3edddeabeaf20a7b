"""
``TableDetail.traits``: what a table's page offers depends on (partition keys, ``transactional``, a view), from
what the page read already, no query of its own, on every metastore; and ``transactional`` read as Hive reads it
wherever the console shows it.
"""

from __future__ import annotations

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import TableParam
from catalog_admin.selectors.databases import get_database
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.tables import TableFilter, TableTraits, get_table_detail, list_tables
from tests.fixtures.factories import table_row


@pytest.mark.parametrize(
    ("database", "table", "expected"),
    [
        ("sales", "orders", TableTraits(partitioned=True)),
        ("sales", "customers", TableTraits()),
        ("sales", "payments_acid", TableTraits(transactional=True)),
        ("marketing", "campaign_performance", TableTraits(view=True)),
    ],
    ids=["partitioned", "plain", "transactional", "view"],
)
def test_each_tables_traits_come_with_its_detail(
    metastore: Metastore, database: str, table: str, expected: TableTraits
) -> None:
    # given
    detail = get_table_detail(metastore, database, table)

    # when
    with CaptureQueriesContext(connections[metastore.alias]) as queries:
        traits = detail.traits

    # then
    assert traits == expected
    assert len(queries) == 0


def test_the_upper_case_property_makes_a_table_transactional_as_hive_reads_it(metastore: Metastore) -> None:
    """``AcidUtils.isTablePropertyTransactional`` also reads ``TRANSACTIONAL``."""
    # given
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(table_id=customers.id, key="TRANSACTIONAL", value="TRUE")

    # when
    traits = get_table_detail(metastore, "sales", "customers").traits

    # then
    assert traits == TableTraits(transactional=True)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"TRANSACTIONAL": "TRUE"}, True),
        ({"transactional": "false", "TRANSACTIONAL": "true"}, False),
        ({"transactional": "True"}, True),
    ],
    ids=["upper-only", "lower-wins", "any-case"],
)
def test_the_lists_filters_page_and_traits_read_transactional_as_hive_does(
    metastore: Metastore, params: dict[str, str], expected: bool
) -> None:
    """``AcidUtils.isTablePropertyTransactional``: ``transactional`` in any case of its value; ``TRANSACTIONAL`` only
    when the table has no ``transactional`` key. The tables list's flag and filter, the table page and the traits
    agree."""
    # given
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        for key, value in params.items():
            TableParam.objects.using(metastore.alias).create(table_id=customers.id, key=key, value=value)
    database = get_database(metastore, "sales")

    # when
    listed = {row.name: row for row in list_tables(metastore, database, TableFilter()).items}
    filtered = {row.name for row in list_tables(metastore, database, TableFilter(transactional=True)).items}
    detail = get_table_detail(metastore, "sales", "customers")

    # then
    assert listed["customers"].is_transactional is expected
    assert ("customers" in filtered) is expected
    assert detail.is_transactional is expected
    assert detail.traits.transactional is expected
    assert "payments_acid" in filtered and "orders" not in filtered

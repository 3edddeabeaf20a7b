"""
What a page remembers between views (catalog_admin/selectors/table_aggregates.py, partition_pages.py): the sum of a
table's partition rows and its natural order, kept under the partition stamp, so that a second view does not pass
over every partition again, and adding or dropping a partition is seen at the next view. These tests turn on the
in-memory cache the suite otherwise leaves off, and count the stamp on every view (CATALOG_PARTITION_STAMP_SECONDS=0)
except where they test how long it is remembered.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.db import connections
from django.test.utils import CaptureQueriesContext

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Database, Partition, Table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.pagination import keyset_page
from catalog_admin.selectors.partition_order import natural_order, sort_key_names
from catalog_admin.selectors.partitions import PartitionFilter, list_partitions, table_partition_keys
from catalog_admin.selectors.tables import get_table_detail
from tests.catalog_admin.selectors.test_partition_order import NEW_HOURS, add_partitions, hourly_table

pytestmark = [
    pytest.mark.django_db(databases="__all__"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True),
]


@pytest.fixture(autouse=True)
def memory_cache(settings: Any) -> None:
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "t"}}
    settings.CATALOG_PARTITION_STAMP_SECONDS = 0
    cache.clear()


def fresh(metastore: Metastore, table: Table) -> Table:
    """The table as a new page reads it (its stamp is read once per table object)."""
    return Table.objects.using(metastore.alias).select_related("sd").get(id=table.id)


def stamp_queries(metastore: Metastore, action: Any) -> list[str]:
    """The stamp's count of the table's partition ids and their highest id, among the queries ``action`` sends."""
    with CaptureQueriesContext(connections[metastore.alias]) as queries:
        action()
    stamp = ("COUNT(", "MAX(", '"PARTITIONS"')
    return [q["sql"] for q in queries.captured_queries if all(part in q["sql"] for part in stamp)]


class Clock:
    """The cache's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


def test_the_stamp_is_counted_once_per_interval_and_a_new_partition_shows_after_it(
    metastore: Metastore, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: the stamp remembered for 2 s, on a clock the test moves
    settings.CATALOG_PARTITION_STAMP_SECONDS = 2
    clock = Clock()
    for module in ("base", "locmem"):  # where an entry's expiry is set, and where it is checked
        monkeypatch.setattr(f"django.core.cache.backends.{module}.time", clock)
    table = hourly_table(metastore)
    database = Database.objects.using(metastore.alias).values_list("name", flat=True).get(id=table.database_id)
    first = get_table_detail(metastore, database, table.name)

    # when: a second view at once, a partition added, a view 1 s later and one 3 s later
    second = stamp_queries(metastore, lambda: get_table_detail(metastore, database, table.name))
    add_partitions(metastore, table, "2031-01-01", ("1",))
    clock.now += 1
    within = get_table_detail(metastore, database, table.name)
    clock.now += 2
    counted: list[Any] = []
    after = stamp_queries(metastore, lambda: counted.append(get_table_detail(metastore, database, table.name)))

    # then: counted once per interval; the new partition shows once the interval has passed
    assert second == []
    assert within.partition_count == first.partition_count
    assert len(after) == 1
    assert counted[0].partition_count == first.partition_count + 1


def test_with_no_interval_the_stamp_is_counted_on_every_view(metastore: Metastore) -> None:
    table = hourly_table(metastore)
    database = Database.objects.using(metastore.alias).values_list("name", flat=True).get(id=table.database_id)
    get_table_detail(metastore, database, table.name)

    again = stamp_queries(metastore, lambda: get_table_detail(metastore, database, table.name))

    assert len(again) == 1


def aggregate_queries(metastore: Metastore, action: Any) -> list[str]:
    with CaptureQueriesContext(connections[metastore.alias]) as queries:
        action()
    # the row total's SUM, and a sort by the natural order's key expressions (LPAD of the integral keys)
    return [q["sql"] for q in queries.captured_queries if "SUM(" in q["sql"] or "LPAD(" in q["sql"]]


def test_the_row_total_is_summed_once_and_again_when_a_partition_is_added(metastore: Metastore) -> None:
    # given
    table = hourly_table(metastore)
    database = Database.objects.using(metastore.alias).values_list("name", flat=True).get(id=table.database_id)
    first = get_table_detail(metastore, database, table.name).partition_rows

    # when: a second view, then a partition added (with 7 rows) and a third view
    sums = aggregate_queries(metastore, lambda: get_table_detail(metastore, database, table.name))
    add_partitions(metastore, table, "2031-01-01", ("1",))
    added = Partition.objects.using(metastore.alias).filter(table_id=table.id).order_by("-id").first()
    with allow_metastore_writes(), connections[metastore.alias].cursor() as cursor:
        cursor.execute(
            'INSERT INTO "PARTITION_PARAMS" ("PART_ID", "PARAM_KEY", "PARAM_VALUE") VALUES (%s, %s, %s)',
            [added.id, "numRows", "7"],
        )
    third = get_table_detail(metastore, database, table.name).partition_rows

    # then
    assert first is not None and third is not None
    assert [q for q in sums if "SUM(" in q] == []  # remembered
    assert third.value.rows == first.value.rows + 7
    assert third.value.partitions == first.value.partitions + 1


def test_remembered_pages_are_the_keyset_pages_and_a_new_partition_takes_its_place(metastore: Metastore) -> None:
    # given
    table = hourly_table(metastore)
    add_partitions(metastore, table, "2024-01-02", NEW_HOURS)
    keys = table_partition_keys(metastore, table)

    # when: every page of 4, twice (the second time from the remembered order), then with one more partition
    first = _all_names(metastore, table, size=4)
    expected_first = _keyset_names(metastore, table, keys)
    again = aggregate_queries(metastore, lambda: _all_names(metastore, table, size=4))
    add_partitions(metastore, table, "2024-01-02", ("11",))
    after = _all_names(metastore, table, size=4)

    # then
    assert first == expected_first
    assert [
        q for q in again if "ORDER BY" in q and "LPAD(" in q.split("ORDER BY")[-1]
    ] == []  # no sort over the partitions on a remembered view
    assert after == _keyset_names(metastore, table, keys)
    assert after.index("dt=2024-01-02/hour=11") == after.index("dt=2024-01-02/hour=10") + 1


def test_a_cursor_whose_partition_was_dropped_still_pages_on(metastore: Metastore) -> None:
    # given: the first page read, then the partition its cursor names dropped
    table = hourly_table(metastore)
    keys = table_partition_keys(metastore, table)
    page = list_partitions(metastore, fresh(metastore, table), keys, PartitionFilter(), size=3)
    last = page.items[-1]
    with allow_metastore_writes(), connections[metastore.alias].cursor() as cursor:
        for child in ("PARTITION_KEY_VALS", "PARTITION_PARAMS", "PART_COL_STATS", "PART_PRIVS", "PART_COL_PRIVS"):
            cursor.execute(f'DELETE FROM "{child}" WHERE "PART_ID" = %s', [last.id])
        cursor.execute('DELETE FROM "PARTITIONS" WHERE "PART_ID" = %s', [last.id])

    # when
    following = list_partitions(metastore, fresh(metastore, table), keys, PartitionFilter(), cursor=page.next_cursor)

    # then: the partitions after it, as the keyset order has them
    expected = _keyset_names(metastore, table, keys)
    start = expected.index(page.items[1].name) + 1
    assert [row.name for row in following.items] == expected[start : start + len(following.items)]
    assert following.items


def _all_names(metastore: Metastore, table: Table, size: int) -> list[str]:
    keys = table_partition_keys(metastore, table)
    names, cursor = [], ""
    while True:
        page = list_partitions(metastore, fresh(metastore, table), keys, PartitionFilter(), cursor=cursor, size=size)
        names += [row.name for row in page.items]
        if not page.has_next:
            return names
        cursor = page.next_cursor


def _keyset_names(metastore: Metastore, table: Table, keys: list[Any]) -> list[str]:
    qs = natural_order(Partition.objects.using(metastore.alias).filter(table_id=table.id), keys)
    order = sort_key_names(keys)
    page = keyset_page(qs, keys=order, types=(str,) * len(order), cursor="", size=100_000, fields=("name",))
    return [row["name"] for row in page.items]

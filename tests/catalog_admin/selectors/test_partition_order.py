"""
Partitions in their natural order (integral keys numerically, per PARTITION_KEYS), keyset pages that stay correct in
that order, the anomaly filters and counts, and a partitioned table's rows as the sum of its partitions' numRows.
Partitions are added to a seeded table inside the test's rolled-back transaction (PostgreSQL: the quick tier's).
"""

from __future__ import annotations

import pytest
from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.hive.partition_names import partition_name
from catalog_admin.models import Partition, PartitionParam, Table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.partition_anomalies import anomaly_counts, partition_row_total
from catalog_admin.selectors.partition_order import natural_order, sort_key_names
from catalog_admin.selectors.partitions import PartitionFilter, list_partitions, table_partition_keys

pytestmark = [
    pytest.mark.django_db(databases="__all__"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True),
]

NEW_HOURS = ("2", "10", "23", "-1", "__HIVE_DEFAULT_PARTITION__")


def hourly_table(metastore: Metastore) -> Table:
    """The seeded table with the most partitions keyed (dt string, hour int)."""
    for table in Table.objects.using(metastore.alias).select_related("sd").order_by("id"):
        keys = [(k.name, k.type) for k in table_partition_keys(metastore, table)]
        if keys == [("dt", "string"), ("hour", "int")]:
            return table
    raise AssertionError("the seed has no (dt, hour int) table")


def add_partitions(metastore: Metastore, table: Table, day: str, hours: tuple[str, ...]) -> None:
    """Partitions ``dt=day/hour=h`` sharing an existing partition's storage descriptor (PostgreSQL SQL)."""
    template = Partition.objects.using(metastore.alias).filter(table_id=table.id).order_by("id").first()
    next_id = Partition.objects.using(metastore.alias).order_by("-id").values_list("id", flat=True).first() + 1
    with allow_metastore_writes(), connections[metastore.alias].cursor() as cursor:
        for offset, hour in enumerate(hours):
            part = next_id + offset
            name = partition_name([("dt", day), ("hour", hour)])
            cursor.execute(
                'INSERT INTO "PARTITIONS" ("PART_ID", "CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID",'
                ' "TBL_ID") VALUES (%s, 0, 0, %s, %s, %s)',
                [part, name, template.sd_id, table.id],
            )
            for position, value in enumerate((day, hour)):
                cursor.execute(
                    'INSERT INTO "PARTITION_KEY_VALS" ("PART_ID", "PART_KEY_VAL", "INTEGER_IDX") VALUES (%s, %s, %s)',
                    [part, value, position],
                )


def names_in_order(metastore: Metastore, table: Table, size: int, filters: PartitionFilter | None = None) -> list[str]:
    """Every partition name, page by page."""
    keys = table_partition_keys(metastore, table)
    names, cursor = [], ""
    while True:
        page = list_partitions(metastore, table, keys, filters or PartitionFilter(), cursor=cursor, size=size)
        names += [row.name for row in page.items]
        if not page.has_next:
            return names
        cursor = page.next_cursor


def test_integral_keys_sort_numerically_with_negatives_first_and_other_values_last(metastore: Metastore) -> None:
    # given
    table = hourly_table(metastore)
    add_partitions(metastore, table, "2024-01-01", NEW_HOURS)

    # when
    names = names_in_order(metastore, table, size=500)

    # then
    day = [n.split("/hour=")[1] for n in names if n.startswith("dt=2024-01-01/")]
    assert day == ["-1", "0", "2", "3", "6", "9", "10", "23", "__HIVE_DEFAULT_PARTITION__"]
    assert names.index("dt=2024-01-01/hour=23") < names.index("dt=2024-01-02/hour=0")  # dt first, then hour


def test_keyset_pages_of_any_size_give_the_same_natural_order(metastore: Metastore) -> None:
    # given
    table = hourly_table(metastore)
    add_partitions(metastore, table, "2024-01-02", NEW_HOURS)
    everything = names_in_order(metastore, table, size=500)

    # when / then
    for size in (1, 2, 3, 7):
        assert names_in_order(metastore, table, size=size) == everything
    assert len(set(everything)) == len(everything)


def test_a_table_whose_keys_are_all_text_keeps_the_name_index_order(metastore: Metastore) -> None:
    class Key:
        def __init__(self, name: str, type_: str, position: int) -> None:
            self.name, self.type, self.position = name, type_, position

    assert sort_key_names([Key("dt", "string", 0), Key("country", "varchar(2)", 1)]) == ("name",)
    assert sort_key_names([Key("dt", "string", 0), Key("hour", "int", 1)]) == ("sort_0", "sort_1", "name")


def test_the_natural_order_plan_reads_partitions_and_key_values_through_their_indexes(metastore: Metastore) -> None:
    """With sequential scans made expensive, the page query is served by Hive's own indexes (no schema change)."""
    table = hourly_table(metastore)
    keys = table_partition_keys(metastore, table)
    qs = natural_order(Partition.objects.using(metastore.alias).filter(table_id=table.id), keys)
    sql, params = qs.order_by(*sort_key_names(keys)).values("id")[:51].query.sql_with_params()

    with connections[metastore.alias].cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "Seq Scan" not in plan, plan
    assert "PARTITIONS" in plan and "PARTITION_KEY_VALS" in plan


def test_anomaly_filters_return_exactly_the_flagged_partitions_and_the_counts_agree(metastore: Metastore) -> None:
    # given
    table = hourly_table(metastore)
    keys = table_partition_keys(metastore, table)
    every = list_partitions(metastore, table, keys, PartitionFilter(), size=500).items

    # when
    outside = names_in_order(metastore, table, 2, PartitionFilter(anomaly="outside"))
    missing = names_in_order(metastore, table, 1, PartitionFilter(anomaly="missing"))
    stale = names_in_order(metastore, table, 2, PartitionFilter(anomaly="stale"))
    counts = anomaly_counts(metastore, table)

    # then
    assert outside == [r.name for r in every if r.outside_table_root]
    assert missing == [r.name for r in every if r.exists_on_disk is False]
    assert stale == [r.name for r in every if r.freshness == "stale"]
    assert (counts.outside, counts.missing, counts.stale) == (len(outside), len(missing), len(stale))
    assert missing, "the seed has a partition missing on disk"


def test_a_partitioned_table_has_the_sum_of_its_partitions_rows_and_says_which_lack_them(
    metastore: Metastore,
) -> None:
    # given
    table = hourly_table(metastore)
    rows = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table.id, key="numRows")
    expected = sum(int(v) for v in rows.values_list("value", flat=True))
    partitions = Partition.objects.using(metastore.alias).filter(table_id=table.id).count()

    # when
    before = partition_row_total(metastore, table)
    add_partitions(metastore, table, "2024-01-03", ("11",))  # no statistics
    after = partition_row_total(metastore, table)

    # then
    assert (before.rows, before.counted, before.partitions, before.complete) == (expected, partitions, partitions, True)
    assert (after.rows, after.missing, after.complete) == (expected, 1, False)


def test_an_unknown_anomaly_is_refused_naming_the_choices(metastore: Metastore) -> None:
    from catalog_admin.errors import ApplicationError

    table = hourly_table(metastore)
    with pytest.raises(ApplicationError) as raised:
        PartitionFilter.from_params({"anomaly": "odd"}, table_partition_keys(metastore, table))

    assert raised.value.message == "anomaly must be one of outside, missing, stale, not 'odd'."


def test_above_the_limit_pages_follow_the_name_index(metastore: Metastore, monkeypatch) -> None:
    """A table with more partitions than NATURAL_ORDER_LIMIT is paged by PART_NAME, and the page says so."""
    from django.test import Client
    from django.urls import reverse

    from catalog_admin.selectors import partition_order
    from tests.fixtures.factories import html, make_user

    # given
    table = hourly_table(metastore)
    add_partitions(metastore, table, "2024-01-01", ("2", "10"))
    monkeypatch.setattr(partition_order, "NATURAL_ORDER_LIMIT", 5)
    client = Client()
    client.force_login(make_user("order-viewer", "viewer"))

    # when
    names = names_in_order(metastore, table, size=3)
    database = Table.objects.using(metastore.alias).filter(id=table.id).values_list("database__name", flat=True)[0]
    page = html(client.get(reverse("catalog:partitions", args=[metastore.name, database, table.name])))

    # then
    assert names == sorted(names)  # PART_NAME order: hour=10 before hour=2
    assert names.index("dt=2024-01-01/hour=10") < names.index("dt=2024-01-01/hour=2")
    assert "sorted by partition name" in page

"""
``seed_metastore --big-table-partitions P --col-stats C``: the benchmark table, written set-based on PostgreSQL and
row by row elsewhere, must come out the same, as Hive would have written it: partitions with their basic statistics
and accuracy flag, C statistics rows each, and ids that SEQUENCE_TABLE stays ahead of.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from django.core.management import call_command

from catalog_admin.models import Partition, PartitionColumnStatistics, PartitionParam, Table
from catalog_admin.selectors.metastores import Metastore
from tests.fixtures.operations import sequences_behind

pytestmark = pytest.mark.parametrize(
    "metastore_alias", ["hive23_pg", "hive40_pg", "hive31_my", "hive_sqlite"], indirect=True
)

PARTITIONS, STATS = 30, 3


def test_the_benchmark_table_is_written_as_hive_writes_partitions(metastore: Metastore) -> None:
    """Same rows on both write paths: names, basic statistics, the accuracy flag naming the analysed columns."""
    # when
    call_command(
        "seed_metastore", metastore=metastore.name, big_table_partitions=PARTITIONS, col_stats=STATS, verbosity=0
    )

    # then
    table = Table.objects.using(metastore.alias).get(database__name="bench", name="events")
    partitions = dict(Partition.objects.using(metastore.alias).filter(table=table).values_list("id", "name"))
    assert len(partitions) == PARTITIONS
    params: dict[int, dict[str, str]] = defaultdict(dict)
    for part, key, value in (
        PartitionParam.objects.using(metastore.alias)
        .filter(partition_id__in=partitions)
        .values_list("partition_id", "key", "value")
    ):
        params[part][key] = value
    analysed = {"event_id", "event_type", "user_id"}  # the first three columns, by name
    assert {p["COLUMN_STATS_ACCURATE"] for p in params.values()} == {
        '{"BASIC_STATS":"true","COLUMN_STATS":{"event_id":"true","event_type":"true","user_id":"true"}}'
    }
    assert {key for p in params.values() for key in p} == {
        "COLUMN_STATS_ACCURATE",
        "numFiles",
        "numRows",
        "totalSize",
        "transient_lastDdlTime",
    }
    assert sorted(int(p["numRows"]) for p in params.values()) == [1000 + i for i in range(PARTITIONS)]
    assert all(int(p["totalSize"]) == int(p["numRows"]) * 64 for p in params.values())
    statistics = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition_id__in=partitions)
    per_partition = defaultdict(set)
    for part, column in statistics.values_list("partition_id", "column_name"):
        per_partition[part].add(column)
    assert per_partition == {part: analysed for part in partitions}
    assert sequences_behind(metastore) == {}

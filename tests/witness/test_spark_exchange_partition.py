"""
Issue 27's proof for EXCHANGE PARTITION: the console moves partitions and their directory as Hive 2.3's own Driver.

Two identical source tables (``spark_twins``: ``diff_hive.<t>`` and ``diff_console.<t>``) and, beside each, an empty
destination created by Hive's Driver with the same columns and keys; the same EXCHANGE runs through Hive's Driver on
one pair and through the console on the other. Both tables' normalized rows and folders are compared.

Differences by design: Hive copies each partition into the destination and drops it from the source, deleting its
column statistics; the console re-parents the rows and keeps the statistics, re-labelled with the destination's
names (as it keeps them on RENAME). Hive's client stamps ``last_modified_*`` on nothing here; ids and times aside.
"""

from __future__ import annotations

from typing import Any

import pytest

from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.spark import TableCopy
from tests.witness.differential import ABSENT, differences, metastore_image, orphans, read_rows, tree_image

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DEST = (
    "CREATE TABLE {table} (id int, name string, amount double) PARTITIONED BY (dt string, hour int) STORED AS PARQUET"
)
EXCHANGE = "ALTER TABLE {dest} EXCHANGE PARTITION (dt='2024-01-01') WITH TABLE {source}"
MOVED = ("dt=2024-01-01/hour=1", "dt=2024-01-01/hour=2")


def _images(copy: TableCopy, dest: TableCopy) -> dict[str, Any]:
    return {"source": metastore_image(copy), "dest": metastore_image(dest), "trees": tree_image(copy),
            "dest_trees": tree_image(dest)}  # fmt: skip


def test_exchange_partition_moves_what_hives_driver_moves(spark, hive_ql, spark_metastore, spark_twins) -> None:
    """The partitions of dt='2024-01-01' and their directory go to the destination, on both sides alike; only the
    moved partitions' statistics differ (Hive deletes them, the console keeps them under the destination's name);
    Spark reads the same rows from both destinations."""
    # given
    twins = spark_twins("xch")
    hive_dest, console_dest = (twins.hive.renamed("xch_dest"), twins.console.renamed("xch_dest"))
    for dest in (hive_dest, console_dest):
        hive_ql(DEST.format(table=dest.qualified))
    orphans_before = orphans()
    before = metastore_image(twins.console)

    # when
    hive_ql.using(twins.hive.database)(EXCHANGE.format(dest=hive_dest.qualified, source=twins.hive.qualified))
    preview = alter_preview_statement(
        metastore=spark_metastore,
        statement=EXCHANGE.format(dest=console_dest.qualified, source=twins.console.qualified),
    )
    assert not preview.blockers, preview.blockers
    execution = alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI, reason="witness")

    # then
    hive, console = _images(twins.hive, hive_dest), _images(twins.console, console_dest)
    kept = {
        ("dest", "partitions", name, "column_statistics", column): (
            ABSENT,
            {**before["partitions"][name]["column_statistics"][column], "table_name": "xch_dest"},
        )
        for name in MOVED
        for column in ("amount", "id", "name")
    }
    assert differences(hive, console) == kept
    assert set(console["dest"]["partitions"]) == set(MOVED)
    assert orphans() == orphans_before
    assert read_rows(spark, console_dest) == read_rows(spark, hive_dest) != []

    # and the revert exchanges them back
    alter_execute(preview=revert_preview(execution=execution), actor="spark-witness", source=Execution.Source.CLI)
    assert metastore_image(twins.console) == before
    assert metastore_image(console_dest)["partitions"] == {}

"""ALTER TABLE … EXCHANGE PARTITION on the suite's metastores: Hive's rules as blockers, the partitions and their data
directory moved to the destination in one transaction with Hive's events, and the revert that exchanges them back."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.models import NotificationEvent, Partition
from catalog_admin.selectors.metastores import Metastore
from operations.lifecycle import databases_touched
from operations.models import ChangeRequest
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import execute, metastore_dump

pytestmark = pytest.mark.django_db

EXCHANGE = "ALTER TABLE sales.orders_archive EXCHANGE PARTITION (dt='2024-01-02') WITH TABLE sales.orders"


@pytest.fixture
def archive(metastore: Metastore, warehouse: Path) -> None:
    """``sales.orders_archive``: created LIKE ``sales.orders`` (same columns and keys, no partitions)."""
    execute(
        alter_preview_statement(metastore=metastore, statement="CREATE TABLE sales.orders_archive LIKE sales.orders")
    )


def _dump(metastore: Metastore) -> dict:
    return {t: rows for t, rows in metastore_dump(metastore.alias, events=False).items() if t != "SEQUENCE_TABLE"}


def test_exchange_moves_the_partitions_and_their_directory(metastore: Metastore, archive: None) -> None:
    """Every source partition matching the partial spec goes to the destination, pointed at ``<dest root>/<name>``;
    the spec's directory is renamed; one ADD_PARTITION and a DROP_PARTITION per partition."""
    # given
    orders, archive_table = table_row(metastore, "sales", "orders"), table_row(metastore, "sales", "orders_archive")
    moving = {n: loc for n, loc in partition_locations(metastore, orders.id).items() if n.startswith("dt=2024-01-02/")}
    assert moving
    source_dir = Path(f"{orders.sd.location.removeprefix('file:')}/dt=2024-01-02")
    files = sorted(p.relative_to(source_dir) for p in source_dir.rglob("*"))
    events_before = NotificationEvent.objects.using(metastore.alias).count()

    # when
    preview = alter_preview_statement(metastore=metastore, statement=EXCHANGE)
    assert preview.blockers == ()
    execution = execute(preview)

    # then
    moved = partition_locations(metastore, archive_table.id)
    root = archive_table.sd.location
    assert moved == {name: f"{root}/{name}" for name in moving}
    assert not set(moving) & set(partition_locations(metastore, orders.id))
    assert not source_dir.exists()
    dest_dir = Path(f"{root.removeprefix('file:')}/dt=2024-01-02")
    assert sorted(p.relative_to(dest_dir) for p in dest_dir.rglob("*")) == files
    events = NotificationEvent.objects.using(metastore.alias).order_by("event_id")[events_before:]
    assert [(e.event_type, e.table_name) for e in events] == [("ADD_PARTITION", "orders_archive")] + [
        ("DROP_PARTITION", "orders")
    ] * len(moving)
    assert execution.actual_counts == execution.expected_counts


def test_revert_exchanges_them_back(metastore: Metastore, archive: None) -> None:
    # given
    rows_before = _dump(metastore)
    execution = execute(alter_preview_statement(metastore=metastore, statement=EXCHANGE))

    # when
    revert = execute(revert_preview(execution=execution))

    # then
    assert revert.actual_counts == revert.expected_counts
    assert _dump(metastore) == rows_before


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("ALTER TABLE sales.orders_archive EXCHANGE PARTITION (dt='1999-01-01') WITH TABLE sales.orders",
         "no_partition"),
        ("ALTER TABLE sales.customers EXCHANGE PARTITION (dt='2024-01-02') WITH TABLE sales.orders",
         "different_schemas"),
        ("ALTER TABLE sales.orders_archive EXCHANGE PARTITION (region='x') WITH TABLE sales.orders", "partition_spec"),
        ("ALTER TABLE sales.orders_archive EXCHANGE PARTITION (hour=1) WITH TABLE sales.orders", "partition_spec"),
        ("ALTER TABLE sales.orders_archive EXCHANGE PARTITION (dt='2024-01-02') WITH TABLE sales.nothing",
         "unknown_table"),
    ],
)  # fmt: skip
def test_hive_rules_block_the_exchange(metastore: Metastore, archive: None, statement: str, code: str) -> None:
    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert code in {b.code for b in preview.blockers}
    assert preview.steps == () and preview.moves == ()


def test_a_partition_the_destination_has_blocks(metastore: Metastore, archive: None) -> None:
    """Hive: "The partition … already exists in the table …"."""
    # given
    execute(
        alter_preview_statement(metastore=metastore, statement=EXCHANGE.replace("'2024-01-02'", "'2024-01-02', hour=0"))
    )
    assert Partition.objects.using(metastore.alias).filter(name="dt=2024-01-02/hour=0").exists()

    # when
    preview = alter_preview_statement(metastore=metastore, statement=EXCHANGE)

    # then
    assert "partition_exists" in {b.code for b in preview.blockers} or "destination_exists" in {
        b.code for b in preview.blockers
    }


def test_an_approver_must_cover_the_source_database_too() -> None:
    """The exchange changes both tables: the databases an approval's scope must cover are the destination's and
    the source's."""
    # given
    operation = {"kind": "exchange_partition", "target": {"database": "archive", "table": "orders"},
                 "source": {"database": "sales", "table": "orders"}, "partition": [["dt", "2024-01-02"]]}  # fmt: skip

    # when
    touched = databases_touched(ChangeRequest(database_name="archive", operation=operation, policy={}))

    # then
    assert set(touched) == {"archive", "sales"}

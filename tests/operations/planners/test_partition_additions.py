"""
``ALTER TABLE … ADD PARTITION`` and ``MSCK REPAIR TABLE`` on the seeded ``sales.orders`` (``dt``/``hour``): the rows
Hive writes for an added partition (a copy of the table's storage descriptor and SerDe, key values, parameters), ids
from SEQUENCE_TABLE, directories found on disk or created for managed partitions, Hive's refusals, the events, and the
revert, which drops what was added and removes only the directories it created while they are still empty.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from catalog_admin.models import NotificationEvent, Partition, PartitionKeyValue, PartitionParam, SerDe
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.planners.partitions.msck import plan_msck_repair
from operations.services.alter import alter_preview, alter_preview_statement
from operations.services.revert import revert_preview
from operations.specs import AddPartitions, NewPartition, RepairPartitions, TableRef
from operations.table_state import read_table_state
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, location_of, path_of, row_changes, sequences_behind

ORDERS = TableRef("sales", "orders")
MISSING = "dt=2024-01-03/hour=9"  # seeded without a directory


def names(metastore: Metastore) -> set[str]:
    table = table_row(metastore, "sales", "orders")
    return set(Partition.objects.using(metastore.alias).filter(table_id=table.id).values_list("name", flat=True))


def write(root: Path, relative: str, size: int) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def orders_root(metastore: Metastore) -> Path:
    return path_of(table_row(metastore, "sales", "orders").sd.location)


def test_the_parser_reads_add_partition_and_msck() -> None:
    """Both statements parse into their specs (ADD PARTITION is no longer refused as unsupported)."""
    add = parse_alter("ALTER TABLE sales.orders ADD IF NOT EXISTS PARTITION (dt='d', hour=1) LOCATION '/x' "
                      "PARTITION (dt='e', hour=2)")  # fmt: skip
    assert add == AddPartitions(
        target=ORDERS,
        additions=(NewPartition((("dt", "d"), ("hour", "1")), "/x"), NewPartition((("dt", "e"), ("hour", "2")))),
        if_not_exists=True,
    )
    assert parse_alter("MSCK REPAIR TABLE sales.orders SYNC PARTITIONS") == RepairPartitions(ORDERS, mode="sync")
    assert parse_alter("msck table sales.orders") == RepairPartitions(ORDERS, repair=False)


def test_msck_repair_adds_the_directories_found_on_disk_and_its_revert_drops_them(
    metastore: Metastore, warehouse: Path
) -> None:
    """Two new directories become partitions with the table's storage descriptor, key values, quick statistics and
    one ADD_PARTITION event; the revert drops them again and leaves their files."""
    # given
    root = orders_root(metastore)
    write(root, "dt=2024-02-01/hour=10/part-0", 10)
    write(root, "dt=2024-02-01/hour=2/part-0", 5)
    write(root, "dt=2024-02-01/hour=2/_SUCCESS", 0)
    before = names(metastore)
    events = NotificationEvent.objects.using(metastore.alias).count()

    # when
    preview = alter_preview_statement(metastore=metastore, statement="MSCK REPAIR TABLE sales.orders")
    execution = execute(preview)

    # then
    assert preview.blockers == ()
    assert row_changes(preview)["PARTITIONS"] == (2, 0, 0)
    assert row_changes(preview)["PARTITION_KEY_VALS"] == (4, 0, 0)
    assert preview.affected is not None and preview.affected.bytes == 15
    assert [p.name for p in preview.affected.listed] == ["dt=2024-02-01/hour=2", "dt=2024-02-01/hour=10"]
    added = {"dt=2024-02-01/hour=2", "dt=2024-02-01/hour=10"}
    assert names(metastore) == before | added
    rows = Partition.objects.using(metastore.alias).filter(name="dt=2024-02-01/hour=2", table__name="orders")
    part = rows.values("id", "sd__location", "sd__input_format", "sd__cd_id", "sd__serde_id", "sd__serde__slib").get()
    table = table_row(metastore, "sales", "orders")
    assert part["sd__location"] == f"{location_of(root)}/dt=2024-02-01/hour=2"
    assert (part["sd__input_format"], part["sd__cd_id"]) == (table.sd.input_format, table.sd.cd_id)
    assert part["sd__serde__slib"] == table.sd.serde.slib and part["sd__serde_id"] != table.sd.serde_id
    params = dict(
        PartitionParam.objects.using(metastore.alias).filter(partition_id=part["id"]).values_list("key", "value")
    )
    assert (params["numFiles"], params["totalSize"]) == ("1", "5")
    assert int(params["transient_lastDdlTime"]) > 1_700_000_000
    values = PartitionKeyValue.objects.using(metastore.alias).filter(partition_id=part["id"]).order_by("position")
    assert list(values.values_list("value", flat=True)) == ["2024-02-01", "2"]
    assert sequences_behind(metastore) == {}
    new_events = NotificationEvent.objects.using(metastore.alias).order_by("-event_id")
    assert NotificationEvent.objects.using(metastore.alias).count() == events + 1
    assert new_events.first().event_type == "ADD_PARTITION"

    # and when reverted
    revert = revert_preview(execution=execution)
    execute(revert)

    # then
    assert names(metastore) == before
    assert not SerDe.objects.using(metastore.alias).filter(id=part["sd__serde_id"]).exists()
    assert (root / "dt=2024-02-01/hour=2/part-0").is_file()
    assert new_events.first().event_type == "DROP_PARTITION"


def test_msck_refuses_invalid_directories_unless_validation_skips_them(metastore: Metastore, warehouse: Path) -> None:
    """hive.msck.path.validation: ``throw`` refuses the repair naming the path; ``skip`` leaves it out."""
    # given
    root = orders_root(metastore)
    write(root, "dt=2024-02-01/hour=1/part-0", 3)
    write(root, "dt=2024-02-01/oops/part-0", 3)
    write(root, "stray.txt", 3)
    state = read_table_state(metastore, ORDERS)

    # when
    throw = plan_msck_repair(metastore, state, RepairPartitions(ORDERS))
    skipping = replace(metastore, config=replace(metastore.config, msck_path_validation="skip"))
    skip = plan_msck_repair(skipping, state, RepairPartitions(ORDERS))

    # then
    assert sorted(f.message for f in throw.blockers) == [
        f"Invalid partition name {location_of(root)}/dt=2024-02-01/oops",
        f"MSCK finds a file rather than a directory when it searches for {location_of(root)}/stray.txt",
    ]
    assert throw.steps == ()
    assert skip.blockers == ()
    assert [w.code for w in skip.warnings if w.code.startswith("msck")] == ["msck_paths_skipped"]
    assert skip.inverse["added_names"] == ["dt=2024-02-01/hour=1"]


def test_msck_sync_drops_partitions_whose_directory_is_missing_without_moving_data(
    metastore: Metastore, warehouse: Path
) -> None:
    """SYNC drops the partition seeded without a directory (no data to trash: no move) and adds nothing else."""
    # given
    before = names(metastore)

    # when
    preview = alter_preview_statement(metastore=metastore, statement="MSCK REPAIR TABLE sales.orders SYNC PARTITIONS")
    if not metastore.schema.capabilities.msck_drops_partitions:  # Hive 2.3: MSCK only adds
        assert [f.code for f in preview.blockers] == ["msck_mode_unsupported"]
        return
    execute(preview)

    # then
    assert preview.moves == ()
    assert preview.inverse["dropped_partitions"] == [MISSING]
    assert row_changes(preview)["PARTITIONS"] == (0, 0, 1)
    assert names(metastore) == before - {MISSING}


def test_add_partition_creates_the_managed_directory_and_the_revert_removes_it_while_empty(
    metastore: Metastore, warehouse: Path
) -> None:
    """A managed partition without LOCATION gets ``<table>/<name>``, created empty; the revert removes it."""
    # given
    root = orders_root(metastore)
    statement = "ALTER TABLE sales.orders ADD PARTITION (dt='2024-03-01', hour=4)"

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    execution = execute(preview)

    # then
    assert preview.directories_created == (f"{location_of(root)}/dt=2024-03-01/hour=4",)
    assert (root / "dt=2024-03-01/hour=4").is_dir()
    assert "dt=2024-03-01/hour=4" in names(metastore)
    execute(revert_preview(execution=execution))
    assert "dt=2024-03-01/hour=4" not in names(metastore)
    assert not (root / "dt=2024-03-01/hour=4").exists()


@pytest.mark.parametrize(
    ("clause", "code"),
    [
        pytest.param("PARTITION (dt='2024-01-02', hour=3)", "partition_exists", id="exists"),
        pytest.param("PARTITION (dt='2024-05-01', hour='x')", "partition_value_type", id="typed"),
        pytest.param("PARTITION (dt='2024-05-01')", "partition_spec", id="incomplete"),
        pytest.param("PARTITION (dt='d', hour=1) PARTITION (dt='d', hour=1)", "duplicate_partition", id="twice"),
        pytest.param("PARTITION (dt='d', hour=1) LOCATION 'file:/elsewhere/d'", "outside_roots", id="outside"),
        pytest.param("PARTITION (dt='d', hour=1) LOCATION 'file:/x/../y'", "unsafe_location", id="unsafe"),
    ],
)
def test_add_partition_refuses_what_hive_refuses(metastore: Metastore, clause: str, code: str) -> None:
    """Hive's rules as blockers, and nothing to run; a LOCATION outside the governed roots only where the metastore
    does not allow them (as SET LOCATION)."""
    governed = replace(metastore, config=replace(metastore.config, allow_outside_roots=False))
    preview = alter_preview_statement(metastore=governed, statement=f"ALTER TABLE sales.orders ADD {clause}")
    assert [f.code for f in preview.blockers] == [code]
    assert preview.steps == ()


def test_add_if_not_exists_skips_existing_partitions(metastore: Metastore) -> None:
    """``IF NOT EXISTS``: the existing partition is left out, the new one added."""
    spec = parse_alter(
        "ALTER TABLE sales.orders ADD IF NOT EXISTS PARTITION (dt='2024-01-02', hour=3) "
        "PARTITION (dt='2024-06-01', hour=1)"
    )
    preview = alter_preview(metastore=metastore, spec=spec)
    assert preview.blockers == ()
    assert preview.inverse["added_names"] == ["dt=2024-06-01/hour=1"]


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_msck_writes_one_add_partition_event_per_batch(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Msck.createPartitionsInBatches``: one ADD_PARTITION per batch (3,000 by default; 1 here), each carrying its
    partitions."""
    # given
    monkeypatch.setattr("operations.events.planning.MSCK_REPAIR_BATCH_SIZE", 1)
    root = orders_root(metastore)
    write(root, "dt=2024-02-01/hour=1/part-0", 3)
    write(root, "dt=2024-02-01/hour=2/part-0", 3)
    events = NotificationEvent.objects.using(metastore.alias)
    last = events.order_by("-event_id").values_list("event_id", flat=True).first() or 0

    # when
    preview = alter_preview_statement(metastore=metastore, statement="MSCK REPAIR TABLE sales.orders")
    execute(preview)

    # then
    assert preview.events is not None and dict(preview.events.counts) == {"ADD_PARTITION": 2}
    written = list(events.filter(event_id__gt=last).order_by("event_id").values_list("event_type", "message"))
    assert [kind for kind, _message in written] == ["ADD_PARTITION", "ADD_PARTITION"]
    carried = [json.loads(message)["partitions"] for _kind, message in written]
    assert carried == [[{"dt": "2024-02-01", "hour": "1"}], [{"dt": "2024-02-01", "hour": "2"}]]

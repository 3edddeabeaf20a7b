"""
``alter_execute``: exactly the preview or nothing, on every metastore.

A preview made stale by a change to the table is refused; bad input is refused with a message naming the
problem; a failure at any point of execution (fault injection) leaves the metastore rows and the warehouse
directories exactly as they were; a process that dies after moving a directory leaves a journal to reconcile.
"Nothing written" is shown by comparing every row of every metastore table and the whole warehouse tree.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import ColumnDescriptor, Partition, StorageDescriptor, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.preview import Preview, Step
from operations.services import alter
from operations.services.alter import alter_execute, alter_preview_statement
from operations.sql import MetastoreSql
from tests.fixtures.operations import (
    ProcessDied,
    crash_at,
    execute,
    metastore_dump,
    path_of,
    warehouse_tree,
)

RENAME = "ALTER TABLE sales.orders RENAME TO marketing.orders_v2"
OPERATIONS = [
    pytest.param(RENAME, id="rename-table"),
    pytest.param("ALTER TABLE sales.orders CHANGE status state string CASCADE", id="change-column-cascade"),
    pytest.param("ALTER TABLE sales.orders DROP PARTITION (hour >= 6)", id="drop-partitions"),
    pytest.param(
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-01', hour=3)",
        id="rename-partition",
    ),
]


def snapshot(metastore: Metastore, warehouse: Path) -> tuple[dict, dict]:
    """Every metastore row and the warehouse tree."""
    return metastore_dump(metastore.alias), warehouse_tree(warehouse)


def preview(metastore: Metastore, statement: str) -> Preview:
    return alter_preview_statement(metastore=metastore, statement=statement)


def orders_id(metastore: Metastore) -> int:
    from catalog_admin.models import Table

    return Table.objects.using(metastore.alias).values_list("id", flat=True).get(database__name="sales", name="orders")


# Stale previews -----------------------------------------------------------------------------------------------------


def test_a_changed_table_parameter_makes_the_preview_stale(metastore: Metastore, warehouse: Path) -> None:
    """A TABLE_PARAMS value changed after the preview: 'stale_preview', nothing written, nothing moved."""
    # given
    stale = preview(metastore, RENAME)
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).filter(table_id=orders_id(metastore), key="numRows").update(value="1")
    before = snapshot(metastore, warehouse)

    # when
    with pytest.raises(ApplicationError) as caught:
        alter_execute(preview=stale, actor="operator:test", source="cli")

    # then
    assert caught.value.code == ErrorCode.STALE_PREVIEW
    assert caught.value.message == (
        "`sales`.`orders` changed since the preview (params); preview it again before executing."
    )
    assert caught.value.details["changed"][0]["label"] == "params"  # the one stale_preview vocabulary
    assert snapshot(metastore, warehouse) == before
    execution = Execution.objects.get(pk=caught.value.details["execution"])
    assert (execution.state, execution.moves.count()) == (Execution.State.FAILED, 0)


def test_a_new_partition_makes_the_preview_stale(metastore: Metastore, warehouse: Path) -> None:
    """A partition row added after the preview: 'stale_preview', nothing written."""
    # given
    stale = preview(metastore, "ALTER TABLE sales.orders ADD COLUMNS (note string) CASCADE")
    add_partition_row(metastore, "dt=2024-01-04/hour=0")
    before = snapshot(metastore, warehouse)

    # when
    with pytest.raises(ApplicationError) as caught:
        alter_execute(preview=stale, actor="operator:test", source="cli")

    # then
    assert caught.value.code == ErrorCode.STALE_PREVIEW
    assert "changed since the preview (partitions or statistics)" in caught.value.message
    assert snapshot(metastore, warehouse) == before


def test_a_partition_changed_after_the_preview_is_not_overwritten(metastore: Metastore, warehouse: Path) -> None:
    """Partition-level changes escape the table's rows; the partitions in the plan's scope, re-read under the lock
    against the previewed digest, find them stale before anything runs, naming the partition."""
    # given
    location = "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) SET LOCATION 'file:/elsewhere'"
    rename = (
        "ALTER TABLE marketing.clicks PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-02', hour=3)"  # noqa: E501
    )
    stale_location, stale_rename = preview(metastore, location), preview(metastore, rename)
    with allow_metastore_writes():
        sd_id = stale_location.inverse["sd_id"]
        moved = f"{Path(metastore.config.warehouse)}/sales.db/orders/moved-by-hive"  # still under the table root
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=f"file:{moved}")
        Partition.objects.using(metastore.alias).filter(
            table__database__name="marketing", table__name="clicks", name="dt=2024-01-02/hour=3"
        ).update(name="dt=2024-01-02/hour=33")
    before = snapshot(metastore, warehouse)

    # when
    errors = []
    for stale in (stale_location, stale_rename):
        with pytest.raises(ApplicationError) as caught:
            alter_execute(preview=stale, actor="operator:test", source="cli")
        errors.append(caught.value)

    # then
    assert [error.code for error in errors] == [ErrorCode.STALE_PREVIEW] * 2
    assert [[c["label"] for c in error.details["changed"]] for error in errors] == [
        ["Location of partition dt=2024-01-02/hour=3"],
        ["Partition dt=2024-01-02/hour=3"],
    ]
    assert errors[0].details["changed"][0]["now"] == f"file:{moved}"
    assert snapshot(metastore, warehouse) == before


def add_partition_row(metastore: Metastore, name: str) -> None:
    """A PARTITIONS row for sales.orders (sharing an existing storage descriptor: enough for the fingerprint)."""
    partition = Partition.objects.using(metastore.alias).filter(table_id=orders_id(metastore)).values("sd_id").first()
    sql = MetastoreSql(metastore.alias)
    columns = ", ".join(sql.col(Partition, f) for f in ("id", "create_time", "last_access_time", "name", "sd", "table"))
    new_id = max(Partition.objects.using(metastore.alias).values_list("id", flat=True)) + 1000
    with allow_metastore_writes(), connections[metastore.alias].cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {sql.table(Partition)} ({columns}) VALUES (%s, 0, 0, %s, %s, %s)",
            [new_id, name, partition["sd_id"], orders_id(metastore)],
        )


# Bad input ----------------------------------------------------------------------------------------------------------

BAD_INPUT = [
    pytest.param(
        "ALTER TABLE sales.customers RENAME TO sales.`bad\\name`",
        ErrorCode.HIVE_RULE_VIOLATION,
        "bad\\name is not a valid object name",
        id="invalid-name",
    ),
    pytest.param(
        "ALTER TABLE sales.customers ADD COLUMNS (x foo)",
        ErrorCode.DDL_PARSE_ERROR,
        "Cannot parse the statement at line 1, column 44: 'foo' is not a column type of Hive",
        id="unknown-type",
    ),
    pytest.param(
        "ALTER TABLE sales.customers CHANGE id id int",
        ErrorCode.HIVE_RULE_VIOLATION,
        "The following columns have types incompatible with the existing columns in their respective positions :\nid",
        id="incompatible-type",
    ),
    pytest.param(
        "ALTER TABLE sales.customers RENAME TO sales.orders",
        ErrorCode.HIVE_RULE_VIOLATION,
        "new table sales.orders already exists",
        id="existing-target",
    ),
    pytest.param(
        "ALTER TABLE sales.orders RENAME TO nowhere.orders",
        ErrorCode.HIVE_RULE_VIOLATION,
        "Database nowhere does not exist",
        id="unknown-target-database",
    ),
    pytest.param(
        "ALTER TABLE sales.nope SET OWNER USER bob",
        ErrorCode.NOT_FOUND,
        "Table 'sales.nope' was not found.",
        id="table",
    ),
    pytest.param(
        "ALTER TABLE nowhere.t SET OWNER USER bob",
        ErrorCode.NOT_FOUND,
        "Database 'nowhere' was not found.",
        id="unknown-database",
    ),
    pytest.param(
        "ALTER TABLE sales.orders PARTITION (dt='1999-01-01', hour=0) RENAME TO PARTITION (dt='1999-01-02', hour=0)",
        ErrorCode.HIVE_RULE_VIOLATION,
        "Unable to rename partition because old partition does not exist: `sales`.`orders` dt=1999-01-01/hour=0",
        id="unknown-partition",
    ),
    pytest.param(
        "ALTER TABLE sales.orders DROP PARTITION (dt='1999-01-01')",
        ErrorCode.HIVE_RULE_VIOLATION,
        "No partition of `sales`.`orders` matches PARTITION (`dt`='1999-01-01')",
        id="no-partition-to-drop",
    ),
    pytest.param(
        "ALTER TABLE sales.payments_acid UNSET TBLPROPERTIES ('transactional')",
        ErrorCode.HIVE_RULE_VIOLATION,
        "TBLPROPERTIES with 'transactional'='true' cannot be unset",
        id="acid-unset",
    ),
    pytest.param(
        "ALTER TABLE sales.orders FROB",
        ErrorCode.DDL_PARSE_ERROR,
        "Cannot parse the statement at line 1, column 26: expected RENAME,",
        id="unparseable",
    ),
]


@pytest.mark.parametrize(("statement", "code", "message"), BAD_INPUT)
def test_bad_input_is_refused_with_a_clear_error_and_nothing_written(
    metastore: Metastore, warehouse: Path, statement: str, code: ErrorCode, message: str
) -> None:
    """The error names the problem; no metastore row, no directory and no execution record is written."""
    # given
    before = snapshot(metastore, warehouse)

    # when
    with pytest.raises(ApplicationError) as caught:
        alter_execute(preview=preview(metastore, statement), actor="operator:test", source="cli")

    # then
    assert caught.value.code == code
    assert message in caught.value.message
    assert snapshot(metastore, warehouse) == before
    assert not Execution.objects.exists()


def test_moves_onto_existing_directories_or_unreachable_filesystems_are_refused(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rules 8.7 and 17.4 block the execution before anything moves."""
    # given
    (warehouse / "marketing.db" / "orders_v2").mkdir(parents=True)
    partitions = Partition.objects.using(metastore.alias).filter(table_id=orders_id(metastore))
    sd_id = partitions.values_list("sd_id", flat=True).get(name="dt=2024-01-02/hour=3")
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location="s3a://b/o/p")
    before = snapshot(metastore, warehouse)
    statements = {
        RENAME: "New location for this table hive.marketing.orders_v2 already exists",
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-02', hour=3)": (
            "The console cannot check or move s3a://b/o/p"
        ),
    }

    # when / then
    for statement, message in statements.items():
        with pytest.raises(ApplicationError) as caught:
            alter_execute(preview=preview(metastore, statement), actor="operator:test", source="cli")
        assert caught.value.code == ErrorCode.HIVE_RULE_VIOLATION
        assert message in caught.value.message
    assert snapshot(metastore, warehouse) == before


# Fault injection ----------------------------------------------------------------------------------------------------


def fault_points(plan: Preview) -> list[str]:
    return ["locked", "moved", *(f"step:{n}" for n in range(1, len(plan.steps) + 1)), "before_commit"]


@pytest.mark.parametrize("statement", OPERATIONS)
def test_a_failure_at_any_point_leaves_rows_and_directories_as_they_were(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch, statement: str
) -> None:
    """Fault injected at 'locked', 'moved', every 'step:N' and 'before_commit': rolled back, directories moved back."""
    # given
    plan = preview(metastore, statement)
    before = snapshot(metastore, warehouse)
    points = fault_points(plan)
    assert len(plan.steps) >= 3

    for point in points:

        def fault(name: str, point: str = point) -> None:
            if name == point:
                raise RuntimeError(f"injected at {name}")

        monkeypatch.setattr(alter, "fault_point", fault)

        # when
        with pytest.raises(ApplicationError) as caught:
            alter_execute(preview=plan, actor="operator:test", source="cli")

        # then
        assert caught.value.code == ErrorCode.EXECUTION_FAILED
        assert caught.value.message == f"Execution failed and was rolled back: RuntimeError: injected at {point}"
        assert snapshot(metastore, warehouse) == before, point
        execution = Execution.objects.get(pk=caught.value.details["execution"])
        assert execution.state == Execution.State.FAILED
        moved = 0 if point == "locked" else len(plan.moves)  # the column change moves no directory
        assert list(execution.moves.values_list("state", flat=True)) == [DirectoryMoveRecord.State.RESTORED] * moved

    # and the same preview still executes afterwards
    monkeypatch.setattr(alter, "fault_point", lambda name: None)
    assert execute(plan).state == Execution.State.SUCCEEDED


def test_a_statement_the_database_refuses_rolls_everything_back(metastore: Metastore, warehouse: Path) -> None:
    """The last step violates a primary key: the database error is reported, rows and directories restored."""
    # given
    plan = preview(metastore, RENAME)
    sql = MetastoreSql(metastore.alias)
    existing = ColumnDescriptor.objects.using(metastore.alias).values_list("id", flat=True).first()
    duplicate = Step(
        "Violate CDS's primary key",
        "CDS",
        "insert",
        f"INSERT INTO {sql.table(ColumnDescriptor)} ({sql.col(ColumnDescriptor, 'id')}) VALUES (%s)",
        (existing,),
        1,
    )
    failing = replace(plan, steps=(*plan.steps, duplicate))
    before = snapshot(metastore, warehouse)

    # when
    with pytest.raises(ApplicationError) as caught:
        alter_execute(preview=failing, actor="operator:test", source="cli")

    # then
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert caught.value.message.startswith("Execution failed and was rolled back: database error: ")
    assert snapshot(metastore, warehouse) == before
    execution = Execution.objects.get(pk=caught.value.details["execution"])
    assert list(execution.moves.values_list("state", flat=True)) == [DirectoryMoveRecord.State.RESTORED]


def test_a_directory_move_the_filesystem_refuses_moves_the_earlier_ones_back(
    metastore: Metastore, warehouse: Path
) -> None:
    """A directory appears at the second dropped partition's trash destination after the preview: that move fails
    (never merged into nor replaced), the first partition's directory goes back, the metastore is untouched."""
    # given
    plan = preview(metastore, "ALTER TABLE sales.orders DROP PARTITION (hour >= 6)")
    assert len(plan.moves) >= 2
    obstacle = path_of(plan.moves[1].destination)
    obstacle.mkdir(parents=True)
    before = snapshot(metastore, warehouse)

    # when
    with pytest.raises(ApplicationError) as caught:
        alter_execute(preview=plan, actor="operator:test", source="cli")

    # then
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert caught.value.message == (
        "Execution failed and was rolled back: FileExistsError: "
        f"[Errno 17] the destination already exists: '{obstacle}'"
    )
    assert snapshot(metastore, warehouse) == before
    execution = Execution.objects.get(pk=caught.value.details["execution"])
    assert list(execution.moves.order_by("pk").values_list("state", flat=True)) == [
        DirectoryMoveRecord.State.RESTORED,
        DirectoryMoveRecord.State.INTENDED,
    ]


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
@pytest.mark.django_db(transaction=True, databases=["default", "hive31_pg"])
@pytest.mark.usefixtures("restore_roles")
def test_a_commit_the_database_refuses_rolls_back_and_moves_the_directory_back(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The COMMIT itself fails: inside the transaction a deferred foreign key is broken, which PostgreSQL checks only
    at commit. The transaction is gone, the directory is moved back, and the failure is reported and recorded."""
    # given
    plan = preview(metastore, RENAME)
    before = snapshot(metastore, warehouse)

    def break_a_deferred_key(name: str) -> None:
        if name == "before_commit":
            with connections[metastore.alias].cursor() as cursor:
                cursor.execute('SET CONSTRAINTS "PART_COL_STATS_fkey" DEFERRED')
                first = 'SELECT MIN("CS_ID") FROM "PART_COL_STATS"'
                cursor.execute(f'UPDATE "PART_COL_STATS" SET "PART_ID" = -1 WHERE "CS_ID" = ({first})')

    monkeypatch.setattr(alter, "fault_point", break_a_deferred_key)

    # when
    with pytest.raises(ApplicationError) as caught:
        alter_execute(preview=plan, actor="operator:test", source="cli")

    # then
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert caught.value.message.startswith("Execution failed and was rolled back: database error: ")
    assert 'violates foreign key constraint "PART_COL_STATS_fkey"' in caught.value.message
    assert snapshot(metastore, warehouse) == before
    execution = Execution.objects.get(pk=caught.value.details["execution"])
    assert execution.state == Execution.State.FAILED
    assert list(execution.moves.values_list("state", flat=True)) == [DirectoryMoveRecord.State.RESTORED]


def test_a_process_dying_after_the_move_leaves_a_journal(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Died at 'moved': the metastore is unchanged (never committed), the directory sits at its destination,
    the journal says MOVED and the execution is still RUNNING."""
    # given
    plan = preview(metastore, RENAME)
    rows = metastore_dump(metastore.alias)
    crash_at(monkeypatch, "moved")

    # when
    with pytest.raises(ProcessDied):
        alter_execute(preview=plan, actor="operator:test", source="cli")

    # then
    assert metastore_dump(metastore.alias) == rows
    execution = Execution.objects.get()
    assert execution.state == Execution.State.RUNNING
    record = execution.moves.get()
    assert (record.state, record.source, record.destination) == (
        DirectoryMoveRecord.State.MOVED,
        plan.moves[0].source,
        plan.moves[0].destination,
    )
    assert (path_of(record.source).exists(), path_of(record.destination).is_dir()) == (False, True)

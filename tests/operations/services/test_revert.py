"""Reverting an execution brings back the exact metastore rows and directories (compared row by row)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import (
    NotificationEvent,
    NotificationSequence,
    Partition,
    Sequence,
    StorageDescriptor,
    WriteSetEntry,
    hive_models,
)
from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.reconcile import reconcile_executions
from operations.services.revert import revert_preview
from tests.fixtures.operations import ProcessDied, crash_at, location_of

pytestmark = pytest.mark.django_db

STATEMENTS = {
    "rename": "ALTER TABLE sales.orders RENAME TO sales.orders_renamed",
    "rename_across_databases": "ALTER TABLE sales.orders RENAME TO ops.orders_moved",
    "rename_acid": "ALTER TABLE ops.job_runs_acid RENAME TO ops.job_runs",
    "rename_view": "ALTER VIEW marketing.campaign_performance RENAME TO marketing.performance_view",
    "add_columns_cascade": "ALTER TABLE sales.orders ADD COLUMNS (channel string COMMENT 'web or shop') CASCADE",
    "add_columns": "ALTER TABLE sales.orders ADD COLUMNS (channel string)",
    "rename_column_cascade": "ALTER TABLE sales.orders CHANGE COLUMN amount amount_eur double CASCADE",
    "widen_column_cascade": "ALTER TABLE sales.orders CHANGE COLUMN customer_id customer_id bigint CASCADE",
    "replace_columns": "ALTER TABLE sales.customers REPLACE COLUMNS (id bigint, name string)",
    "replace_columns_cascade": "ALTER TABLE sales.orders REPLACE COLUMNS (id bigint, customer_id bigint) CASCADE",
    "set_tblproperties": "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner_team'='sales', 'numRows'='1')",
    "unset_tblproperties": "ALTER TABLE sales.customers UNSET TBLPROPERTIES ('numRows')",
    "set_serdeproperties": "ALTER TABLE sales.customers SET SERDEPROPERTIES ('field.delim'='|')",
    "set_owner": "ALTER TABLE sales.customers SET OWNER ROLE analysts",
    "set_location": "ALTER TABLE sales.customers SET LOCATION 'file:/tmp/elsewhere/customers'",
    "rename_partition": "ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=0) "
    "RENAME TO PARTITION (dt='2024-02-01', hour=0)",
    "drop_partitions": "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02')",
    "drop_partition_range": "ALTER TABLE sales.orders DROP PARTITION (dt>='2024-01-02', hour<6)",
    "set_partition_location": "ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=6) "
    "SET LOCATION 'file:/tmp/elsewhere/p'",
    "rename_bucketing_column": "ALTER TABLE sales.payments_acid CHANGE payment_id pid bigint",
    "rename_bucketing_column_cascade": "ALTER TABLE ops.job_runs_acid CHANGE job_id job bigint CASCADE",
    # ops.job_runs_acid's partitions with ACID bookkeeping: the open transaction's and the compacted one
    "rename_partition_acid": "ALTER TABLE ops.job_runs_acid PARTITION (dt='2024-01-02', hour=6) "
    "RENAME TO PARTITION (dt='2024-01-03', hour=6)",
    "rename_partition_acid_compacted": "ALTER TABLE ops.job_runs_acid PARTITION (dt='2024-01-01', hour=0) "
    "RENAME TO PARTITION (dt='2023-12-31', hour=0)",
    "drop_partitions_acid": "ALTER TABLE ops.job_runs_acid DROP PARTITION (dt='2024-01-02', hour=6), "
    "PARTITION (dt='2024-01-01', hour=0)",
}
ACID_BOOKKEEPING = (
    "TXN_COMPONENTS",
    "COMPLETED_TXN_COMPONENTS",
    "HIVE_LOCKS",
    "COMPACTION_QUEUE",
    "COMPLETED_COMPACTIONS",
    "WRITE_SET",
    "COMPACTION_METRICS_CACHE",
)


def dump_metastore(metastore: Metastore) -> dict[str, list[tuple]]:
    """Every row of every Hive table the schema has (SEQUENCE_TABLE aside: ids handed out stay handed out; the
    notification log aside: it only grows, by the change's events and the revert's)."""
    rows = {}
    for model in hive_models():
        if model in (Sequence, NotificationEvent, NotificationSequence) or not metastore.schema.has_table(model):
            continue
        fields = [f.attname for f in model._meta.concrete_fields if metastore.schema.has(model, f.name)]
        queryset = model.objects.using(metastore.alias).order_by(*fields).values_list(*fields)
        rows[model._meta.db_table] = [tuple(_plain(v) for v in row) for row in queryset]
    return rows


def _plain(value: object) -> object:
    return bytes(value) if isinstance(value, memoryview) else value


def tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


@pytest.mark.parametrize("statement", STATEMENTS.values(), ids=STATEMENTS.keys())
def test_revert_restores_every_row_and_directory(metastore: Metastore, warehouse: Path, statement: str) -> None:
    # given
    rows_before, files_before = dump_metastore(metastore), tree(warehouse)
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=statement), actor="tester", source="cli"
    )
    assert dump_metastore(metastore) != rows_before, "the statement changed nothing"

    # when
    revert = alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")

    # then
    assert revert.reverts_id == execution.pk
    assert revert.actual_counts == revert.expected_counts
    assert dump_metastore(metastore) == rows_before
    assert tree(warehouse) == files_before
    events = execution.actual_counts["NOTIFICATION_LOG"]["insert"] + revert.actual_counts["NOTIFICATION_LOG"]["insert"]
    assert events >= 2 and NotificationEvent.objects.using(metastore.alias).count() == events


def test_a_view_renamed_before_alter_view_existed_is_renamed_back_with_alter_view(metastore: Metastore) -> None:
    """An execution's before-image from before ALTER VIEW (its inverse spec says nothing of a view) reverts as
    ALTER VIEW: the revert plan reads that the table is a view, so Hive's ALTER TABLE-on-a-view rule does not block."""
    # given
    execution = alter_execute(
        preview=alter_preview_statement(
            metastore=metastore, statement="ALTER VIEW marketing.campaign_performance RENAME TO marketing.cp_old"
        ),
        actor="tester",
        source="cli",
    )
    image = execution.before_image
    image["spec"].pop("on_view", None)
    execution.before_image = image

    # when
    preview = revert_preview(execution=execution)

    # then
    assert preview.blockers == ()
    assert preview.statement.startswith("ALTER VIEW `marketing`.`cp_old` RENAME TO")


@pytest.mark.parametrize(
    ("statement", "changed"),
    [
        pytest.param(
            "rename_partition_acid",
            {"TXN_COMPONENTS", "COMPLETED_TXN_COMPONENTS", "HIVE_LOCKS", "WRITE_SET"},
            id="rename-open",
        ),
        pytest.param(
            "rename_partition_acid_compacted",
            {"TXN_COMPONENTS", "COMPACTION_QUEUE", "COMPLETED_COMPACTIONS", "COMPACTION_METRICS_CACHE"},
            id="rename-compacted",
        ),
        pytest.param(
            "drop_partitions_acid",
            {"TXN_COMPONENTS", "COMPLETED_TXN_COMPONENTS", "COMPACTION_QUEUE", "COMPLETED_COMPACTIONS"}
            | {"COMPACTION_METRICS_CACHE"},
            id="drop",
        ),
    ],
)
def test_revert_puts_back_the_acid_bookkeeping_of_the_partitions_exactly(
    metastore: Metastore, warehouse: Path, statement: str, changed: set[str]
) -> None:
    """A partition rename re-labels its ACID bookkeeping and a drop deletes it (COMPACTION_METRICS_CACHE on 4.x
    only); the revert puts every row back as it was: re-labelled back, or re-inserted from the before-image."""
    # given
    rows_before = dump_metastore(metastore)
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=STATEMENTS[statement]),
        actor="tester",
        source="cli",
    )
    rows_changed = dump_metastore(metastore)

    # when
    revert = alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")

    # then
    assert {table for table in ACID_BOOKKEEPING if rows_changed.get(table) != rows_before.get(table)} == {
        table for table in changed if table in rows_before
    }
    assert revert.actual_counts == revert.expected_counts
    assert dump_metastore(metastore) == rows_before


def test_a_partition_rename_is_not_reverted_onto_acid_bookkeeping_under_the_old_name(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rows that carry the old partition name since the rename (a new partition of that name) would merge with
    those the revert re-labels back, and no later revert could tell them apart: the revert is refused."""
    # given
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=STATEMENTS["rename_partition_acid"]),
        actor="tester",
        source="cli",
    )
    with allow_metastore_writes():
        WriteSetEntry.objects.using(metastore.alias).create(
            database="ops", table="job_runs_acid", partition="dt=2024-01-02/hour=6", txn_id=1, commit_id=1,
            operation_type="u",
        )  # fmt: skip

    # when
    preview = revert_preview(execution=execution)

    # then
    assert [(b.code, b.rule, b.message) for b in preview.blockers] == [
        (
            "names_in_use",
            "labels",
            "1 row(s) of WRITE_SET already carry the partition name dt=2024-01-02/hour=6 of ops.job_runs_acid (left "
            "by another partition of that name): the revert would take them for the renamed partition's. Remove them "
            "first.",
        )
    ]


def test_revert_twice_is_refused(metastore: Metastore, warehouse: Path) -> None:
    # given
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=STATEMENTS["set_owner"]),
        actor="tester",
        source="cli",
    )
    alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")
    execution.refresh_from_db()

    # when / then
    with pytest.raises(ApplicationError) as error:
        revert_preview(execution=execution)
    assert error.value.code == "invalid_state"
    assert "already reverted" in error.value.message


def test_a_revert_is_not_reverted(metastore: Metastore, warehouse: Path) -> None:
    """Reverting a revert would replay its directory moves without its rows: refused, redo means a new preview."""
    # given
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=STATEMENTS["drop_partitions"]),
        actor="tester",
        source="cli",
    )
    revert = alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")
    rows, files = dump_metastore(metastore), tree(warehouse)

    # when / then
    with pytest.raises(ApplicationError) as error:
        revert_preview(execution=revert)
    assert error.value.code == "invalid_state"
    assert error.value.message == (
        f"Execution #{revert.pk} is itself a revert (of #{execution.pk}); to redo that change, "
        "preview its statement again."
    )
    assert (dump_metastore(metastore), tree(warehouse)) == (rows, files)


def test_only_the_latest_change_of_a_table_can_be_reverted(metastore: Metastore, warehouse: Path) -> None:
    # given
    first = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=STATEMENTS["set_owner"]),
        actor="tester",
        source="cli",
    )
    second = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=STATEMENTS["set_tblproperties"]),
        actor="tester",
        source="cli",
    )

    # when / then
    with pytest.raises(ApplicationError) as error:
        revert_preview(execution=first)
    assert error.value.code == "invalid_state"
    assert f"#{second.pk}" in error.value.message


@pytest.mark.parametrize(
    ("old", "new", "already_new"),
    [
        pytest.param("{warehouse}/archive/", "hdfs://nn1/cold/", "", id="disjoint"),
        pytest.param("{warehouse}/archive/", "hdfs://nn1/cold/", "hdfs://nn1/cold/orders/hour=9", id="one-already-new"),
        pytest.param("{warehouse}/", "{warehouse}/sales.db/", "", id="new-prefix-inside-old"),
    ],
)
def test_revert_of_a_prefix_rewrite_is_one_rule_and_exact(
    metastore: Metastore, warehouse: Path, old: str, new: str, already_new: str
) -> None:
    """The before-image is the inverse rule and the partitions a revert must leave alone (those under the new prefix
    that the rewrite did not touch), never a copy per row; the revert restores every location exactly, also when
    some partitions were already under the new prefix or when the new prefix lies inside the old one."""
    # given
    old, new = (prefix.format(warehouse=location_of(warehouse)) for prefix in (old, new))
    kept = []
    if already_new:  # one partition outside the old prefix already lives under the new one
        partition = Partition.objects.using(metastore.alias).get(table__name="orders", name="dt=2024-01-03/hour=9")
        with allow_metastore_writes():
            StorageDescriptor.objects.using(metastore.alias).filter(id=partition.sd_id).update(location=already_new)
        kept = [partition.sd_id]
    statement = f"ALTER TABLE sales.orders PARTITION LOCATIONS REPLACE PREFIX '{old}' WITH '{new}'"
    rows_before = dump_metastore(metastore)

    # when
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=statement), actor="tester", source="cli"
    )
    changed = dump_metastore(metastore)["SDS"] != rows_before["SDS"]
    revert = alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")

    # then
    assert changed, "the rewrite changed no location"
    image = execution.read_before_image()
    assert image["rule"] == {"old_prefix": new, "new_prefix": old}
    assert (image["keep_sd_ids"], image["updated_rows"], image["deleted_rows"]) == (kept, {}, {})
    assert revert.actual_counts == revert.expected_counts == execution.expected_counts
    assert dump_metastore(metastore) == rows_before


def test_a_revert_removes_only_the_directories_the_change_created(metastore: Metastore, warehouse: Path) -> None:
    """Moving a partition back removes the parent folder its rename created, not one that was there before."""
    # given: the new partition's dt= folder already exists (empty)
    (warehouse / "sales.db" / "orders" / "dt=2024-02-01").mkdir()
    rows_before, files_before = dump_metastore(metastore), tree(warehouse)
    statement = (
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-01', hour=3)"
    )
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=statement), actor="tester", source="cli"
    )

    # when
    alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")

    # then
    assert execution.moves.get().created_parents == 0
    assert (dump_metastore(metastore), tree(warehouse)) == (rows_before, files_before)


def test_a_revert_that_failed_leaves_the_execution_revertible_and_a_succeeded_one_ends_it(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A revert attempt that died before its commit (reconciled FAILED) changed nothing: the execution is previewed
    and reverted again, and only that succeeded revert makes a third one refused (while an attempt is still
    running, a new one is refused as well)."""
    # given
    rows_before = dump_metastore(metastore)
    execution = alter_execute(
        preview=alter_preview_statement(metastore=metastore, statement=STATEMENTS["rename_partition"]),
        actor="tester",
        source="cli",
    )
    first = revert_preview(execution=execution)
    crash_at(monkeypatch, "before_commit")
    with pytest.raises(ProcessDied):
        alter_execute(preview=first, actor="tester", source="cli")
    monkeypatch.undo()
    with pytest.raises(ApplicationError) as while_running:
        revert_preview(execution=execution)

    # when
    [settled] = reconcile_executions(older_than=0)
    retried = alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")

    # then
    assert "has not finished" in while_running.value.message
    assert settled.state == Execution.State.FAILED
    assert retried.state == Execution.State.SUCCEEDED
    assert dump_metastore(metastore) == rows_before
    assert [a.pk for a in execution.revert_attempts.order_by("pk")] == [settled.execution_id, retried.pk]
    assert execution.reverted_by == retried
    with pytest.raises(ApplicationError) as again:
        revert_preview(execution=execution)
    assert again.value.message == f"Execution #{execution.pk} was already reverted by #{retried.pk}."

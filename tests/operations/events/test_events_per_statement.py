"""Events for the statements added after the notification layer: a compaction request and its withdrawal write no
event (Hive's ``TxnHandler.compact`` calls no listener; an abort's ABORT_TXN events: ``test_abort_txn_events.py``);
ALTER VIEW goes through ``alter_table`` like a table; every statement kind has decided its events."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from catalog_admin.models import NotificationEvent
from catalog_admin.selectors.metastores import Metastore
from operations.events.planning import _PLANNERS, _REVERTED, UnplannedEvents, plan_events
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from operations.specs import SPEC_KINDS, AlterSpec, RevertExecution, TableRef
from operations.table_state import read_table_state
from tests.fixtures.operations import event_types, execute

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("warehouse")]

ACID_SCHEMAS = pytest.mark.parametrize(
    "metastore_alias",
    ["hive31_pg", *(pytest.param(a, marks=pytest.mark.matrix) for a in ("hive40_pg", "hive31_my", "hive40_my"))],
    indirect=True,
)


def test_every_statement_kind_and_its_revert_decides_its_events() -> None:
    """No statement falls back to an ALTER_TABLE nobody chose: every spec kind has a planner and a revert entry."""
    assert set(SPEC_KINDS.values()) | {RevertExecution} <= set(_PLANNERS)
    assert set(SPEC_KINDS) <= set(_REVERTED)


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_a_statement_without_a_planner_is_refused_not_written_as_alter_table(metastore: Metastore) -> None:
    """A spec kind nobody listed raises instead of silently planning an ALTER_TABLE."""

    @dataclass(frozen=True)
    class Undecided(AlterSpec):
        kind = "undecided"

    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers SET OWNER USER bob")
    state = read_table_state(metastore, TableRef("sales", "customers"))
    with pytest.raises(UnplannedEvents, match="Undecided"):
        plan_events(metastore, state, replace(preview, spec=Undecided(preview.spec.target)))


@ACID_SCHEMAS
def test_a_compaction_request_and_its_withdrawal_write_no_event(metastore: Metastore) -> None:
    """TxnHandler.compact only queues the request; withdrawing it is no Hive statement: no event either way."""
    # given
    statement = "ALTER TABLE ops.job_runs_acid PARTITION (dt='2024-01-02', hour=6) COMPACT 'major'"
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    assert preview.blockers == ()
    # when
    execution = execute(preview)
    revert = revert_preview(execution=execution)
    execute(revert)
    # then
    assert preview.events is None and preview.as_dict()["events"] is None
    assert revert.events is None
    assert event_types(metastore) == []


@pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive23_pg", marks=pytest.mark.matrix)], indirect=True
)
def test_view_rename_and_properties_write_alter_table_as_for_a_table(metastore: Metastore) -> None:
    """ALTER VIEW reaches HiveAlterHandler.alterTable like a table: one ALTER_TABLE each (a view has no partitions)."""
    # given
    rename = alter_preview_statement(
        metastore=metastore, statement="ALTER VIEW marketing.campaign_performance RENAME TO marketing.cp_renamed"
    )
    # when
    execute(rename)
    props = alter_preview_statement(
        metastore=metastore, statement="ALTER VIEW marketing.cp_renamed SET TBLPROPERTIES ('comment'='weekly')"
    )
    execute(props)
    # then
    assert rename.events.counts == props.events.counts == (("ALTER_TABLE", 1),)
    assert event_types(metastore) == ["ALTER_TABLE", "ALTER_TABLE"]


@pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive40_pg", marks=pytest.mark.matrix)], indirect=True
)
def test_a_view_moved_to_another_database_writes_drop_and_create_table(metastore: Metastore) -> None:
    """3.1+ write a rename across databases as DROP_TABLE + CREATE_TABLE, views included (no ADD_PARTITION); the
    revert renames it back across databases, so it writes the same pair again (not an ALTER_TABLE)."""
    # given
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER VIEW marketing.campaign_performance RENAME TO ops.campaign_view"
    )
    # when
    execution = execute(preview)
    revert = revert_preview(execution=execution)
    execute(revert)
    # then
    assert [t for t, _count in revert.events.counts] == ["DROP_TABLE", "CREATE_TABLE"]
    assert event_types(metastore) == ["DROP_TABLE", "CREATE_TABLE"] * 2
    created = NotificationEvent.objects.using(metastore.alias).filter(event_type="CREATE_TABLE").order_by("event_id")
    assert [(e.db_name, e.table_name) for e in created] == [
        ("ops", "campaign_view"),
        ("marketing", "campaign_performance"),
    ]


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_moving_a_partitioned_table_back_adds_its_partitions_back(
    metastore: Metastore,
) -> None:
    """Renaming a partitioned table back into its database is DROP_TABLE, CREATE_TABLE and one ADD_PARTITION."""
    # given
    execution = execute(
        alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.orders RENAME TO ops.orders_moved")
    )
    # when
    revert = revert_preview(execution=execution)
    execute(revert)
    # then
    assert revert.events.counts == (("DROP_TABLE", 1), ("CREATE_TABLE", 1), ("ADD_PARTITION", 1))
    assert event_types(metastore)[3:] == ["DROP_TABLE", "CREATE_TABLE", "ADD_PARTITION"]

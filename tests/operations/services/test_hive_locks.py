"""
Hive's EXCLUSIVE lock around a data job's re-listing and swap (issue 25, case 1), in each metastore's own lock tables
(HIVE_LOCKS, NEXT_LOCK_ID, AUX_TABLE's CheckLock row), as Hive's ``TxnHandler.lock`` / ``checkLock`` take it: held
for the swap and released after, refused while a Hive writer's lock stands in the way, named with its holder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connections
from django.utils import timezone

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import HiveLock
from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services import alter
from operations.services.alter import alter_preview_statement
from operations.services.hive_locks import exclusive_table_lock
from operations.services.relocate import relocate_execute
from operations.spark.programs import relocate as relocate_program
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import location_of, path_of
from tests.operations.planners.test_data_scope import insert

pytestmark = pytest.mark.usefixtures("warehouse")

WRITER = {"user": "etl", "host": "worker-7.example.com"}


def next_lock_id(metastore: Metastore) -> int | None:
    """NEXT_LOCK_ID's value, or None on a metastore without it (the embedded SQLite demo)."""
    connection = connections[metastore.alias]
    names = {n.lower(): n for n in connection.introspection.table_names()}
    if "next_lock_id" not in names:
        return None
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(names['next_lock_id'])}")
        return cursor.fetchone()[0]


def locks_on(metastore: Metastore, database: str) -> list[tuple]:
    rows = HiveLock.objects.on(metastore).filter(database=database).order_by("ext_id", "int_id")
    return list(rows.values_list("ext_id", "txn_id", "table", "partition", "state", "type", "user"))


def hive_lock(metastore: Metastore, ext_id: int, **fields: object) -> None:
    """A lock row as Hive's TxnHandler writes it for a writer (acquired, in transaction ``ext_id``)."""
    now = int(timezone.now().timestamp() * 1000)
    values = {"int_id": 1, "txn_id": ext_id, "database": "sales", "table": "orders", "partition": None, "state": "a",
              "type": "w", "last_heartbeat": 0, "acquired_at": now, **WRITER, **fields}  # fmt: skip
    with allow_metastore_writes():
        insert(metastore, HiveLock, ext_id=ext_id, **values)


def day_relocation(metastore: Metastore, warehouse: Path):  # noqa: ANN201 - a Preview
    target = location_of(warehouse / "sales.db" / "orders_moved")
    statement = f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{target}' WITH DATA"
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    assert preview.blockers == (), preview.blockers
    return preview


def copy_then(write):  # noqa: ANN001, ANN201 - a run_program
    def run(plan: dict) -> dict:
        manifest = relocate_program.run(None, plan, [].append)
        write()
        return manifest

    return run


def test_the_swap_holds_hives_exclusive_lock_on_the_table_and_releases_it(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the metastore is re-pointed, HIVE_LOCKS holds one acquired EXCLUSIVE table lock of no transaction,
    whose id came from NEXT_LOCK_ID; afterwards it is gone and the counter moved on by one. A metastore without
    Hive's lock tables (the SQLite demo) swaps without one."""
    # given
    preview = day_relocation(metastore, warehouse)
    counter = next_lock_id(metastore)
    seen: list[list[tuple]] = []
    monkeypatch.setattr(
        alter, "fault_point", lambda name: seen.append(locks_on(metastore, "sales")) if name == "locked" else None
    )

    # when
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=copy_then(lambda: None))

    # then
    expected = [] if counter is None else [(counter, 0, "orders", None, "a", "e", "steward")]
    assert seen == [expected]
    assert locks_on(metastore, "sales") == []
    assert next_lock_id(metastore) == (None if counter is None else counter + 1)


@pytest.mark.parametrize(
    ("lock", "named"),
    [
        (
            {"type": "w"},
            "lock 990001 (shared write, acquired) on table orders by etl@worker-7.example.com, transaction 990001",
        ),
        (
            {"partition": "dt=2024-01-02/hour=0", "type": "r", "state": "w", "txn_id": 0, "last_heartbeat": 1},
            "lock 990001 (shared read, waiting) on dt=2024-01-02/hour=0 by etl@worker-7.example.com, no transaction",
        ),
        (
            {"table": None, "type": "e"},
            "lock 990001 (exclusive, acquired) on the whole database by etl@worker-7.example.com, transaction 990001",
        ),
    ],
    ids=["table-shared-write", "partition-waiting-read", "database-exclusive"],
)
def test_a_hive_lock_taken_during_the_copy_refuses_the_swap_naming_its_holder(
    metastore: Metastore, warehouse: Path, lock: dict, named: str
) -> None:
    """A Hive writer that locked the table, one of its partitions or its database while the copy ran: the swap is
    refused naming the lock (id, type, state, user, host, transaction), nothing is re-pointed, no lock of ours stays
    and NEXT_LOCK_ID is as before."""
    # given
    if next_lock_id(metastore) is None:
        pytest.skip("no Hive lock tables: nothing to wait for")
    preview = day_relocation(metastore, warehouse)
    before = partition_locations(metastore, table_row(metastore, "sales", "orders").id)
    counter = next_lock_id(metastore)

    # when
    with pytest.raises(ApplicationError) as refused:
        relocate_execute(
            preview=preview,
            actor="steward",
            source="cli",
            run_program=copy_then(lambda: hive_lock(metastore, 990001, **lock)),
        )

    # then
    assert refused.value.code == ErrorCode.INVALID_STATE
    assert refused.value.message.startswith(f"sales.orders is locked in Hive ({named}): ")
    assert [(d["lock"], d["user"], d["host"]) for d in refused.value.details["locks"]] == [
        (990001, "etl", WRITER["host"])
    ]
    assert partition_locations(metastore, table_row(metastore, "sales", "orders").id) == before
    assert [row[0] for row in locks_on(metastore, "sales")] == [990001]
    assert next_lock_id(metastore) == counter
    assert not Execution.objects.exists()
    assert all(path_of(u.source).exists() for u in preview.data_copy.units if path_of(u.source).exists())


def test_locks_that_do_not_conflict_leave_the_swap_to_run(metastore: Metastore, warehouse: Path) -> None:
    """A lock on another table of the database, and a database-level SHARED_READ (``ignoreConflict``), do not stop
    an EXCLUSIVE table lock: the swap runs and those locks stay."""
    # given
    preview = day_relocation(metastore, warehouse)
    hive_lock(metastore, 990001, table="customers", type="e")
    hive_lock(metastore, 990002, table=None, type="r")

    # when
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=copy_then(lambda: None))

    # then
    assert execution.state == Execution.State.SUCCEEDED
    assert [(row[0], row[2]) for row in locks_on(metastore, "sales")] == [(990001, "customers"), (990002, None)]


def test_a_lock_removed_by_hives_housekeeping_refuses_what_follows(metastore: Metastore) -> None:
    """Hive's ``timeOutLocks`` deletes a lock of no transaction whose heartbeat is too old: the next heartbeat says
    the lock is gone, so the swap does not run without it."""
    # given
    if next_lock_id(metastore) is None:
        pytest.skip("no Hive lock tables")
    with exclusive_table_lock(metastore, "sales", "orders", user="steward", agent="test") as held:
        assert held is not None
        with allow_metastore_writes():
            HiveLock.objects.using(metastore.alias).filter(ext_id=held.ext_id).delete()

        # when
        with pytest.raises(ApplicationError) as refused:
            held.heartbeat()

    # then
    assert refused.value.code == ErrorCode.INVALID_STATE
    assert f"Hive lock {held.ext_id} on sales.orders is gone" in refused.value.message
    assert locks_on(metastore, "sales") == []

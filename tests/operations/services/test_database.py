"""CREATE, ALTER and DROP DATABASE (issue 27) as Hive's Driver writes them, on every metastore, and their reverts."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from catalog_admin.errors import ApplicationError
from catalog_admin.models import Database, NotificationEvent
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.events.objects import read_database
from operations.models import Execution
from operations.planners.databases import DatabasePlan, plan_database
from operations.services.database import database_execute
from operations.services.database_kind import database_revert_plan
from operations.services.reconcile import reconcile_executions
from tests.fixtures.operations import ProcessDied, metastore_dump, sequences_behind

pytestmark = pytest.mark.django_db


def plan(metastore: Metastore, statement: str) -> DatabasePlan:
    return plan_database(metastore, parse_alter(statement))  # type: ignore[arg-type]


def run(metastore: Metastore, statement: str, actor: str = "steward") -> Execution:
    return database_execute(plan=plan(metastore, statement), actor=actor, source="cli", reason="test")


def revert(execution: Execution) -> Execution:
    return database_execute(plan=database_revert_plan(execution), actor="steward", source="cli", reason="undo")


def dbs_row(metastore: Metastore, name: str) -> dict[str, Any] | None:
    connection = connections[metastore.alias]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT * FROM {connection.ops.quote_name('DBS')} WHERE {connection.ops.quote_name('NAME')} = %s", [name]
        )
        row = cursor.fetchone()
        return None if row is None else dict(zip([c[0] for c in cursor.description], row, strict=True))


def params_of(metastore: Metastore, db_id: int) -> dict[str, str]:
    return dict(
        Database.objects.using(metastore.alias).get(pk=db_id).params.using(metastore.alias).values_list("key", "value")
    )


def last_event(metastore: Metastore) -> NotificationEvent:
    return NotificationEvent.objects.using(metastore.alias).order_by("-pk").first()  # type: ignore[return-value]


def message(metastore: Metastore, event: NotificationEvent) -> dict[str, Any]:
    text = event.message
    if metastore.schema.capabilities.gzip_json_messages:
        text = gzip.decompress(base64.b64decode(text)).decode()
    return json.loads(text)


def test_create_database_writes_the_rows_hives_driver_writes(metastore: Metastore, warehouse: Path) -> None:
    """DBS as DDLTask/CreateDatabaseOperation and ObjectStore write it per version (name lower-cased, the location
    warehouse/d.db, the running user as owner, CTLG_NAME on 3.x+, the managed location and type on 4.0), its
    DATABASE_PARAMS, an id from SEQUENCE_TABLE, the directory made, and a CREATE_DATABASE event of that database."""
    # given
    statement = "CREATE DATABASE Finance COMMENT 'money' WITH DBPROPERTIES ('team'='fin', 'tier'='1')"

    # when
    execution = run(metastore, statement, actor="alice")

    # then
    row = dbs_row(metastore, "finance")
    assert row is not None and execution.state == Execution.State.SUCCEEDED
    capabilities = metastore.schema.capabilities
    location = f"file:{warehouse}/finance.db"
    expected = {
        "NAME": "finance",
        "DESC": "money",
        "DB_LOCATION_URI": location,
        "OWNER_NAME": "alice",
        "OWNER_TYPE": "USER",
    }
    if capabilities.catalogs:
        expected["CTLG_NAME"] = "hive"
    if capabilities.managed_locations:
        expected.update({"TYPE": "NATIVE", "DB_MANAGED_LOCATION_URI": None})  # the warehouse is the location's root
    assert {k: row[k] for k in expected} == expected
    assert params_of(metastore, row["DB_ID"]) == {"team": "fin", "tier": "1"}
    assert (warehouse / "finance.db").is_dir()
    assert sequences_behind(metastore) == {}
    event = last_event(metastore)
    assert (event.event_type, event.db_name) == ("CREATE_DATABASE", "finance")
    body = message(metastore, event)
    assert body["db"] == "finance"
    if capabilities.database_messages_carry_json:
        assert body["dbJson"] == read_database(metastore.alias, metastore.schema.version, row["DB_ID"]).json


def test_a_created_database_reverts_to_exactly_the_rows_before(metastore: Metastore, warehouse: Path) -> None:
    """The revert drops the database again (DROP_DATABASE) and removes the empty directory it made: every row but the
    event log is as before."""
    # given
    before = metastore_dump(metastore.alias, events=False)
    execution = run(metastore, f"CREATE DATABASE lab LOCATION '{warehouse}/labs/lab.db'")

    # when
    reverted = revert(execution)

    # then
    assert reverted.state == Execution.State.SUCCEEDED and reverted.reverts_id == execution.pk
    assert _without_sequences(metastore_dump(metastore.alias, events=False)) == _without_sequences(before)
    assert not (warehouse / "labs" / "lab.db").exists() and not (warehouse / "labs").exists()
    assert last_event(metastore).event_type == "DROP_DATABASE"


def _without_sequences(dump: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[tuple[Any, ...]]]:
    """SEQUENCE_TABLE's MDatabase row stays raised past the id a revert gave back (a cached block is never reused)."""
    return {table: rows for table, rows in dump.items() if table.upper() != "SEQUENCE_TABLE"}


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("CREATE DATABASE sales", "already_exists"),
        ("CREATE DATABASE `bad-name`", "invalid_name"),
        ("CREATE DATABASE far LOCATION 'file:/tmp/not-governed/far.db'", "outside_roots"),
        ("CREATE DATABASE rel LOCATION 'relative/rel.db'", "bad_location"),
        ("DROP DATABASE sales", "not_empty"),
        ("DROP DATABASE default", "default_database"),
        ("DROP DATABASE ops CASCADE", "open_transactions"),
        ("DROP DATABASE nowhere", "no_such_database"),
        ("ALTER DATABASE nowhere SET OWNER USER bob", "no_such_database"),
        ("ALTER DATABASE sales SET LOCATION '/no/scheme'", "bad_location"),
    ],
)
def test_hives_refusals_block_the_plan_and_nothing_is_written(metastore: Metastore, statement: str, code: str) -> None:
    """Each of Hive's refusals (and the console's: outside the roots) is a blocker naming it; an
    execution attempt is refused and writes nothing."""
    # given
    before = metastore_dump(metastore.alias)
    refused = plan(metastore, statement)

    # when
    with pytest.raises(ApplicationError) as raised:
        database_execute(plan=refused, actor="steward", source="cli")

    # then
    if (
        code == "bad_location"
        and statement.startswith("ALTER")
        and not metastore.schema.capabilities.database_set_location
    ):
        code = "not_in_version"  # Hive 2.3 has no SET LOCATION for databases
    assert code in {b.code for b in refused.blockers}
    assert raised.value.code == "hive_rule_violation"
    assert metastore_dump(metastore.alias) == before


def test_managed_location_is_hive_4s(metastore: Metastore, warehouse: Path) -> None:
    """MANAGEDLOCATION is refused where the schema has no managed locations, and stored on 4.0."""
    # given
    statement = f"CREATE DATABASE m1 LOCATION '{warehouse}/ext/m1.db' MANAGEDLOCATION '{warehouse}/m1.db'"

    # when
    planned = plan(metastore, statement)

    # then
    if not metastore.schema.capabilities.managed_locations:
        assert [b.code for b in planned.blockers] == ["not_in_version"]
        return
    run(metastore, statement)
    row = dbs_row(metastore, "m1")
    assert row is not None
    assert (row["DB_LOCATION_URI"], row["DB_MANAGED_LOCATION_URI"]) == (
        f"file:{warehouse}/ext/m1.db",
        f"file:{warehouse}/m1.db",
    )
    assert (warehouse / "ext" / "m1.db").is_dir() and (warehouse / "m1.db").is_dir()


def test_if_not_exists_and_if_exists_change_nothing(metastore: Metastore) -> None:
    """CREATE … IF NOT EXISTS of an existing database and DROP … IF EXISTS of a missing one are no-ops."""
    # given
    before = metastore_dump(metastore.alias)

    # when
    created = run(metastore, "CREATE DATABASE IF NOT EXISTS sales LOCATION 'file:/elsewhere'")
    dropped = run(metastore, "DROP DATABASE IF EXISTS nowhere")

    # then
    assert created.state == dropped.state == Execution.State.SUCCEEDED
    assert metastore_dump(metastore.alias) == before


def test_set_dbproperties_merges_and_reverts(metastore: Metastore) -> None:
    """SET DBPROPERTIES puts the keys into the existing parameters (others stay), writes ALTER_DATABASE from 3.0 with
    the database before and after, and its revert restores the parameters exactly."""
    # given
    row = dbs_row(metastore, "sales")
    assert row is not None
    old = params_of(metastore, row["DB_ID"])
    events_before = NotificationEvent.objects.using(metastore.alias).count()

    # when
    execution = run(metastore, "ALTER DATABASE sales SET DBPROPERTIES ('steward'='ann', 'tier'='gold')")

    # then
    assert params_of(metastore, row["DB_ID"]) == {**old, "steward": "ann", "tier": "gold"}
    written = NotificationEvent.objects.using(metastore.alias).count() - events_before
    if metastore.schema.capabilities.alter_database_writes_event:
        event = last_event(metastore)
        body = message(metastore, event)
        assert (written, event.event_type, body["db"]) == (1, "ALTER_DATABASE", "sales")
        assert body["dbObjAfterJson"] == read_database(metastore.alias, metastore.schema.version, row["DB_ID"]).json
        assert body["dbObjBeforeJson"] != body["dbObjAfterJson"]
    else:
        assert written == 0

    # and when
    revert(execution)

    # then
    assert params_of(metastore, row["DB_ID"]) == old


def test_set_owner_and_location(metastore: Metastore, warehouse: Path) -> None:
    """SET OWNER changes OWNER_NAME/OWNER_TYPE; SET LOCATION (3.0+) stores the qualified URI and moves no table."""
    # given
    row = dbs_row(metastore, "marketing")
    assert row is not None

    # when
    run(metastore, "ALTER SCHEMA marketing SET OWNER ROLE analysts")
    moved = plan(metastore, f"ALTER DATABASE marketing SET LOCATION 'file://{warehouse}/mkt2.db'")

    # then
    after = dbs_row(metastore, "marketing")
    assert after is not None and (after["OWNER_NAME"], after["OWNER_TYPE"]) == ("analysts", "ROLE")
    if not metastore.schema.capabilities.database_set_location:
        assert [b.code for b in moved.blockers] == ["not_in_version"]
        return
    assert "tables_stay" in {w.code for w in moved.warnings}
    database_execute(plan=moved, actor="steward", source="cli")
    final = dbs_row(metastore, "marketing")
    assert final is not None and final["DB_LOCATION_URI"] == f"file:{warehouse}/mkt2.db"


def test_drop_of_an_empty_database_trashes_its_data_and_undrop_restores_it(
    metastore: Metastore, warehouse: Path
) -> None:
    """DROP DATABASE … RESTRICT of a database without tables deletes its rows (DROP_DATABASE), moves its directory
    (holding a file) to the console's trash; the revert restores the same id, parameters, owner and the file."""
    # given
    created = run(metastore, "CREATE DATABASE scratch WITH DBPROPERTIES ('a'='1')")
    (warehouse / "scratch.db" / "notes.txt").write_text("kept")
    row = dbs_row(metastore, "scratch")
    assert row is not None

    # when
    dropped = run(metastore, "DROP DATABASE scratch RESTRICT")

    # then
    assert dbs_row(metastore, "scratch") is None and not (warehouse / "scratch.db").exists()
    trashed = list(warehouse.glob(".catalog-admin-trash/scratch.db/*/notes.txt"))
    assert [p.read_text() for p in trashed] == ["kept"]
    assert last_event(metastore).event_type == "DROP_DATABASE"
    assert created.state == dropped.state == Execution.State.SUCCEEDED

    # and when
    revert(dropped)

    # then
    assert dbs_row(metastore, "scratch") == row
    assert params_of(metastore, row["DB_ID"]) == {"a": "1"}
    assert (warehouse / "scratch.db" / "notes.txt").read_text() == "kept"
    assert not list(warehouse.glob(".catalog-admin-trash/scratch.db/*"))
    assert last_event(metastore).event_type == "CREATE_DATABASE"


def test_a_plan_is_refused_when_the_database_changed_since(metastore: Metastore) -> None:
    """Execution compares the database's rows under its lock with the plan's: a change in between refuses it."""
    # given
    planned = plan(metastore, "ALTER DATABASE ops SET OWNER USER carol")
    run(metastore, "ALTER DATABASE ops SET DBPROPERTIES ('x'='y')")

    # when
    with pytest.raises(ApplicationError) as raised:
        database_execute(plan=planned, actor="steward", source="cli")

    # then
    assert raised.value.code == "stale_preview"
    row = dbs_row(metastore, "ops")
    assert row is not None and row["OWNER_NAME"] != "carol"


def test_a_drop_that_fails_before_its_commit_puts_the_data_back(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after the data went to the trash (here: keeping the before-image, the last step before the commit)
    rolls the rows back and moves the directory back; the journal says RESTORED."""
    # given
    run(metastore, "CREATE DATABASE shaky")
    (warehouse / "shaky.db" / "f.txt").write_text("x")
    before = metastore_dump(metastore.alias)
    planned = plan(metastore, "DROP DATABASE shaky")

    def broken(*args: object) -> None:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("operations.services.database._keep_image", broken)

    # when
    with pytest.raises(ApplicationError) as failed:
        database_execute(plan=planned, actor="steward", source="cli")

    # then
    execution = Execution.objects.get(pk=failed.value.details["execution"])
    assert execution.state == Execution.State.FAILED and (warehouse / "shaky.db" / "f.txt").read_text() == "x"
    assert [m.state for m in execution.moves.all()] == ["restored"]
    assert metastore_dump(metastore.alias) == before


def test_a_drop_whose_process_died_after_the_commit_is_reconciled_as_committed(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drop writes its commit marker in its transaction and journals its trash move: when the process dies after
    the commit, reconcile_executions settles it as committed and keeps the data in the trash."""
    # given
    run(metastore, "CREATE DATABASE crashy")
    (warehouse / "crashy.db" / "f.txt").write_text("x")
    planned = plan(metastore, "DROP DATABASE crashy")
    monkeypatch.setattr("operations.services.one_transaction.end_execution", _die_after_commit)

    # when
    with pytest.raises(ProcessDied):
        database_execute(plan=planned, actor="steward", source="cli")
    [settled] = reconcile_executions(older_than=0)

    # then
    execution = Execution.objects.get(pk=settled.execution_id)
    assert settled.committed and execution.state == Execution.State.RECONCILED
    assert [m.state for m in execution.moves.all()] == ["committed"]
    assert dbs_row(metastore, "crashy") is None and list(warehouse.glob(".catalog-admin-trash/crashy.db/*/f.txt"))


def _die_after_commit(execution: Execution, state: str, *args: object, **fields: object) -> None:
    if state == Execution.State.SUCCEEDED:
        raise ProcessDied("committed")

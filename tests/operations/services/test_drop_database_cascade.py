"""
``DROP DATABASE … CASCADE`` (issue 27) on every metastore: every table of the database goes with it in one statement
per metastore table (not a plan per table), the managed data to the console's trash (the database's directory and the
partition directories Hive would delete outside it), a DROP_TABLE per table then DROP_DATABASE; Hive's refusals block
it; the undrop puts back every row with its ids and every directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client
from django.urls import reverse

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import NotificationEvent, Partition, Table
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import CapturedRows, ChangeRequest, Execution
from operations.planners.databases import DatabasePlan, plan_database
from operations.services.alter import alter_preview_statement
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_revert,
    change_request_submit,
)
from operations.services.database import database_execute
from operations.services.database_kind import database_revert_plan
from tests.fixtures.operations import decode_event, execute, json_before_image, metastore_dump, warehouse_tree

pytestmark = pytest.mark.django_db


def plan(metastore: Metastore, statement: str) -> DatabasePlan:
    return plan_database(metastore, parse_alter(statement))  # type: ignore[arg-type]


def run(metastore: Metastore, planned: DatabasePlan) -> Execution:
    return database_execute(plan=planned, actor="steward", source="cli", reason="test")


def rows(metastore: Metastore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row but the notification log's and the id allocators' (the drop and its undrop add events)."""
    dump = metastore_dump(metastore.alias, events=False)
    return {table: found for table, found in dump.items() if table.upper() != "SEQUENCE_TABLE"}


def test_cascade_drops_every_table_set_based_and_the_undrop_restores_rows_and_data(
    metastore: Metastore, warehouse: Path
) -> None:
    """sales holds a partitioned managed table (two partitions outside the database's directory, one missing on disk),
    another managed table and a transactional one: one DELETE per metastore table removes all of them, the database's
    directory and the outside partitions go to the trash, DROP_TABLE × 3 then DROP_DATABASE are written; the undrop
    gives back exactly the rows and files there were."""
    # given
    before, tree = rows(metastore), warehouse_tree(warehouse)
    tables = Table.objects.using(metastore.alias).filter(database__name="sales")
    partitions = Partition.objects.using(metastore.alias).filter(table__database__name="sales").count()
    assert tables.count() == 3 and partitions == 12

    # when
    planned = plan(metastore, "DROP DATABASE sales CASCADE")
    dropped = run(metastore, planned)

    # then
    assert planned.blockers == ()
    assert [t.name for t in planned.tables] == ["customers", "orders", "payments_acid"]
    assert {t.data for t in planned.tables} == {"trash"}
    assert len({s.metastore_table for s in planned.steps}) == len(planned.steps)  # one statement per metastore table
    assert planned.rows["TBLS"]["delete"] == 3 and planned.rows["PARTITIONS"]["delete"] == 12
    assert {"database_dropped", "table_dropped", "data_moved", "partitions_dropped"} <= {
        c.name for c in planned.criteria
    }
    assert planned.risk == "high"
    trashed = [d for d in planned.directories if d.action == "trash"]
    assert [d.source.rsplit("/", 1)[-1] for d in trashed] == ["hour=0", "hour=3", "sales.db"]
    assert all("/.catalog-admin-trash/sales.db/" in d.destination for d in trashed)
    assert dropped.state == Execution.State.SUCCEEDED
    assert {t: c for t, c in dropped.actual_counts.items() if t != "DB_PRIVS"} == planned.rows
    assert not tables.exists() and not (warehouse / "sales.db").exists()
    if metastore.config.events:
        events = NotificationEvent.objects.using(metastore.alias).order_by("-pk")[:4]
        assert [(e.event_type, e.table_name) for e in reversed(events)][:3] == [
            ("DROP_TABLE", "customers"),
            ("DROP_TABLE", "orders"),
            ("DROP_TABLE", "payments_acid"),
        ]
        assert events[0].event_type == "DROP_DATABASE"

    # and when
    undrop = database_revert_plan(dropped)
    run(metastore, undrop)

    # then
    assert undrop.blockers == ()
    assert rows(metastore) == before
    assert warehouse_tree(warehouse) == tree
    if metastore.config.events:  # CREATE_DATABASE, then each table as its own undrop writes it
        events = NotificationEvent.objects.using(metastore.alias).order_by("-pk")[:5]
        assert [(e.event_type, e.table_name) for e in reversed(events)] == [
            ("CREATE_DATABASE", events[4].table_name),
            ("CREATE_TABLE", "customers"),
            ("CREATE_TABLE", "orders"),
            ("ADD_PARTITION", "orders"),
            ("CREATE_TABLE", "payments_acid"),
        ]


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("DROP DATABASE default CASCADE", "default_database"),
        ("DROP DATABASE ops CASCADE", "open_transactions"),
        ("DROP DATABASE nowhere CASCADE", "no_such_database"),
    ],
)
def test_hives_refusals_block_the_cascade_and_nothing_is_written(
    metastore: Metastore, statement: str, code: str
) -> None:
    """The default database, an open write to a table of the database (Hive's EXCLUSIVE locks would wait) and a
    missing database are refused, naming it; nothing is written."""
    # given
    before = metastore_dump(metastore.alias)
    refused = plan(metastore, statement)

    # when
    with pytest.raises(ApplicationError) as raised:
        run(metastore, refused)

    # then
    assert code in {b.code for b in refused.blockers}
    assert raised.value.code == "hive_rule_violation"
    assert metastore_dump(metastore.alias) == before


def test_if_exists_on_a_missing_database_is_a_noop(metastore: Metastore) -> None:
    planned = plan(metastore, "DROP DATABASE IF EXISTS nowhere CASCADE")

    assert planned.noop and planned.blockers == ()
    assert [w.code for w in planned.warnings] == ["absent_noop"]


def test_external_tables_keep_their_data_and_a_view_elsewhere_is_named(metastore: Metastore, warehouse: Path) -> None:
    """marketing holds two external tables (data outside the database's directory) and a view: their rows go, their
    data stays, the preview says so."""
    # given
    external = warehouse / "external" / "marketing"
    tree = warehouse_tree(external)

    # when
    planned = plan(metastore, "DROP DATABASE marketing CASCADE")
    run(metastore, planned)

    # then
    assert {t.name: t.data for t in planned.tables} == {
        "campaign_performance": "none",
        "campaigns": "kept",
        "clicks": "kept",
    }
    assert "external_data_kept" in {w.code for w in planned.warnings}
    assert not Table.objects.using(metastore.alias).filter(database__name="marketing").exists()
    assert warehouse_tree(external) == tree


def test_a_table_created_after_the_preview_refuses_the_drop(metastore: Metastore, warehouse: Path) -> None:
    """The plan binds the database's tables: one more since the preview, and nothing runs."""
    # given
    planned = plan(metastore, "DROP DATABASE marketing CASCADE")
    execute(alter_preview_statement(metastore=metastore, statement="CREATE TABLE marketing.late (id int)"))

    # when
    with pytest.raises(ApplicationError) as raised:
        run(metastore, planned)

    # then
    assert raised.value.code == "stale_preview"
    assert Table.objects.using(metastore.alias).filter(database__name="marketing").count() == 4


@pytest.mark.usefixtures("eager_jobs")
def test_a_cascade_request_needs_two_approvals_and_its_revert_undrops_everything(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Through the change flow: high risk, two approvals, run by the database job; the revert request brings the
    database and its tables back with their ids."""
    # given
    tables = Table.objects.using(metastore.alias).filter(database__name="marketing")
    ids = set(tables.values_list("pk", flat=True))
    spec = parse_alter("DROP DATABASE marketing CASCADE")
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec, reason="retired")

    # when
    dropped = _run(request, people, django_capture_on_commit_callbacks)
    gone = not Table.objects.using(metastore.alias).filter(pk__in=ids).exists()
    undrop = _run(change_request_revert(request=dropped, user=people["steward"], reason="undo"), people,
                  django_capture_on_commit_callbacks)  # fmt: skip

    # then
    dropped.refresh_from_db()
    assert (request.risk, request.required_approvals) == ("high", 2)
    assert gone and (dropped.state, undrop.state) == ("reverted", "succeeded")
    assert set(tables.values_list("pk", flat=True)) == ids


def test_the_request_page_lists_the_tables_dropped_with_the_database(
    metastore: Metastore, people: dict[str, User], client: Client
) -> None:
    # given
    spec = parse_alter("DROP DATABASE sales CASCADE")
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec)
    client.force_login(people["steward"])

    # when
    page = client.get(reverse("operations:detail", args=[request.pk]))

    # then
    html = page.content.decode()
    assert page.status_code == 200 and 'id="database-tables"' in html
    assert all(f'<td class="mono">{name}</td>' in html for name in ("customers", "orders", "payments_acid"))


def _run(request: ChangeRequest, people: dict[str, User], capture: Any) -> ChangeRequest:
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    with capture(execute=True):
        change_request_execute(request=request, user=people["steward"])
    request.refresh_from_db()
    return request


def test_the_cascades_deleted_rows_are_kept_in_captured_rows_not_in_the_json(metastore: Metastore) -> None:
    """The before-image's rows go to ``CapturedRows`` (compressed chunks, as an ALTER's), the JSON keeps their counts;
    the undrop reads them back."""
    # given
    before = rows(metastore)

    # when
    dropped = run(metastore, plan(metastore, "DROP DATABASE sales CASCADE"))

    # then
    stored = Execution.objects.get(pk=dropped.pk)
    assert "deleted_rows" not in stored.before_image
    assert stored.before_image["captured"]["deleted"]["TBLS"] == 3
    assert stored.before_image["captured"]["deleted"]["PARTITIONS"] == 12
    assert CapturedRows.objects.filter(execution=stored, metastore_table="PARTITIONS").exists()
    assert len(stored.captured_rows("deleted", "PARTITIONS")) == 12

    # and when
    run(metastore, database_revert_plan(stored))

    # then
    assert rows(metastore) == before


def test_an_older_cascade_with_its_rows_in_the_json_still_reverts(metastore: Metastore) -> None:
    """An execution recorded before the rows moved to ``CapturedRows`` kept them in its JSON (``deleted_rows``): its
    undrop still restores every row."""
    # given: a cascade whose before-image is rewritten as the older executions stored it
    before = rows(metastore)
    dropped = run(metastore, plan(metastore, "DROP DATABASE sales CASCADE"))
    image = json_before_image(dropped)
    del image["updated_rows"]
    CapturedRows.objects.filter(execution=dropped).delete()
    Execution.objects.filter(pk=dropped.pk).update(before_image=image)
    older = Execution.objects.get(pk=dropped.pk)
    assert "captured" not in older.before_image and len(older.before_image["deleted_rows"]["PARTITIONS"]) == 12

    # when
    undrop = database_revert_plan(older)
    run(metastore, undrop)

    # then
    assert undrop.blockers == ()
    assert rows(metastore) == before


def add_functions(metastore: Metastore, database: str) -> None:
    """Two functions of ``database`` as Hive's ``CREATE FUNCTION … USING JAR …, FILE …`` stores them: ``clean`` with
    two resource URIs, ``mask`` with none."""
    connection = connections[metastore.alias]
    q = connection.ops.quote_name
    with allow_metastore_writes(), connection.cursor() as cursor:
        cursor.execute(f"SELECT {q('DB_ID')} FROM {q('DBS')} WHERE {q('NAME')} = %s", [database])
        db_id = cursor.fetchone()[0]
        columns = ", ".join(q(c) for c in ("FUNC_ID", "CLASS_NAME", "CREATE_TIME", "DB_ID", "FUNC_NAME", "FUNC_TYPE",
                                             "OWNER_NAME", "OWNER_TYPE"))  # fmt: skip
        for row in ((9101, "com.example.Clean", 1700000000, db_id, "clean", 1, "alice", "USER"),
                    (9102, "com.example.Mask", 1700000001, db_id, "mask", 1, "admins", "ROLE")):  # fmt: skip
            cursor.execute(f"INSERT INTO {q('FUNCS')} ({columns}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", row)
        uris = ", ".join(q(c) for c in ("FUNC_ID", "RESOURCE_TYPE", "RESOURCE_URI", "INTEGER_IDX"))
        for row in ((9101, 1, "hdfs:///udf/clean.jar", 0), (9101, 2, "hdfs:///udf/words.txt", 1)):
            cursor.execute(f"INSERT INTO {q('FUNC_RU')} ({uris}) VALUES (%s, %s, %s, %s)", row)


def test_the_cascade_drops_the_databases_functions_with_hives_events_and_the_undrop_puts_them_back(
    metastore: Metastore,
) -> None:
    """A database with functions is no longer refused: its FUNCS and FUNC_RU rows go in two statements, a DROP_FUNCTION
    per function (``JSONDropFunctionMessage``) in Hive's order for the version (after the tables' DROP_TABLE on 2.3
    and 3.1, whose client drops the tables first; before them on 4.0), then DROP_DATABASE; the undrop puts the rows
    back with their ids and writes a CREATE_FUNCTION per function carrying the function's Thrift JSON."""
    if "FUNCS" not in {n.upper() for n in connections[metastore.alias].introspection.table_names()}:
        pytest.skip("this metastore's schema has no FUNCS")
    # given
    add_functions(metastore, "sales")
    before = rows(metastore)

    # when
    planned = plan(metastore, "DROP DATABASE sales CASCADE")
    dropped = run(metastore, planned)

    # then
    assert planned.blockers == ()
    assert planned.rows["FUNCS"]["delete"] == 2 and planned.rows["FUNC_RU"]["delete"] == 2
    assert "2 function(s)" in next(c.explanation for c in planned.criteria if c.name == "database_dropped")
    assert dropped.state == Execution.State.SUCCEEDED
    after = rows(metastore)
    assert not after.get("FUNCS") and not after.get("FUNC_RU")
    if metastore.config.events:
        events = list(NotificationEvent.objects.using(metastore.alias).order_by("-pk")[:6])[::-1]
        kinds = [e.event_type for e in events]
        functions_first = metastore.schema.version.major >= 4
        expected = (
            ["DROP_FUNCTION"] * 2 + ["DROP_TABLE"] * 3
            if functions_first
            else ["DROP_TABLE"] * 3 + ["DROP_FUNCTION"] * 2
        )
        assert kinds[-6:] == [*expected, "DROP_DATABASE"][-6:]
        dropped_functions = [e for e in events if e.event_type == "DROP_FUNCTION"]
        assert [decode_event(metastore, e)["functionName"] for e in dropped_functions] == ["clean", "mask"]
        assert {decode_event(metastore, e)["db"] for e in dropped_functions} == {"sales"}
        assert {e.db_name for e in dropped_functions} == {"sales"}

    # and when
    run(metastore, database_revert_plan(dropped))

    # then
    assert rows(metastore) == before
    if metastore.config.events:
        created = NotificationEvent.objects.using(metastore.alias).filter(event_type="CREATE_FUNCTION").order_by("pk")
        objects = [decode_event(metastore, e)["functionObjJson"] for e in created]
        assert len(objects) == 2
        assert '"1":{"str":"clean"}' in objects[0] and '"2":{"str":"sales"}' in objects[0]
        assert '"8":{"lst":["rec",2,{"1":{"i32":1},"2":{"str":"hdfs:///udf/clean.jar"}},' in objects[0]
        assert '"5":{"i32":2}' in objects[1] and '"8":{"lst":["rec",0]}' in objects[1]


def test_a_database_directory_with_many_partitions_is_sized_from_a_sample_and_still_moves_whole(
    metastore: Metastore, warehouse: Path, settings
) -> None:
    """Beyond CATALOG_DROP_SAMPLE_PARTITIONS partition directories inside the database's directory, its size is
    scaled from that many (as a DROP TABLE's), said "about" with the sample; counted in full, the same plan gives the
    exact size; either way the whole directory moves to the trash, every file with it."""
    # given
    exact = next(d for d in plan(metastore, "DROP DATABASE sales CASCADE").directories if d.source.endswith("sales.db"))
    settings.CATALOG_DROP_SAMPLE_PARTITIONS = 2
    tree = warehouse_tree(warehouse / "sales.db")

    # when
    planned = plan(metastore, "DROP DATABASE sales CASCADE")
    run(metastore, planned)

    # then
    database_dir = next(d for d in planned.directories if d.source.endswith("sales.db"))
    assert exact.sampled is None and exact.files == sum(1 for v in tree.values() if v != "dir")
    counted, found = database_dir.sampled or (0, 0)
    assert 1 <= counted <= 2 < found
    assert database_dir.as_dict()["sampled"] == [counted, found]
    assert "about " in next(c.explanation for c in planned.criteria if c.name == "data_moved")
    assert warehouse_tree(Path(database_dir.destination.removeprefix("file:"))) == tree

"""
Merge execution on real metastores: a seeded source's databases merged (renamed, relocated) into a fresh seeded
PostgreSQL target, then compared by name with the source; a failure before publishing leaves the target unchanged
and resumes; revert restores the target's dump; ids allocated on the target during the import never collide.
These tests commit into their own targets (``tests/fixtures/merge.py``), so they are not ``django_db`` tests.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connections, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.ids import allocate_ids
from catalog_admin.models import Partition, StorageDescriptor, Table
from operations.merge import execute as execute_module
from operations.merge.copy_plan import COPY_TABLES
from operations.merge.execute import merge_execute, merge_resume
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.revert import merge_revert, merge_revert_preview
from operations.models import AuditRecord, MergeImport
from operations.spark.programs import merge as program
from tests.fixtures.merge import database_dump, metastore_dump, rewritten_dump

pytestmark = [pytest.mark.matrix, pytest.mark.slow]

RENAMES = (("marketing", "marketing_imported"), ("sales", "sales_imported"))


def _warehouse(alias: str) -> str:
    return next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == alias)


def _request(source: str, target: str) -> MergeRequest:
    rule = parse_location_rule(f"{_warehouse(source)}={_warehouse(target)}/imported_from_{source}")
    return MergeRequest(
        source=source, target=target, databases=("marketing", "sales"), renames=RENAMES, location_rules=(rule,)
    )


def _expected(source: str, request: MergeRequest, database: str) -> dict[str, list[tuple]]:
    return rewritten_dump(source, database, [[r.old, r.new] for r in request.location_rules], dict(request.renames))


PAIRS = [
    pytest.param("hive23_pg", "2.3.0", "pg", id="pg23-to-pg23"),
    pytest.param("hive23_my", "3.1.0", "pg", id="mariadb23-to-pg31"),
    pytest.param("hive31_pg", "4.0.0", "pg", id="pg31-to-pg40"),
    pytest.param("hive31_pg", "3.1.0", "my", id="pg31-to-mariadb31"),
]


@pytest.mark.parametrize(("source", "version", "kind"), PAIRS)
def test_merge_imports_the_databases_as_the_source_has_them(source: str, version: str, kind: str, merge_target) -> None:
    """After the merge each renamed database's dump equals the source's (locations rewritten by the rule), ids lie
    in the journaled ranges, the target's own databases are untouched and Hive's allocators continue past them."""
    # given
    target = merge_target(version, kind)
    request = _request(source, target)
    own_sales = database_dump(target, "sales")
    events: list[dict] = []
    # when
    merge = merge_execute(request, merge_preview(request), report=events.append)
    # then
    assert merge.state == MergeImport.State.PUBLISHED
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected(source, request, old)
    assert database_dump(target, "sales") == own_sales
    tgt = MetastoreReader(target)
    low, high = merge.id_ranges["PARTITIONS"]
    partitions = tgt.scalar(
        'SELECT COUNT(*) FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" '
        'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" IN (%s, %s)',
        [new for _, new in RENAMES],
    )
    assert partitions == tgt.scalar('SELECT COUNT(*) FROM "PARTITIONS" WHERE "PART_ID" BETWEEN %s AND %s', [low, high])
    assert partitions > 0
    sequence = 'SELECT "NEXT_VAL" FROM "SEQUENCE_TABLE" WHERE "SEQUENCE_NAME" LIKE %s'
    assert tgt.scalar(sequence, ["%.MPartition"]) > high
    assert events[-1]["partitions_done"] == events[-1]["partitions_total"]
    if version != "2.3.0":  # the imported transactional table reads every write id the source committed
        assert _write_ids(target)[("sales_imported", "payments_acid")] == _source_next_write_id(source)
    for stats, key in (("TAB_COL_STATS", "TBL_ID"), ("PART_COL_STATS", "PART_ID")):
        if "DB_NAME" in tgt.columns(stats):  # 2.3/3.1 statistics name their database: the new name
            owner = "TBLS" if key == "TBL_ID" else "PARTITIONS"
            names = tgt.rows(f'SELECT DISTINCT "DB_NAME" FROM "{stats}" WHERE "{key}" BETWEEN %s AND %s',
                             merge.id_ranges[owner])  # fmt: skip
            assert {n for (n,) in names} == {new for _, new in RENAMES}


@pytest.mark.parametrize(("source", "version"), [("hive23_pg", "3.1.0"), ("hive31_pg", "4.0.0")])
def test_a_large_publish_checks_each_foreign_key_once_and_imports_the_same_rows(
    source: str, version: str, merge_target, settings, monkeypatch
) -> None:
    """Past ``CATALOG_BATCHED_FOREIGN_KEY_ROWS`` a PostgreSQL publish skips the per-row foreign-key triggers and
    checks each key once after its rows (``batched_insert_checks``): the databases arrive exactly as the source has
    them, and the target's session is back to its own role."""
    # given
    settings.CATALOG_BATCHED_FOREIGN_KEY_ROWS = 1
    used: list[bool] = []
    real = execute_module.batched_insert_checks

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - a spy
        found = real(*args, **kwargs)
        used.append(found is not None)
        return found

    monkeypatch.setattr(execute_module, "batched_insert_checks", spy)
    target = merge_target(version)
    request = _request(source, target)
    events: list[dict] = []
    # when
    merge = merge_execute(request, merge_preview(request), report=events.append)
    # then
    assert merge.state == MergeImport.State.PUBLISHED
    assert used == [True]
    assert any(str(e.get("message", "")).startswith("Foreign keys: ") for e in events)
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected(source, request, old)
    with connections[target].cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"


def _write_ids(alias: str) -> dict[tuple[str, str], int]:
    reader = MetastoreReader(alias)
    columns = ", ".join(reader.column("NEXT_WRITE_ID", c) for c in ("NWI_DATABASE", "NWI_TABLE", "NWI_NEXT"))
    return {(d, t): n for d, t, n in reader.raw_rows(f"SELECT {columns} FROM {reader.table('NEXT_WRITE_ID')}")}


def _source_next_write_id(source: str) -> int:
    """sales.payments_acid's next write id in the source; from 2.3 (transaction ids name its deltas) NEXT_TXN_ID."""
    reader = MetastoreReader(source)
    if reader.has_table("NEXT_WRITE_ID"):
        return _write_ids(source)[("sales", "payments_acid")]
    column, table = reader.column("NEXT_TXN_ID", "NTXN_NEXT"), reader.table("NEXT_TXN_ID")
    return reader.raw_rows(f"SELECT {column} FROM {table}")[0][0]


def test_a_changed_plan_is_refused(merge_target) -> None:
    """A preview approved before the request changed is stale: nothing is reserved, nothing written."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive23_pg", target)
    approved = merge_preview(MergeRequest(source="hive23_pg", target=target, databases=("sales",),
                                          renames=(("sales", "sales_imported"),)))  # fmt: skip
    before = metastore_dump(target, skip=())
    # when
    with pytest.raises(ApplicationError) as raised:
        merge_execute(request, approved)
    # then
    assert raised.value.code == ErrorCode.STALE_PREVIEW
    assert metastore_dump(target, skip=()) == before


def test_a_failure_before_publishing_leaves_the_target_unchanged_and_resumes(merge_target, monkeypatch) -> None:
    """A crash in the publishing transaction (after every invisible unit committed) leaves no database, table or
    partition visible: the dump of everything Hive reads is as before; resume then publishes all of it."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive31_pg", target)
    invisible = ("SEQUENCE_TABLE", *COPY_TABLES)  # written before publishing, reachable from no DBS/TBLS row
    before = metastore_dump(target, skip=invisible)

    def crash(name: str) -> None:
        if name == "merge.before_publish_commit":
            raise RuntimeError("injected crash")

    monkeypatch.setattr(program, "fault_point", crash)
    # when
    with pytest.raises(RuntimeError, match="injected crash"):
        merge_execute(request, merge_preview(request))
    # then
    merge = MergeImport.objects.get(target=target)
    assert merge.state == MergeImport.State.FAILED and "injected crash" in merge.error
    assert merge.completed  # the invisible units are journaled
    assert metastore_dump(target, skip=invisible) == before
    # when
    monkeypatch.undo()
    merge_resume(merge)
    # then
    merge.refresh_from_db()
    assert merge.state == MergeImport.State.PUBLISHED
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected("hive31_pg", request, old)


def test_revert_restores_the_target(merge_target) -> None:
    """Revert deletes exactly the imported rows: every table of the target is as before (SEQUENCE_TABLE keeps the
    reservation consumed)."""
    # given
    target = merge_target("4.0.0")
    request = _request("hive31_pg", target)
    before = metastore_dump(target)
    merge = merge_execute(request, merge_preview(request))
    assert metastore_dump(target) != before
    # when
    merge_revert(merge)
    # then
    assert metastore_dump(target) == before
    assert MergeImport.objects.get(pk=merge.pk).state == MergeImport.State.REVERTED


def test_a_revert_stopped_after_its_transaction_finishes_exactly_when_run_again(merge_target, monkeypatch) -> None:
    """A revert whose process stops after its transaction committed, before the journal says so (the merge still
    published): run again, it deletes nothing more, writes no second DROP event, and the merge ends reverted."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive31_pg", target)
    before = metastore_dump(target)
    merge = merge_execute(request, merge_preview(request))
    save = MergeImport.save

    def stopping(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if self.state == MergeImport.State.REVERTED:
            raise SystemExit("stopped after the revert's transaction")
        return save(self, *args, **kwargs)

    monkeypatch.setattr(MergeImport, "save", stopping)
    with pytest.raises(SystemExit):
        merge_revert(MergeImport.objects.get(pk=merge.pk))
    monkeypatch.setattr(MergeImport, "save", save)
    events = MetastoreReader(target).scalar('SELECT COUNT(*) FROM "NOTIFICATION_LOG"')
    assert MergeImport.objects.get(pk=merge.pk).state == MergeImport.State.PUBLISHED
    # when
    merge_revert(MergeImport.objects.get(pk=merge.pk))
    # then
    assert metastore_dump(target) == before
    assert MetastoreReader(target).scalar('SELECT COUNT(*) FROM "NOTIFICATION_LOG"') == events
    assert MergeImport.objects.get(pk=merge.pk).state == MergeImport.State.REVERTED


def _hive_clones(alias: str, table: str, id_column: str, old_id: int, **overrides: object) -> int:
    """What a Hive client does on a metastore: a new ``table`` row (a copy of ``old_id`` with ``overrides``) whose id
    comes from its allocator (``allocate_ids``), committed on the metastore's own Django connection."""
    models = {"TBLS": Table, "SDS": StorageDescriptor, "PARTITIONS": Partition}
    reader = MetastoreReader(alias)
    with allow_metastore_writes(), transaction.atomic(using=alias):
        new_id = allocate_ids(alias, models[table], 1)
        columns = [c for c in reader.columns(table) if c != id_column]
        names = ", ".join(f'"{c}"' for c in columns)
        values = ", ".join(["%s" if c in overrides else f'"{c}"' for c in columns])
        sql = f'INSERT INTO "{table}" ("{id_column}", {names}) SELECT %s, {values} FROM "{table}" WHERE "{id_column}" '
        sql += "= %s"
        params = [new_id, *(overrides[c] for c in columns if c in overrides), old_id]
        with connections[alias].cursor() as cursor:
            cursor.execute(sql, params)
    return new_id


def _table_ids(alias: str, database: str, table: str) -> tuple[int, int]:
    sql = (
        'SELECT t."TBL_ID", t."SD_ID" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'WHERE d."NAME" = %s AND t."TBL_NAME" = %s'
    )
    return MetastoreReader(alias).rows(sql, [database, table])[0]


def test_ids_allocated_on_the_target_during_the_import_never_collide(merge_target, monkeypatch) -> None:
    """A Hive client creating a table on the target between reserve and publish gets ids outside the reserved
    ranges; both its table and the imported ones are intact afterwards, and later allocations land past the ranges."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive23_pg", target)
    orders_id, orders_sd = _table_ids(target, "sales", "orders")
    created: dict[str, int] = {}

    def hive_creates_a_table(name: str) -> None:
        if name == "merge.unit_copied" and not created:
            created["SDS"] = _hive_clones(target, "SDS", "SD_ID", orders_sd)
            created["TBLS"] = _hive_clones(target, "TBLS", "TBL_ID", orders_id, TBL_NAME="created_meanwhile",
                                           SD_ID=created["SDS"])  # fmt: skip

    monkeypatch.setattr(program, "fault_point", hive_creates_a_table)
    # when
    merge = merge_execute(request, merge_preview(request))
    # then
    assert created and merge.state == MergeImport.State.PUBLISHED
    for table, new_id in created.items():
        low, high = merge.id_ranges[table]
        assert not low <= new_id <= high
    assert _table_ids(target, "sales", "created_meanwhile") == (created["TBLS"], created["SDS"])
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected("hive23_pg", request, old)
    later = _hive_clones(target, "TBLS", "TBL_ID", orders_id, TBL_NAME="created_after", SD_ID=created["SDS"])
    assert later > merge.id_ranges["TBLS"][1]


def test_a_partition_hive_adds_to_the_source_during_the_import_stays_behind(merge_target, monkeypatch) -> None:
    """The import carries the rows the approved preview counted: a partition a Hive client adds to an imported table
    of the source while the storage rows are copied has an id no range was reserved for, so it is not written, and
    every imported id lies in its reserved range."""
    # given
    target = merge_target("3.1.0")
    source = "hive31_pg"
    request = _request(source, target)
    expected = {new: _expected(source, request, old) for old, new in RENAMES}
    part_id = MetastoreReader(source).rows(
        'SELECT MIN(p."PART_ID") FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" '
        'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" = \'sales\''
    )[0][0]
    added: list[int] = []

    def hive_adds_a_partition(name: str) -> None:
        if name == "merge.unit_copied" and not added:
            added.append(_hive_clones(source, "PARTITIONS", "PART_ID", part_id, PART_NAME="dt=2099-01-01/hour=0"))

    monkeypatch.setattr(program, "fault_point", hive_adds_a_partition)
    try:
        # when
        merge = merge_execute(request, merge_preview(request))
        # then
        assert added and merge.state == MergeImport.State.PUBLISHED
        for new in expected:
            assert database_dump(target, new) == expected[new]
        for table, column in (("PARTITIONS", "PART_ID"), ("SDS", "SD_ID"), ("PART_COL_STATS", "CS_ID")):
            outside = f'SELECT COUNT(*) FROM "{table}" WHERE "{column}" > %s'
            assert MetastoreReader(target).scalar(outside, [merge.id_ranges[table][1]]) == 0, table
    finally:
        with allow_metastore_writes(), connections[source].cursor() as cursor:
            cursor.execute('DELETE FROM "PARTITIONS" WHERE "PART_ID" = ANY(%s)', [added])


def test_revert_refuses_rows_hive_attached_unless_included(merge_target) -> None:
    """A partition Hive added to an imported table (its TBL_ID imported, its own ids not) makes revert refuse, naming
    it; the revert preview counts it; with include_hive_rows it goes too and the target is as before."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive31_pg", target)
    before = metastore_dump(target)
    merge = merge_execute(request, merge_preview(request))
    table_id, _ = _table_ids(target, "sales_imported", "orders")
    part_id, part_sd = MetastoreReader(target).rows(
        'SELECT "PART_ID", "SD_ID" FROM "PARTITIONS" WHERE "TBL_ID" = %s ORDER BY "PART_ID"', [table_id]
    )[0]
    sd_id = _hive_clones(target, "SDS", "SD_ID", part_sd, LOCATION="file:/tmp/hive-added")
    _hive_clones(target, "PARTITIONS", "PART_ID", part_id, PART_NAME="dt=2099-01-01", SD_ID=sd_id)
    # when
    preview = merge_revert_preview(merge)
    with pytest.raises(ApplicationError) as raised:
        merge_revert(merge)
    # then
    assert dict(preview.hive_rows) == {"PARTITIONS": 1, "SDS": 1}
    assert preview.rows_of("PARTITIONS") == merge.id_ranges["PARTITIONS"][1] - merge.id_ranges["PARTITIONS"][0] + 1
    assert raised.value.code == ErrorCode.INVALID_STATE and "1 PARTITIONS" in raised.value.message
    assert MergeImport.objects.get(pk=merge.pk).state == MergeImport.State.PUBLISHED
    # when
    merge_revert(merge, include_hive_rows=True)
    # then
    assert metastore_dump(target) == before


def test_revert_deletes_the_write_ids_it_carried_and_refuses_writes_hive_made_since(merge_target) -> None:
    """The imported transactional table's NEXT_WRITE_ID row goes with it on revert; a write id Hive allocated on it
    since (a TXN_TO_WRITE_ID row) makes revert refuse, naming it, unless included."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive31_pg", target)
    before = metastore_dump(target)
    merge = merge_execute(request, merge_preview(request))
    tgt = MetastoreReader(target)
    with allow_metastore_writes(), transaction.atomic(using=target), connections[target].cursor() as cursor:
        row = "(9999, 'sales_imported', 'payments_acid', 3)"
        cursor.execute(f"INSERT INTO {tgt.table('TXN_TO_WRITE_ID')} VALUES {row}")
    # when
    preview = merge_revert_preview(merge)
    with pytest.raises(ApplicationError) as raised:
        merge_revert(merge)
    # then
    assert preview.rows_of("NEXT_WRITE_ID") == 1
    assert dict(preview.hive_rows) == {"TXN_TO_WRITE_ID": 1}
    assert "1 TXN_TO_WRITE_ID" in raised.value.message
    # when
    merge_revert(merge, include_hive_rows=True)
    # then
    assert metastore_dump(target) == before


def test_rows_not_carried_yet_are_refused_before_anything_is_reserved(merge_target) -> None:
    """A source database holding skewed values (SKEWED_STRING_LIST is not carried yet) is refused with the table
    named; the target's allocators and rows are untouched and no journal row is left."""
    # given
    source, target = merge_target("3.1.0"), merge_target("4.0.0")
    _table_id, sd_id = _table_ids(source, "sales", "orders")
    with allow_metastore_writes(), transaction.atomic(using=source), connections[source].cursor() as cursor:
        cursor.execute('INSERT INTO "SKEWED_STRING_LIST" ("STRING_LIST_ID") VALUES (9001)')
        cursor.execute(
            'INSERT INTO "SKEWED_VALUES" ("SD_ID_OID", "STRING_LIST_ID_EID", "INTEGER_IDX") VALUES (%s, 9001, 0)',
            [sd_id],
        )
    request = MergeRequest(source=source, target=target, databases=("sales",), renames=(("sales", "sales_imported"),))
    before = metastore_dump(target, skip=())
    # when
    with pytest.raises(ApplicationError) as raised:
        merge_execute(request, merge_preview(request))
    # then
    assert raised.value.code == ErrorCode.INVALID_PARAMETER and "SKEWED_VALUES" in raised.value.message
    assert metastore_dump(target, skip=()) == before
    assert not MergeImport.objects.filter(target=target).exists()


def test_constraints_arrive_on_their_imported_tables_and_revert_removes_them(merge_target) -> None:
    """A primary key of sales.orders and a foreign key from sales.orders to sales.customers arrive with the tables
    (their table ids shifted, names kept) and go with them on revert."""
    # given
    source, target = merge_target("3.1.0"), merge_target("4.0.0")
    orders, _ = _table_ids(source, "sales", "orders")
    customers, _ = _table_ids(source, "sales", "customers")
    insert = (
        'INSERT INTO "KEY_CONSTRAINTS" ("CONSTRAINT_NAME", "POSITION", "PARENT_TBL_ID", "PARENT_INTEGER_IDX", '
        '"CHILD_TBL_ID", "CHILD_INTEGER_IDX", "CONSTRAINT_TYPE", "ENABLE_VALIDATE_RELY") VALUES (%s, 1, %s, 0, %s, %s, '
        "%s, 0)"
    )
    with allow_metastore_writes(), transaction.atomic(using=source), connections[source].cursor() as cursor:
        cursor.execute(insert, ["orders_pk", orders, None, None, 0])
        cursor.execute(insert, ["orders_customer_fk", customers, orders, 1, 1])
    request = MergeRequest(source=source, target=target, databases=("sales",), renames=(("sales", "sales_imported"),))
    before = metastore_dump(target)
    # when
    merge = merge_execute(request, merge_preview(request))
    # then
    new_orders, _ = _table_ids(target, "sales_imported", "orders")
    new_customers, _ = _table_ids(target, "sales_imported", "customers")
    arrived = MetastoreReader(target).rows(
        'SELECT "CONSTRAINT_NAME", "PARENT_TBL_ID", "CHILD_TBL_ID" FROM "KEY_CONSTRAINTS" ORDER BY 1'
    )
    assert arrived == [("orders_customer_fk", new_customers, new_orders), ("orders_pk", new_orders, None)]
    # when
    merge_revert(merge)
    # then
    assert metastore_dump(target) == before


def _stopped_import(target: str, monkeypatch) -> tuple[MergeRequest, MergeImport]:  # noqa: ANN001
    """An import into ``target`` that failed in its publishing transaction (invisible rows journaled)."""
    request = _request("hive31_pg", target)

    def crash(name: str) -> None:
        if name == "merge.before_publish_commit":
            raise RuntimeError("injected crash")

    monkeypatch.setattr(program, "fault_point", crash)
    with pytest.raises(RuntimeError, match="injected crash"):
        merge_execute(request, merge_preview(request))
    monkeypatch.undo()
    return request, MergeImport.objects.get(target=target)


def test_a_stopped_import_blocks_another_merge_until_the_command_resumes_it(merge_target, monkeypatch) -> None:
    """While an import stopped before publishing, the same merge is blocked (unfinished_merge, naming it);
    ``merge_metastore --resume ID --reason R`` publishes it, audited, and the block is gone."""
    # given
    target = merge_target("3.1.0")
    request, merge = _stopped_import(target, monkeypatch)
    # when
    blocked = merge_preview(request)
    # then
    assert [b.code for b in blocked.blockers] == ["unfinished_merge"]
    assert f"--resume {merge.pk}" in blocked.blockers[0].message
    # when
    out = StringIO()
    call_command("merge_metastore", "--resume", str(merge.pk), "--reason", "finish it", stdout=out)
    # then
    merge.refresh_from_db()
    assert merge.state == MergeImport.State.PUBLISHED
    assert f"Merge import #{merge.pk} is published" in out.getvalue()
    record = AuditRecord.objects.get(action="resume_merge")
    assert (record.outcome, record.details["reason"]) == ("published", "finish it")
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected("hive31_pg", request, old)
    assert not [b for b in merge_preview(request).blockers if b.code == "unfinished_merge"]


def test_the_command_reverts_a_stopped_import_and_needs_a_reason(merge_target, monkeypatch) -> None:
    """``--revert-import ID`` without a reason is refused (nothing changes); with one it deletes the invisible rows:
    the target is as before the import, and the journal says reverted."""
    # given
    target = merge_target("3.1.0")
    before = metastore_dump(target)
    _request_, merge = _stopped_import(target, monkeypatch)
    # when
    with pytest.raises(CommandError, match="needs --reason"):
        call_command("merge_metastore", "--revert-import", str(merge.pk), stdout=StringIO())
    call_command("merge_metastore", "--revert-import", str(merge.pk), "--reason", "abandon", stdout=StringIO())
    # then
    merge.refresh_from_db()
    assert merge.state == MergeImport.State.REVERTED
    assert metastore_dump(target) == before
    assert AuditRecord.objects.filter(action="revert_merge_import", outcome="reverted").count() == 1


def test_hostile_input_is_refused_and_nothing_is_written(merge_target) -> None:
    """A source table named 'x/y' and a partition located with '..' block the preview; executing that blocked preview
    is refused naming the offence, and the target's allocators and rows are untouched, no journal row left."""
    # given
    source, target = merge_target("3.1.0"), merge_target("4.0.0")
    table_id, _sd_id = _table_ids(source, "sales", "customers")
    orders, _ = _table_ids(source, "sales", "orders")
    with allow_metastore_writes(), transaction.atomic(using=source), connections[source].cursor() as cursor:
        cursor.execute('UPDATE "TBLS" SET "TBL_NAME" = %s WHERE "TBL_ID" = %s', ["x/y", table_id])
        cursor.execute(
            'UPDATE "SDS" SET "LOCATION" = "LOCATION" || %s WHERE "SD_ID" = '
            '(SELECT MIN("SD_ID") FROM "PARTITIONS" WHERE "TBL_ID" = %s)',
            ["/../../../../etc", orders],
        )
    request = _request(source, target)
    preview = merge_preview(request)
    before = metastore_dump(target, skip=())
    # when
    with pytest.raises(ApplicationError) as raised:
        merge_execute(request, preview)
    # then
    assert {b.code for b in preview.blockers} == {"unsafe_name", "unsafe_location"}
    assert raised.value.code == ErrorCode.HIVE_RULE_VIOLATION  # the one "plan is blocked" refusal (rules.blocked_error)
    assert any("'x/y'" in blocker["message"] for blocker in raised.value.details["blockers"])
    assert metastore_dump(target, skip=()) == before
    assert not MergeImport.objects.filter(target=target).exists()

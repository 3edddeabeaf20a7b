"""
The merge preview on the real seeded metastores: counts equal to independent counts through the ORM, id ranges from
the target's allocator state, name and location conflicts, an older target, open transactions, version conversions.
Every seeded metastore holds the databases default, sales, marketing and ops, so a plain merge is blocked.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connections
from django.db.models import Max, Min, QuerySet

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import (
    Column,
    ColumnDescriptor,
    Database,
    Partition,
    PartitionColumnStatistics,
    PartitionKey,
    PartitionKeyValue,
    PartitionParam,
    Sequence,
    SerDe,
    SerDeParam,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TableParam,
)
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest, parse_location_rule

pytestmark = [pytest.mark.django_db, pytest.mark.matrix]

CHOSEN = ("sales", "marketing")  # ops holds an open transaction in every seeded metastore
RENAMES = (("sales", "sales_imported"), ("marketing", "marketing_imported"))


def _warehouse(alias: str) -> str:
    return next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == alias)


def _unblocked(source: str, target: str) -> MergeRequest:
    """Renames that avoid the target's names, and a rule moving the source's warehouse to a fresh folder."""
    rule = parse_location_rule(f"{_warehouse(source)}={_warehouse(target)}/imported_from_{source}")
    return MergeRequest(source=source, target=target, databases=CHOSEN, renames=RENAMES, location_rules=(rule,))


def _independent_counts(alias: str, names: tuple[str, ...]) -> dict[str, int]:
    """Row counts of the chosen databases through the ORM's joins (not the preview's subqueries)."""
    tables = Table.objects.using(alias).filter(database__name__in=names)
    partitions = Partition.objects.using(alias).filter(table__database__name__in=names)
    sd_ids = set(tables.values_list("sd_id", flat=True)) | set(partitions.values_list("sd_id", flat=True))
    sds = StorageDescriptor.objects.using(alias).filter(pk__in=sd_ids)
    serde_ids = set(sds.values_list("serde_id", flat=True))
    cd_ids = set(sds.values_list("cd_id", flat=True))
    return {
        "DBS": Database.objects.using(alias).filter(name__in=names).count(),
        "TBLS": tables.count(),
        "TABLE_PARAMS": TableParam.objects.using(alias).filter(table__database__name__in=names).count(),
        "PARTITION_KEYS": PartitionKey.objects.using(alias).filter(table__database__name__in=names).count(),
        "PARTITIONS": partitions.count(),
        "PARTITION_KEY_VALS": PartitionKeyValue.objects.using(alias)
        .filter(partition__table__database__name__in=names)
        .count(),
        "PARTITION_PARAMS": PartitionParam.objects.using(alias)
        .filter(partition__table__database__name__in=names)
        .count(),
        "SDS": sds.count(),
        "SERDES": SerDe.objects.using(alias).filter(pk__in=serde_ids).count(),
        "SERDE_PARAMS": SerDeParam.objects.using(alias).filter(serde_id__in=serde_ids).count(),
        "CDS": ColumnDescriptor.objects.using(alias).filter(pk__in=cd_ids).count(),
        "COLUMNS_V2": Column.objects.using(alias).filter(cd_id__in=cd_ids).count(),
        "TAB_COL_STATS": TableColumnStatistics.objects.using(alias)
        .filter(table__database__name__in=names)
        .only("pk")
        .count(),
        "PART_COL_STATS": PartitionColumnStatistics.objects.using(alias)
        .filter(partition__table__database__name__in=names)
        .only("pk")
        .count(),
    }


PAIRS = [
    pytest.param("hive23_pg", "hive31_pg", id="pg23-to-pg31"),
    pytest.param("hive31_pg", "hive40_pg", id="pg31-to-pg40"),
    pytest.param("hive31_my", "hive40_pg", id="mariadb31-to-pg40"),
    pytest.param("hive23_my", "hive31_pg", id="mariadb23-to-pg31"),
]


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_counts_equal_independent_counts_and_renames_unblock(source: str, target: str) -> None:
    """With renames and a location rule into a fresh folder the merge is executable, and every table's row count
    equals an independent count of the chosen databases (and is not the whole metastore's)."""
    # when
    preview = merge_preview(_unblocked(source, target))
    # then
    assert preview.blockers == ()
    expected = _independent_counts(source, CHOSEN)
    assert {t: preview.rows_of(t) for t in expected} == expected
    assert expected["PARTITIONS"] > 0 and expected["PART_COL_STATS"] > 0
    assert preview.rows_of("TBLS") < Table.objects.using(source).count()  # scoped, not everything
    assert {d.name: d.new_name for d in preview.databases} == dict(RENAMES)


@pytest.mark.parametrize(("source", "target"), PAIRS[:2])
def test_id_ranges_start_at_the_targets_next_ids(source: str, target: str) -> None:
    """Each id range starts past the target's highest id and its SEQUENCE_TABLE NEXT_VAL, and spans the row count."""
    # given
    preview = merge_preview(_unblocked(source, target))
    for model, table in ((Table, "TBLS"), (Partition, "PARTITIONS"), (StorageDescriptor, "SDS")):
        row = next(t for t in preview.tables if t.table == table)
        used = (model.objects.using(target).aggregate(top=Max("pk"))["top"] or 0) + 1
        sequence = Sequence.objects.using(target).filter(name=row.sequence).first()
        # then
        assert row.first_id == max(used, sequence.next_val if sequence else 1)
        assert row.last_id == row.first_id + row.rows - 1


@pytest.mark.parametrize(("source", "target"), PAIRS[:2])
def test_key_spans_equal_independent_spans(source: str, target: str) -> None:
    """The source spans the preview binds (what the execution reserves ids for and cuts units from) are the lowest
    and highest keys of the chosen databases' rows, read through the ORM's joins."""
    # given
    partitions = Partition.objects.using(source).filter(table__database__name__in=CHOSEN)
    statistics = PartitionColumnStatistics.objects.using(source).filter(partition__in=partitions)
    # when
    preview = merge_preview(_unblocked(source, target))
    spans = {t.table: (t.source_ids, t.source_keys) for t in preview.tables}
    # then
    assert spans["PARTITIONS"] == (_span(partitions, "pk"), _span(partitions, "table_id"))
    assert spans["PART_COL_STATS"] == (_span(statistics, "pk"), _span(statistics, "partition_id"))
    assert spans["PARTITION_KEY_VALS"][0] is None  # keyed by its partition: no ids of its own
    assert spans["PARTITIONS"][0] != _span(Partition.objects.using(source), "pk")  # scoped, not everything


def _span(rows: QuerySet, field: str) -> tuple[int, int]:
    found = rows.aggregate(low=Min(field), high=Max(field))
    return found["low"], found["high"]


def test_a_preview_reserves_nothing() -> None:
    """The target's SEQUENCE_TABLE is the same after a preview (a pure read)."""
    # given
    before = list(Sequence.objects.using("hive31_pg").order_by("name").values_list("name", "next_val"))
    # when
    merge_preview(_unblocked("hive23_pg", "hive31_pg"))
    # then
    assert list(Sequence.objects.using("hive31_pg").order_by("name").values_list("name", "next_val")) == before


def test_a_plain_merge_is_blocked_by_the_shared_names() -> None:
    """Without renames every seeded database and its tables exist in the target; the rename unblocks them."""
    # when
    plain = merge_preview(MergeRequest(source="hive23_pg", target="hive31_pg", databases=CHOSEN))
    renamed = merge_preview(MergeRequest(source="hive23_pg", target="hive31_pg", databases=CHOSEN, renames=RENAMES))
    # then
    codes = {(b.code, b.subject) for b in plain.blockers}
    assert {("database_exists", "sales"), ("database_exists", "marketing"), ("table_exists", "sales.orders")} <= codes
    assert "--rename sales=NEW" in next(b.message for b in plain.blockers if b.subject == "sales")
    assert not [b for b in renamed.blockers if b.code in ("database_exists", "table_exists")]


def test_a_location_rule_onto_the_targets_tables_is_blocked() -> None:
    """Mapping the source's warehouse onto the target's puts sales_imported.orders where the target's sales.orders
    lives: an overlap; the database's location then contains the target's tables too."""
    # given
    rule = parse_location_rule(f"{_warehouse('hive23_pg')}={_warehouse('hive31_pg')}")
    request = MergeRequest(
        source="hive23_pg", target="hive31_pg", databases=CHOSEN, renames=RENAMES, location_rules=(rule,)
    )
    # when
    preview = merge_preview(request)
    # then
    overlaps = {b.subject for b in preview.blockers if b.code == "location_overlap"}
    assert {"sales_imported.orders", "database sales_imported"} <= overlaps
    assert f"{_warehouse('hive31_pg')}/sales.db/orders" in next(
        b.message for b in preview.blockers if b.subject == "sales_imported.orders"
    )
    assert {d.new_location for d in preview.databases} == {
        f"{_warehouse('hive31_pg')}/sales.db",
        f"{_warehouse('hive31_pg')}/marketing.db",
    }


def test_an_older_target_is_blocked() -> None:
    """A 4.0 source into a 3.1 target is blocked, naming both versions."""
    # when
    preview = merge_preview(MergeRequest(source="hive40_pg", target="hive31_pg", databases=CHOSEN, renames=RENAMES))
    # then
    blocker = next(b for b in preview.blockers if b.code == "target_older")
    assert "3.1.0" in blocker.message and "4.0.0" in blocker.message
    assert not preview.is_executable


def test_open_transactions_and_aborted_writes_block_their_database() -> None:
    """The seeded ops.job_runs_acid has an open and an aborted transaction: merging ops is blocked, once for each, and
    the blocks name the table."""
    # when
    preview = merge_preview(
        MergeRequest(source="hive31_pg", target="hive40_pg", databases=("ops",), renames=(("ops", "ops2"),))
    )
    # then
    assert [(b.code, b.subject) for b in preview.blockers] == [
        ("open_transactions", "ops.job_runs_acid"),
        ("aborted_writes", "ops.job_runs_acid"),
    ]


def test_transactional_tables_carry_their_write_ids_unless_the_target_holds_some_for_the_name() -> None:
    """sales.payments_acid is transactional: the preview counts its NEXT_WRITE_ID row; from 2.3 the row starts at the
    source's NEXT_TXN_ID (a conversion says so); a NEXT_WRITE_ID row the target already holds for the arriving name
    blocks the merge."""
    # given
    request = MergeRequest(source="hive31_pg", target="hive40_pg", databases=("sales",), renames=(("sales", "s2"),))
    from_23 = MergeRequest(source="hive23_pg", target="hive40_pg", databases=("sales",), renames=(("sales", "s2"),))
    # when
    preview, older = merge_preview(request), merge_preview(from_23)
    # then
    assert preview.rows_of("NEXT_WRITE_ID") == older.rows_of("NEXT_WRITE_ID") == 1
    assert preview.is_executable
    assert ("NEXT_WRITE_ID", "NWI_NEXT", "filled") in {(c.table, c.column, c.action) for c in older.conversions}
    assert "NEXT_WRITE_ID" not in {c.table for c in preview.conversions}
    # given
    tgt = MetastoreReader("hive40_pg")
    with allow_metastore_writes(), connections["hive40_pg"].cursor() as cursor:
        cursor.execute(f"INSERT INTO {tgt.table('NEXT_WRITE_ID')} VALUES ('s2', 'payments_acid', 7)")
    # when
    blocked = merge_preview(request)
    # then
    assert [(b.code, b.subject) for b in blocked.blockers] == [("write_ids_exist", "s2.payments_acid")]


def test_conversions_from_23_to_31_and_from_31_to_40() -> None:
    """2.3 → 3.1 fills catalogs (CTLGS, DBS.CTLG_NAME, the statistics' CAT_NAME); 3.1 → 4.0 fills the statistics'
    ENGINE and drops the names 4.0 no longer keeps in them."""
    # when
    to_31 = {(c.table, c.column, c.action) for c in merge_preview(_unblocked("hive23_pg", "hive31_pg")).conversions}
    to_40 = {(c.table, c.column, c.action) for c in merge_preview(_unblocked("hive31_pg", "hive40_pg")).conversions}
    # then
    assert {("CTLGS", "*", "filled"), ("DBS", "CTLG_NAME", "filled"), ("TAB_COL_STATS", "CAT_NAME", "filled")} <= to_31
    assert {("TAB_COL_STATS", "ENGINE", "filled"), ("PART_COL_STATS", "ENGINE", "filled")} <= to_40
    assert ("PART_COL_STATS", "DB_NAME", "dropped") in to_40
    assert not [c for c in to_31 if c[2] == "dropped"]


def test_not_carried_tables_are_counted_with_their_reason() -> None:
    """ROLES, MASTER_KEYS, the notification log and the transaction bookkeeping are listed with the source's rows."""
    # given
    preview = merge_preview(_unblocked("hive31_pg", "hive40_pg"))
    with connections["hive31_pg"].cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM txns")
        open_and_done = cursor.fetchone()[0]
    # then
    by_table = {n.table: n for n in preview.not_carried}
    assert {"ROLES", "GLOBAL_PRIVS", "DELEGATION_TOKENS", "MASTER_KEYS", "NOTIFICATION_LOG", "TXNS"} <= set(by_table)
    assert by_table["TXNS"].rows == open_and_done > 0
    assert "master keys" in by_table["DELEGATION_TOKENS"].reason


def test_the_fingerprint_binds_the_plan_not_the_targets_next_ids() -> None:
    """The same request gives the same fingerprint; another rename gives another; a new target table (which moves the
    target's next ids) does not change it."""
    # given
    first = merge_preview(_unblocked("hive23_pg", "hive31_pg"))
    other = merge_preview(
        MergeRequest(
            source="hive23_pg", target="hive31_pg", databases=CHOSEN, renames=(("sales", "s2"), ("marketing", "m2"))
        )
    )
    with allow_metastore_writes():  # Hive allocating on the live target (rolled back after the test)
        Sequence.objects.using("hive31_pg").filter(name__endswith="MTable").update(next_val=10_000)
    # when
    again = merge_preview(_unblocked("hive23_pg", "hive31_pg"))
    # then
    assert again.fingerprint == first.fingerprint
    assert other.fingerprint != first.fingerprint
    assert next(t.first_id for t in again.tables if t.table == "TBLS") == 10_000


def test_unknown_database_and_bad_renames_are_refused_naming_them() -> None:
    """An unknown database is not_found; a rename of a database not merged, or to a name Hive refuses, is
    invalid_parameter; the source as its own target is refused."""
    cases = [
        (MergeRequest(source="hive23_pg", target="hive31_pg", databases=("nope",)), ErrorCode.NOT_FOUND, "nope"),
        (
            MergeRequest(source="hive23_pg", target="hive31_pg", databases=("sales",), renames=(("ops", "o2"),)),
            ErrorCode.INVALID_PARAMETER,
            "ops",
        ),
        (
            MergeRequest(source="hive23_pg", target="hive31_pg", databases=("sales",), renames=(("sales", "a b"),)),
            ErrorCode.INVALID_PARAMETER,
            "a b",
        ),
        (MergeRequest(source="hive31_pg", target="hive31_pg"), ErrorCode.INVALID_PARAMETER, "hive31_pg"),
    ]
    for request, code, named in cases:
        # when
        with pytest.raises(ApplicationError) as caught:
            merge_preview(request)
        # then
        assert caught.value.code == code
        assert named in caught.value.message


def test_sql_scopes_never_read_other_databases() -> None:
    """Scoping by one database counts only its rows: sales alone plus marketing alone equal both together."""
    # when
    both = merge_preview(_unblocked("hive31_pg", "hive40_pg"))
    parts = [
        merge_preview(MergeRequest(source="hive31_pg", target="hive40_pg", databases=(name,), renames=(RENAMES[i],)))
        for i, name in enumerate(CHOSEN)
    ]
    # then
    for row in both.tables:
        assert row.rows == sum(p.rows_of(row.table) for p in parts), row.table


def test_foreign_keys_across_the_merge_and_names_the_target_uses_block() -> None:
    """A foreign key from sales.orders to a table of a database left out blocks (constraint_outside); on a 3.1
    target, where constraint names are metastore-wide, a name it already uses blocks too (constraint_exists)."""
    # given
    src, tgt = MetastoreReader("hive23_pg"), MetastoreReader("hive31_pg")
    table_id = (
        'SELECT t."TBL_ID" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'WHERE d."NAME" = %s AND t."TBL_NAME" = %s'
    )
    orders, campaigns = src.scalar(table_id, ["sales", "orders"]), src.scalar(table_id, ["marketing", "campaigns"])
    insert = (  # 2.3 requires the parent's column descriptor: the table's own
        'INSERT INTO "KEY_CONSTRAINTS" ("CONSTRAINT_NAME", "POSITION", "PARENT_TBL_ID", "PARENT_CD_ID", '
        '"PARENT_INTEGER_IDX", "CHILD_TBL_ID", "CHILD_INTEGER_IDX", "CONSTRAINT_TYPE", "ENABLE_VALIDATE_RELY") '
        'SELECT %s, 1, t."TBL_ID", s."CD_ID", 0, %s, 0, %s, 0 FROM "TBLS" t JOIN "SDS" s ON s."SD_ID" = t."SD_ID" '
        'WHERE t."TBL_ID" = %s'
    )
    with allow_metastore_writes():
        with connections["hive23_pg"].cursor() as cursor:
            cursor.execute(insert, ["orders_pk", None, 0, orders])
            cursor.execute(insert, ["orders_campaign_fk", orders, 1, campaigns])
        with connections["hive31_pg"].cursor() as cursor:
            cursor.execute(insert, ["orders_pk", None, 0, tgt.scalar(table_id, ["sales", "orders"])])
    rule = parse_location_rule(f"{_warehouse('hive23_pg')}={_warehouse('hive31_pg')}/imported_from_hive23_pg")
    # when
    preview = merge_preview(
        MergeRequest(
            source="hive23_pg",
            target="hive31_pg",
            databases=("sales",),
            renames=(("sales", "s2"),),
            location_rules=(rule,),
        )  # fmt: skip
    )
    # then
    assert [(b.code, b.subject) for b in preview.blockers] == [
        ("constraint_outside", "orders_campaign_fk"),
        ("constraint_exists", "orders_pk"),
    ]
    assert preview.rows_of("KEY_CONSTRAINTS") == 1

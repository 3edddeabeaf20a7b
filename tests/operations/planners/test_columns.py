"""
``ADD COLUMNS``, ``REPLACE COLUMNS`` and ``CHANGE COLUMN``, with and without CASCADE, on every metastore.

The table gets one new column descriptor; with CASCADE every partition shares it and the old descriptor goes.
Statistics of renamed columns are kept under the new name; a type change or a drop removes that column's.
New descriptor ids come from SEQUENCE_TABLE, whose NEXT_VAL stays above every id in use.
"""

from __future__ import annotations

import json

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import (
    BucketingColumn,
    Column,
    ColumnDescriptor,
    Partition,
    PartitionColumnStatistics,
    PartitionParam,
    SortColumn,
    StorageDescriptor,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.planners.columns import flags as column_flags
from operations.services.alter import alter_preview, alter_preview_statement
from operations.services.revert import revert_preview
from operations.specs import AddColumns, ColumnDef, TableRef, spec_from_dict
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, metastore_dump, row_changes, sequences_behind

STATS_KEY = "COLUMN_STATS_ACCURATE"


def columns(metastore: Metastore, cd_id: int) -> list[tuple[str, str, str | None]]:
    return list(
        Column.objects.using(metastore.alias)
        .filter(cd_id=cd_id)
        .order_by("position")
        .values_list("name", "type", "comment")
    )


def partition_descriptors(metastore: Metastore, table_id: int) -> set[int]:
    return set(Partition.objects.using(metastore.alias).filter(table_id=table_id).values_list("sd__cd_id", flat=True))


def partition_statistics(metastore: Metastore, table_id: int) -> dict[str, int]:
    rows = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition__table_id=table_id)
    names = list(rows.values_list("column_name", flat=True))
    return {name: names.count(name) for name in set(names)}


def partition_flags(metastore: Metastore, table_id: int) -> list[set[str]]:
    """The column names flagged in each partition's COLUMN_STATS_ACCURATE."""
    values = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table_id, key=STATS_KEY)
    return [set(json.loads(value)["COLUMN_STATS"]) for value in values.values_list("value", flat=True)]


def table_flags(metastore: Metastore, table_id: int) -> set[str]:
    value = TableParam.objects.using(metastore.alias).get(table_id=table_id, key=STATS_KEY).value
    return set(json.loads(value)["COLUMN_STATS"])


def bucket_columns(metastore: Metastore, sd_ids: list[int]) -> list[tuple[int, str, int]]:
    """``(SD_ID, BUCKET_COL_NAME, INTEGER_IDX)`` of the storage descriptors, sorted."""
    rows = BucketingColumn.objects.using(metastore.alias).filter(sd_id__in=sd_ids)
    return sorted(rows.values_list("sd_id", "name", "position"))


def partition_sds(metastore: Metastore, table_id: int) -> list[int]:
    return list(Partition.objects.using(metastore.alias).filter(table_id=table_id).values_list("sd_id", flat=True))


def rows_besides_sequences(metastore: Metastore) -> dict[str, list[tuple]]:
    """Every metastore row but SEQUENCE_TABLE's (ids handed out stay handed out after a revert) and the notification
    log's (it only grows: by the change's events and the revert's)."""
    skipped = ("SEQUENCE_TABLE", "NOTIFICATION_LOG", "NOTIFICATION_SEQUENCE")
    return {table: rows for table, rows in metastore_dump(metastore.alias).items() if table not in skipped}


def is_hive4(metastore: Metastore) -> bool:
    return metastore.schema.version.major >= 4


ORDERS_COLUMNS = [
    ("id", "bigint", None),
    ("customer_id", "bigint", None),
    ("amount", "decimal(10,2)", None),
    ("status", "string", None),
]


def test_add_columns_without_cascade_leaves_partitions_on_their_descriptor(metastore: Metastore) -> None:
    """Only the table moves to a new descriptor; the old one stays, shared by the partitions (rule 10.4)."""
    # given
    orders = table_row(metastore, "sales", "orders")
    old_cd = orders.sd.cd_id

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders ADD COLUMNS (note string COMMENT 'free text')"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"CDS": (1, 0, 0), "COLUMNS_V2": (5, 0, 0), "SDS": (0, 1, 0)}
    assert (preview.risk, preview.partitions_touched, preview.moves) == ("medium", 0, ())
    assert [w.code for w in preview.warnings] == ["not_cascaded"]
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "orders").sd.cd_id
    assert new_cd != old_cd
    assert columns(metastore, new_cd) == [*ORDERS_COLUMNS, ("note", "string", "free text")]
    assert partition_descriptors(metastore, orders.id) == {old_cd}
    assert columns(metastore, old_cd) == ORDERS_COLUMNS
    assert partition_statistics(metastore, orders.id) == dict.fromkeys(["id", "customer_id", "amount", "status"], 12)
    assert sequences_behind(metastore) == {}


def test_add_columns_with_cascade_shares_one_descriptor(metastore: Metastore) -> None:
    """The table and all 12 partitions point at the same new descriptor; the unused old one is removed."""
    # given
    orders = table_row(metastore, "sales", "orders")
    old_cd = orders.sd.cd_id

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders ADD COLUMNS (note string) CASCADE"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"CDS": (1, 0, 1), "COLUMNS_V2": (5, 0, 4), "SDS": (0, 13, 0)}
    assert (preview.risk, preview.partitions_touched, preview.statistics_dropped) == ("medium", 12, 0)
    assert preview.warnings == ()
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "orders").sd.cd_id
    assert partition_descriptors(metastore, orders.id) == {new_cd}
    assert not ColumnDescriptor.objects.using(metastore.alias).filter(id=old_cd).exists()
    assert not Column.objects.using(metastore.alias).filter(cd_id=old_cd).exists()
    assert columns(metastore, new_cd) == [*ORDERS_COLUMNS, ("note", "string", None)]
    assert sum(partition_statistics(metastore, orders.id).values()) == 48
    assert sequences_behind(metastore) == {}


def test_renaming_a_column_with_cascade_keeps_its_statistics(metastore: Metastore) -> None:
    """CHANGE status state: the 12 partition statistics and the 9 accuracy flags follow the new name."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders CHANGE status state string CASCADE"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (4, 0, 4),
        "PARTITION_PARAMS": (0, 9, 0),
        "PART_COL_STATS": (0, 12, 0),
        "SDS": (0, 13, 0),
    }
    assert (preview.statistics_moved, preview.statistics_dropped) == (12, 0)
    assert [w.code for w in preview.warnings] == ["stats_kept", "renamed_by_name"]  # parquet: files read by name
    assert execution.actual_counts == execution.expected_counts
    assert columns(metastore, table_row(metastore, "sales", "orders").sd.cd_id)[-1] == ("state", "string", None)
    assert partition_statistics(metastore, orders.id) == dict.fromkeys(["id", "customer_id", "amount", "state"], 12)
    assert partition_flags(metastore, orders.id) == [{"id", "customer_id", "amount", "state"}] * 9


def test_replace_columns_with_cascade_drops_the_statistics_of_dropped_and_retyped_columns(metastore: Metastore) -> None:
    """status disappears and amount changes type: their 24 statistics rows and flags go, the others stay."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders REPLACE COLUMNS "
        "(id bigint, customer_id bigint, amount decimal(12,2)) CASCADE",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (3, 0, 4),
        "PARTITION_PARAMS": (0, 9, 0),
        "PART_COL_STATS": (0, 0, 24),
        "SDS": (0, 13, 0),
    }
    assert (preview.risk, preview.statistics_dropped) == ("high", 24)
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "orders").sd.cd_id
    assert partition_descriptors(metastore, orders.id) == {new_cd}
    assert partition_statistics(metastore, orders.id) == {"id": 12, "customer_id": 12}
    assert partition_flags(metastore, orders.id) == [{"id", "customer_id"}] * 9


def test_changing_a_column_of_an_unpartitioned_table_keeps_its_statistics_under_the_new_name(
    metastore: Metastore,
) -> None:
    """CHANGE email mail: the table's statistics row and accuracy flag are re-labelled, nothing is lost."""
    # given
    customers = table_row(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers CHANGE email mail string AFTER country"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (5, 0, 5),
        "SDS": (0, 1, 0),
        "TABLE_PARAMS": (0, 1, 0),
        "TAB_COL_STATS": (0, 1, 0),
    }
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "customers").sd.cd_id
    assert [name for name, _t, _c in columns(metastore, new_cd)] == ["id", "name", "country", "mail", "signup_date"]
    names = set(
        TableColumnStatistics.objects.using(metastore.alias)
        .filter(table_id=customers.id)
        .values_list("column_name", flat=True)
    )
    assert names == {"id", "name", "mail", "country", "signup_date"}
    assert table_flags(metastore, customers.id) == names
    assert not ColumnDescriptor.objects.using(metastore.alias).filter(id=customers.sd.cd_id).exists()
    assert sequences_behind(metastore) == {}


def test_replace_columns_of_an_unpartitioned_table_drops_the_missing_columns_statistics(metastore: Metastore) -> None:
    """REPLACE COLUMNS (id, name) without the other three: their three statistics rows and flags go."""
    # given
    customers = table_row(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers REPLACE COLUMNS (id bigint, name string)"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (2, 0, 5),
        "SDS": (0, 1, 0),
        "TABLE_PARAMS": (0, 1, 0),
        "TAB_COL_STATS": (0, 0, 3),
    }
    assert (preview.risk, preview.statistics_dropped) == ("high", 3)
    assert execution.actual_counts == execution.expected_counts
    assert execution.state == Execution.State.SUCCEEDED
    names = set(
        TableColumnStatistics.objects.using(metastore.alias)
        .filter(table_id=customers.id)
        .values_list("column_name", flat=True)
    )
    assert names == {"id", "name"} == table_flags(metastore, customers.id)


def test_a_column_moves_and_keeps_its_type_and_statistics(metastore: Metastore) -> None:
    """CHANGE … AFTER reorders the columns; a same-name, same-type change keeps every statistic."""
    # given
    customers = table_row(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.customers CHANGE country country string COMMENT 'ISO' AFTER id",
    )
    execute(preview)

    # then
    assert "TAB_COL_STATS" not in row_changes(preview)
    assert columns(metastore, table_row(metastore, "sales", "customers").sd.cd_id)[:3] == [
        ("id", "bigint", None),
        ("country", "string", "ISO"),
        ("name", "string", None),
    ]
    assert TableColumnStatistics.objects.using(metastore.alias).filter(table_id=customers.id).count() == 5


def test_column_change_allocates_descriptor_ids_above_the_sequence(metastore: Metastore) -> None:
    """The new descriptor id is NEXT_VAL's, and NEXT_VAL moves past it (a running Hive cannot reuse it)."""
    # given
    from catalog_admin.models import Sequence

    name = "org.apache.hadoop.hive.metastore.model.MColumnDescriptor"
    before = Sequence.objects.using(metastore.alias).filter(name=name).values_list("next_val", flat=True).first() or 0

    # when
    execution = execute(
        alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers ADD COLUMNS (vip boolean)")
    )

    # then
    new_cd = (
        StorageDescriptor.objects.using(metastore.alias).get(id=table_row(metastore, "sales", "customers").sd_id).cd_id
    )
    assert new_cd >= before
    assert Sequence.objects.using(metastore.alias).get(name=name).next_val > new_cd
    assert execution.before_image["allocated_ids"] == {"CDS:0": new_cd}
    assert sequences_behind(metastore) == {}


def test_replace_columns_treats_type_names_differing_only_in_case_as_the_same(metastore: Metastore) -> None:
    """Rule 11.2: a stored BIGINT replaced by bigint is the same type, so the column keeps its statistics."""
    # given
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        Column.objects.using(metastore.alias).filter(cd_id=customers.sd.cd_id, name="id").update(type="BIGINT")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.customers REPLACE COLUMNS "
        "(id bigint, name string, email string, country string, signup_date date)",
    )
    execute(preview)

    # then
    assert preview.statistics_dropped == 0
    assert "TAB_COL_STATS" not in row_changes(preview)
    assert (preview.hive.statistics_deleted, preview.blockers) == (0, ())
    names = TableColumnStatistics.objects.using(metastore.alias).filter(table_id=customers.id)
    assert set(names.values_list("column_name", flat=True)) == {"id", "name", "email", "country", "signup_date"}


def test_integer_and_numeric_are_written_as_hive_names_them(metastore: Metastore) -> None:
    """Hive's parser turns INTEGER into int and NUMERIC into decimal before the metastore sees them (rule 2.4)."""
    # given: NUMERIC is Hive 3.0's (HIVE-16764); Hive 2.3's parser refuses it (tests/operations/ddl/test_types.py)
    numeric = "numeric" if metastore.schema.version.major >= 3 else "decimal"
    statement = f"ALTER TABLE sales.customers ADD COLUMNS (x INTEGER, y {numeric}(10,2), z array<integer>)"

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    execute(preview)

    # then
    assert preview.blockers == ()
    new_cd = table_row(metastore, "sales", "customers").sd.cd_id
    assert columns(metastore, new_cd)[-3:] == [
        ("x", "int", None),
        ("y", "decimal(10,2)", None),
        ("z", "array<int>", None),
    ]


def test_a_structured_operation_names_its_types_as_hive_does(metastore: Metastore) -> None:
    """The API's dict form is normalized like a typed statement; a spec that still says integer is refused (2.4)."""
    # given
    target = {"database": "sales", "table": "customers"}
    operation = {"kind": "add_columns", "target": target, "columns": [{"name": "x", "type": "NUMERIC(10,2)"}]}
    raw = AddColumns(target=TableRef("sales", "customers"), columns=(ColumnDef("x", "integer"),))

    # when
    normalized = alter_preview(metastore=metastore, spec=spec_from_dict(operation))
    refused = alter_preview(metastore=metastore, spec=raw)

    # then
    assert normalized.blockers == ()
    assert normalized.after.columns[-1] == ("x", "decimal(10,2)", None)
    assert [(f.code, f.rule, f.message) for f in refused.blockers] == [
        ("invalid_type", "2.4", "Invalid column type: integer")
    ]


# (table, clause, Hive's partition round trips and deleted statistics rows on 2.3/3.1, and on 4.x)
HIVE_COSTS = [
    pytest.param("sales.customers", "CHANGE name full_name string", (0, 1), (0, 1), id="rename-unpartitioned"),
    pytest.param(
        "sales.customers", "REPLACE COLUMNS (id bigint, name string)", (0, 3), (0, 3), id="drop-unpartitioned"
    ),
    pytest.param("sales.customers", "ADD COLUMNS (vip boolean)", (0, 0), (0, 0), id="append-unpartitioned"),
    pytest.param("sales.orders", "CHANGE status state string", (12, 12), (12, 12), id="rename-restrict"),
    pytest.param("sales.orders", "CHANGE status state string CASCADE", (12, 12), (12, 12), id="rename-cascade"),
    pytest.param("sales.orders", "CHANGE amount amount decimal(12,2)", (12, 12), (12, 12), id="widen-restrict"),
    pytest.param("sales.orders", "CHANGE status status string COMMENT 'x'", (12, 0), (12, 0), id="comment-restrict"),
    pytest.param(
        "sales.orders", "CHANGE status status string COMMENT 'x' CASCADE", (12, 0), (12, 0), id="comment-cascade"
    ),
    pytest.param("sales.orders", "ADD COLUMNS (note string)", (12, 0), (0, 0), id="append-restrict"),
    pytest.param("sales.orders", "ADD COLUMNS (note string) CASCADE", (12, 0), (12, 0), id="append-cascade"),
    pytest.param(
        "sales.orders",
        "REPLACE COLUMNS (id bigint, customer_id bigint, amount decimal(10,2), status string, note string)",
        (12, 0),
        (0, 0),
        id="replace-appending-restrict",
    ),
    pytest.param(
        "sales.orders",
        "REPLACE COLUMNS (id bigint, customer_id bigint) CASCADE",
        (12, 24),
        (12, 24),
        id="replace-dropping-cascade",
    ),
]


@pytest.mark.parametrize(("table", "clause", "hive_3", "hive_4"), HIVE_COSTS)
def test_hive_comparison_counts_what_hive_itself_would_do(
    metastore: Metastore, table: str, clause: str, hive_3: tuple[int, int], hive_4: tuple[int, int]
) -> None:
    """Rules 10-12: Hive's partition round trips and the TAB_COL_STATS and PART_COL_STATS rows it deletes; 3.1
    rewrites every partition whenever the column lists differ, 4.x not for appended columns without CASCADE, 2.3
    only with CASCADE, and every version drops the statistics of a renamed or retyped column in the partitions it
    touches."""
    # given
    partitioned_without_cascade = table == "sales.orders" and not clause.endswith("CASCADE")
    hive_2 = (0, 0) if partitioned_without_cascade else hive_3
    expected = {"2.3": hive_2, "3.1": hive_3}.get(
        f"{metastore.schema.version.major}.{metastore.schema.version.minor}", hive_4
    )

    # when
    hive = alter_preview_statement(metastore=metastore, statement=f"ALTER TABLE {table} {clause}").hive

    # then
    assert (hive.partition_round_trips, hive.statistics_deleted) == expected


def is_hive23(metastore: Metastore) -> bool:
    return (metastore.schema.version.major, metastore.schema.version.minor) == (2, 3)


def test_hive_comparison_counts_table_statistics_of_a_partitioned_table_from_4_0(metastore: Metastore) -> None:
    """HIVE-26504: 4.x also drops a partitioned table's own statistics of a renamed column; 3.1 leaves them (and
    drops the 12 partitions' statistics of the column, as 4.x does); 2.3 without CASCADE touches nothing."""
    # given
    orders, customers = table_row(metastore, "sales", "orders"), table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        TableColumnStatistics.objects.using(metastore.alias).filter(
            table_id=customers.id, column_name="country"
        ).update(table_id=orders.id, column_name="status")

    # when
    statement = "ALTER TABLE sales.orders CHANGE status state string"
    hive = alter_preview_statement(metastore=metastore, statement=statement).hive

    # then
    assert hive.statistics_deleted == (12 + 1 if is_hive4(metastore) else 0 if is_hive23(metastore) else 12)


def test_a_bucketing_column_follows_its_rename(metastore: Metastore) -> None:
    """CHANGE payment_id pid: BUCKETING_COLS says pid too, in place (HIVE-22826); before 4.0 Hive would not do it."""
    # given
    payments = table_row(metastore, "sales", "payments_acid")
    version = metastore.schema.version
    dangling = f"Hive {version.major}.{version.minor} would leave the bucketing column dangling."

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.payments_acid CHANGE payment_id pid bigint"
    )
    execution = execute(preview)

    # then
    assert preview.blockers == ()
    assert row_changes(preview)["BUCKETING_COLS"] == (0, 1, 0)
    renamed = [w.message for w in preview.warnings if w.code == "bucket_column_renamed"]
    expected = [] if is_hive4(metastore) else [f"The bucketing column payment_id is renamed to pid too: {dangling}"]
    assert renamed == expected
    assert execution.actual_counts == execution.expected_counts
    assert bucket_columns(metastore, [payments.sd_id]) == [(payments.sd_id, "pid", 0)]
    assert execution.read_before_image()["updated_rows"]["BUCKETING_COLS"] == [
        {"SD_ID": payments.sd_id, "BUCKET_COL_NAME": "payment_id", "INTEGER_IDX": 0}
    ]


@pytest.mark.parametrize(("cascade", "renamed_partitions"), [("", 0), (" CASCADE", 4)], ids=["restrict", "cascade"])
def test_the_partitions_bucketing_column_follows_its_rename_with_cascade(
    metastore: Metastore, cascade: str, renamed_partitions: int
) -> None:
    """With CASCADE the partitions' storage descriptors are bucketed by the new name too, in the same statement."""
    # given
    jobs = table_row(metastore, "ops", "job_runs_acid")
    sds = partition_sds(metastore, jobs.id)

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE ops.job_runs_acid CHANGE job_id job bigint{cascade}"
    )
    execute(preview)

    # then
    assert [s.metastore_table for s in preview.steps].count("BUCKETING_COLS") == 1
    assert row_changes(preview)["BUCKETING_COLS"] == (0, 1 + renamed_partitions, 0)
    partition_names = sorted(name for _sd, name, _position in bucket_columns(metastore, sds))
    assert partition_names == ["job"] * renamed_partitions + ["job_id"] * (4 - renamed_partitions)
    assert bucket_columns(metastore, [jobs.sd_id]) == [(jobs.sd_id, "job", 0)]


def test_replace_columns_leaves_no_bucketing_column_dangling_on_hive_4(metastore: Metastore) -> None:
    """Rule 2.5: 4.x refuses to drop a bucketing column ('Bucket columns - [payment_id] …'); 3.1 and 2.3 do not check,
    so the console only warns there."""
    # given
    statement = (
        "ALTER TABLE sales.payments_acid REPLACE COLUMNS "
        "(pid bigint, order_id bigint, amount decimal(10,2), paid_at timestamp)"
    )
    message = "Bucket columns - [payment_id] doesn't match with any table columns"
    version = metastore.schema.version

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    if is_hive4(metastore):
        assert [(f.code, f.rule, f.message) for f in preview.blockers] == [("bucket_columns", "2.5", message)]
        assert preview.steps == ()
    else:
        assert preview.blockers == ()
        assert [f.message for f in preview.warnings if f.rule == "2.5"] == [
            f"{message}: Hive {version.major}.{version.minor} does not check this (4.0 does), so the table stays "
            "bucketed by a column it no longer has."
        ]
        assert "BUCKETING_COLS" not in row_changes(preview)


def test_flag_edits_keep_each_partition_row_once_with_its_original_value(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dropping two flagged columns edits each flagged partition's COLUMN_STATS_ACCURATE once, also when the edits
    are split over several statements: the before-image holds each row once, unedited, and a revert is exact."""
    # given
    monkeypatch.setattr(column_flags, "FLAG_EDITS_PER_STEP", 1)
    orders = table_row(metastore, "sales", "orders")
    flags = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=orders.id, key=STATS_KEY)
    original = sorted(flags.values_list("partition_id", "value"))
    rows = rows_besides_sequences(metastore)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders REPLACE COLUMNS (id bigint, customer_id bigint) CASCADE",
    )
    execution = execute(preview)
    revert = execute(revert_preview(execution=execution))

    # then
    assert [s.expected_rows for s in preview.steps if s.metastore_table == "PARTITION_PARAMS"] == [9, 9]
    captured = execution.read_before_image()["updated_rows"]["PARTITION_PARAMS"]
    assert sorted((row["PART_ID"], row["PARAM_VALUE"]) for row in captured) == original
    assert revert.actual_counts == revert.expected_counts
    assert rows_besides_sequences(metastore) == rows


def sort_columns(metastore: Metastore, sd_id: int) -> list[tuple[str, int]]:
    rows = SortColumn.objects.using(metastore.alias).filter(sd_id=sd_id).order_by("position")
    return list(rows.values_list("name", "order"))


def test_a_sort_column_follows_its_rename_and_comes_back_on_revert(metastore: Metastore) -> None:
    """CHANGE paid_at paid_on: SORT_COLS says paid_on too, in place; the revert restores the row exactly."""
    # given
    payments = table_row(metastore, "sales", "payments_acid")
    rows = metastore_dump(metastore.alias, events=False)
    order = sort_columns(metastore, payments.sd_id)[0][1]

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.payments_acid CHANGE paid_at paid_on timestamp"
    )
    forward = execute(preview)
    renamed = sort_columns(metastore, payments.sd_id)
    execute(revert_preview(execution=forward))

    # then
    assert row_changes(preview)["SORT_COLS"] == (0, 1, 0)
    assert [w.code for w in preview.warnings if w.code.startswith("sort")] == ["sort_column_renamed"]
    assert renamed == [("paid_on", order)]
    after = metastore_dump(metastore.alias, events=False)
    assert {t: r for t, r in after.items() if t != "SEQUENCE_TABLE"} == {  # ids handed out stay handed out
        t: r for t, r in rows.items() if t != "SEQUENCE_TABLE"
    }


def test_replacing_away_a_sort_column_is_named(metastore: Metastore) -> None:
    """REPLACE COLUMNS without the column a table is sorted by: a warning names it (Hive checks nothing)."""
    # given: sales.customers sorted by country
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        SortColumn.objects.using(metastore.alias).create(sd_id=customers.sd_id, name="country", order=1, position=0)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.customers REPLACE COLUMNS "
        "(id bigint, name string, email string, signup_date date)",
    )

    # then
    assert [w.message for w in preview.warnings if w.code == "sort_columns_dangling"] == [
        "Sort columns [country] are not table columns any more: the table would stay sorted by columns it no longer "
        "has."
    ]


def test_a_cascade_revert_gives_a_partition_without_a_descriptor_none_again(metastore: Metastore) -> None:
    """A partition whose storage descriptor has no column descriptor (CD_ID NULL) gets the new one with CASCADE; the
    revert puts NULL back rather than the descriptor the other partitions share."""
    # given
    orders = table_row(metastore, "sales", "orders")
    odd = Partition.objects.using(metastore.alias).get(table_id=orders.id, name="dt=2024-01-03/hour=9")
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=odd.sd_id).update(cd=None)
    rows = metastore_dump(metastore.alias, events=False)

    # when
    forward = execute(
        alter_preview_statement(
            metastore=metastore, statement="ALTER TABLE sales.orders ADD COLUMNS (c string) CASCADE"
        )
    )
    given_one = StorageDescriptor.objects.using(metastore.alias).get(id=odd.sd_id).cd_id
    execute(revert_preview(execution=forward))

    # then
    assert given_one is not None
    assert forward.before_image["partition_cd_map"]["null"] == [odd.sd_id]
    after = metastore_dump(metastore.alias, events=False)
    assert {t: r for t, r in after.items() if t != "SEQUENCE_TABLE"} == {
        t: r for t, r in rows.items() if t != "SEQUENCE_TABLE"
    }


def test_a_cascade_rename_keeps_one_inverse_rule_for_every_partitions_flags(metastore: Metastore) -> None:
    """Renaming an analysed column rewrites its accuracy flag in every partition; the before-image is the reverse rule,
    not a copy per partition, and the revert applying it restores every row."""
    # given
    rows = metastore_dump(metastore.alias, events=False)

    # when
    forward = execute(
        alter_preview_statement(
            metastore=metastore,
            statement="ALTER TABLE sales.orders CHANGE COLUMN amount amount_eur decimal(10,2) CASCADE",
        )
    )
    execute(revert_preview(execution=forward))

    # then
    assert forward.expected_counts["PARTITION_PARAMS"]["update"] > 0
    assert forward.before_image["flag_inverse"] == [['"amount_eur":"true"', '"amount":"true"']]
    assert "PARTITION_PARAMS" not in forward.read_before_image()["updated_rows"]
    after = metastore_dump(metastore.alias, events=False)
    assert {t: r for t, r in after.items() if t != "SEQUENCE_TABLE"} == {
        t: r for t, r in rows.items() if t != "SEQUENCE_TABLE"
    }


def test_flags_already_naming_the_new_column_are_kept_row_by_row(metastore: Metastore) -> None:
    """When a partition's flag already names the new column (a leftover), the reverse rule would not be exact: the
    changed rows are kept instead."""
    # given
    orders = table_row(metastore, "sales", "orders")
    flag = PartitionParam.objects.using(metastore.alias).filter(partition__table=orders.id, key="COLUMN_STATS_ACCURATE")
    first = flag.values_list("partition_id", flat=True).first()
    with allow_metastore_writes():
        flag.filter(partition_id=first).update(value='{"COLUMN_STATS":{"amount_eur":"true"}}')

    # when
    forward = execute(
        alter_preview_statement(
            metastore=metastore,
            statement="ALTER TABLE sales.orders CHANGE COLUMN amount amount_eur decimal(10,2) CASCADE",
        )
    )

    # then
    assert forward.before_image["flag_inverse"] == []
    assert (
        len(forward.read_before_image()["updated_rows"]["PARTITION_PARAMS"])
        == forward.expected_counts["PARTITION_PARAMS"]["update"]
    )


# Spark keeps the bucketing and sort columns of the Hive tables it creates in TABLE_PARAMS too (a data-source table's
# rename is refused: tests/operations/planners/test_spark_tables.py).
SPARK_LISTED = {
    "spark.sql.sources.schema.numBucketCols": "1",
    "spark.sql.sources.schema.bucketCol.0": "country",
    "spark.sql.sources.schema.numSortCols": "2",
    "spark.sql.sources.schema.sortCol.0": "Country",
    "spark.sql.sources.schema.sortCol.1": "name",
}


@pytest.mark.parametrize("new_type", ["string", "varchar(2)"], ids=["rename", "rename-and-retype"])
def test_spark_bucketing_and_sort_columns_follow_a_renamed_column(metastore: Metastore, new_type: str) -> None:
    """CHANGE country region: Spark's ``bucketCol.N`` / ``sortCol.N`` naming country (in any case) say region after
    it, whether or not the type changes too; the other sort column and the counts stay."""
    # given
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).bulk_create(
            [TableParam(table_id=customers.id, key=key, value=value) for key, value in SPARK_LISTED.items()]
        )

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers CHANGE country region {new_type}"
    )
    execute(preview)

    # then
    after = dict(preview.after.params)
    stored = dict(
        TableParam.objects.using(metastore.alias)
        .filter(table_id=customers.id, key__startswith="spark.sql.sources.schema.")
        .values_list("key", "value")
    )
    expected = dict(SPARK_LISTED)
    expected |= {"spark.sql.sources.schema.bucketCol.0": "region", "spark.sql.sources.schema.sortCol.0": "region"}
    assert {k: after[k] for k in expected} == expected
    assert stored == expected

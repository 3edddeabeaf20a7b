"""
Hive's ALTER rules (``/work/shared/docs/hive-alter-rules.md``) as the console applies them, version by version.

The pure checks of ``operations.rules`` are tested directly for 2.3.0, 3.1.0 and 4.0.0; the rules that need a
table (rename targets, locations, ACID, partitions) are tested through previews on one metastore of each
version. A rule that blocks shows up as a blocker with its rule number and Hive's wording; nothing here writes
to a metastore except the arrangement of a test, inside its rolled-back transaction.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Database, DatabaseParam, Partition, SerDe, StorageDescriptor, TableParam
from catalog_admin.schema import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Preview
from operations.rules import (
    canonical_type,
    check_bucket_columns,
    check_column_types,
    check_partition_keys,
    check_replace_columns_serde,
    check_table_name,
    incompatible_columns,
    is_known_type,
    types_compatible,
)
from operations.services.alter import alter_execute, alter_preview, alter_preview_statement
from operations.specs import AddColumns, ColumnDef, RenameTable, TableRef
from tests.fixtures.factories import table_row
from tests.fixtures.operations import location_of, path_of

V23, V31, V40 = (SchemaVersion.parse(v) for v in ("2.3.0", "3.1.0", "4.0.0"))
VERSIONS = {"2.3": V23, "3.1": V31, "4.0": V40}

# One metastore per Hive version (the rules do not depend on the database vendor).
per_version = pytest.mark.parametrize("metastore_alias", ["hive23_pg", "hive31_my", "hive40_pg"], indirect=True)
hive4_only = pytest.mark.parametrize("metastore_alias", ["hive40_pg", "hive40_my"], indirect=True)


def line(metastore: Metastore) -> str:
    version = metastore.schema.version
    return f"{version.major}.{version.minor}"


def preview(metastore: Metastore, statement: str) -> Preview:
    return alter_preview_statement(metastore=metastore, statement=statement)


def codes(preview: Preview) -> list[tuple[str, str]]:
    """``(code, rule)`` of every blocker."""
    return [(finding.code, finding.rule) for finding in preview.blockers]


def warning_codes(preview: Preview) -> list[str]:
    return [finding.code for finding in preview.warnings]


def set_location(metastore: Metastore, sd_id: int, location: str) -> None:
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=location)


def partition_sd(metastore: Metastore, database: str, table: str, name: str) -> int:
    return (
        Partition.objects.using(metastore.alias)
        .filter(table__database__name=database, table__name=table, name=name)
        .values_list("sd_id", flat=True)
        .get()
    )


# 2.3 Name check --------------------------------------------------------------------------------------------------

NAMES = [
    # (new table name, valid on 2.3 / 3.1, valid on 4.0, a safe directory name)
    ("orders_v2", True, True, True),
    ("Orders2", True, True, True),
    ("year/2024", True, True, False),
    ("orders-v2", False, True, True),
    ("my table", False, True, True),
    ("t$1:x(2)", False, True, True),
    ("quote'and`tick", False, True, True),
    ("données", False, False, True),  # Java's \w is ASCII only
    ("orders\n", False, False, False),  # the whole name must match, no trailing newline
    ("back\\slash", False, False, False),
    ("", False, False, False),
]


@pytest.mark.parametrize(("name", "valid_3", "valid_4", "safe"), NAMES)
@pytest.mark.parametrize("version", list(VERSIONS))
def test_table_names_follow_each_versions_character_set(
    name: str, valid_3: bool, valid_4: bool, safe: bool, version: str
) -> None:
    """Rule 2.3: word characters and '/' up to 3.1; 4.x also allows the listed special characters. Names that are no
    safe directory name are refused on top, whatever the version."""
    # given
    valid = valid_4 if version == "4.0" else valid_3

    # when
    findings = check_table_name(name, VERSIONS[version])

    # then
    hive = [(f.code, f.rule, f.message) for f in findings if f.code == "invalid_name"]
    assert hive == ([] if valid else [("invalid_name", "2.3", f"{name} is not a valid object name")])
    assert [f.code for f in findings if f.code != "invalid_name"] == ([] if safe else ["unsafe_name"])


@per_version
def test_rename_to_an_invalid_name_is_blocked(metastore: Metastore) -> None:
    """Rule 2.3 applies to the new name of a rename: 'orders-v2' is refused before 4.x only."""
    # given
    spec = RenameTable(target=TableRef("sales", "customers"), new=TableRef("sales", "customers-v2"))

    # when
    result = alter_preview(metastore=metastore, spec=spec)

    # then
    if line(metastore) == "4.0":
        assert result.blockers == ()
    else:
        assert codes(result) == [("invalid_name", "2.3")]
        assert result.blockers[0].message == "customers-v2 is not a valid object name"


@pytest.mark.parametrize("metastore_alias", ["hive40_pg", "hive_sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../../../../../../tmp/outside/x", "'..' climbs out of the parent directory"),
        ("x?y", "a location URI ends its path at '?'"),
        ("year/2024", "'/' separates directories"),
    ],
)
def test_a_rename_whose_name_leaves_the_database_directory_is_blocked(
    metastore: Metastore, name: str, problem: str
) -> None:
    """Issue 9 cases 3 and 5: a new name that is no single safe directory blocks the rename, naming the problem, on
    4.0 (where Hive accepts these names) as on 3.1."""
    # when
    result = preview(metastore, f"ALTER TABLE sales.customers RENAME TO sales.`{name}`")

    # then
    unsafe = [f for f in result.blockers if f.code == "unsafe_name"]
    assert len(unsafe) == 1
    assert f"The table name {name!r} cannot be used as a directory name" in unsafe[0].message
    assert problem in unsafe[0].message


# 2.4 / 5 Column types ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_name", "known"),
    [
        ("int", True),
        ("INTEGER", False),  # Hive's parser sends int; the metastore refuses integer
        ("numeric(10,2)", False),
        ("real", False),
        ("timestamplocaltz", False),
        ("unknown", False),
        ("decimal(10,2)", True),
        ("varchar(10)", True),
        ("map<string,array<int>>", True),
        ("struct<a:int>", True),
        ("uniontype<int,string>", True),
        ("timestamp with local time zone", True),
        ("interval_day_time", True),
        ("<derived from deserializer>", True),
        ("foo", False),
        ("text", False),
        ("<int>", False),
        ("varchar2(10)", False),
    ],
)
def test_column_type_must_start_with_a_known_type_name(type_name: str, known: bool) -> None:
    """Rule 2.4: the first token of the type is one of ColumnType.AllTypes."""
    # given / when / then
    assert is_known_type(type_name) is known


@pytest.mark.parametrize(
    ("type_name", "canonical"),
    [
        ("INT", "int"),
        ("integer", "int"),
        ("numeric(10,2)", "decimal"),
        ("decimal(10,2)", "decimal"),
        ("VARCHAR(10)", "varchar"),
        ("char(3)", "char"),
        ("array<int>", "array"),
        ("map<string,int>", "map"),
        ("timestamp with local time zone", "timestamp"),
    ],
)
def test_canonical_type_drops_parameters_and_element_types(type_name: str, canonical: str) -> None:
    """Rule 5.3: lower-cased, cut at the first non-word character, integer→int and numeric→decimal."""
    # given / when / then
    assert canonical_type(type_name) == canonical


# (from, to, allowed on 2.3 and 3.1, allowed on 4.0)
TYPE_CHANGES = [
    ("int", "int", True, True),
    ("tinyint", "smallint", True, True),
    ("smallint", "int", True, True),
    ("int", "bigint", True, True),
    ("bigint", "decimal(20,0)", True, True),
    ("decimal(10,2)", "float", True, True),
    ("float", "double", True, True),
    ("int", "double", True, True),
    ("bigint", "int", False, False),
    ("double", "float", False, False),
    ("double", "decimal(38,10)", False, False),
    ("decimal(10,2)", "bigint", False, False),
    ("decimal(10,2)", "decimal(5,0)", True, True),
    ("int", "string", True, True),
    ("double", "varchar(5)", True, True),
    ("bigint", "char(1)", True, True),
    ("int", "timestamp", False, False),
    ("int", "boolean", False, False),
    ("int", "array<int>", False, False),
    ("string", "varchar(10)", True, True),
    ("varchar(10)", "varchar(5)", True, True),
    ("char(10)", "string", True, True),
    ("string", "double", True, False),
    ("varchar(10)", "double", True, False),
    ("string", "int", False, False),
    ("string", "decimal(10,2)", False, False),
    ("string", "date", False, False),
    ("date", "string", True, True),
    ("timestamp", "varchar(30)", True, True),
    ("date", "timestamp", False, False),
    ("timestamp", "date", False, False),
    ("date", "int", False, False),
    ("void", "int", True, True),
    ("void", "string", True, True),
    ("void", "array<int>", False, False),
    ("boolean", "boolean", True, True),
    ("boolean", "string", False, False),
    ("boolean", "int", False, False),
    ("binary", "string", False, False),
    ("interval_day_time", "string", False, False),
    ("array<int>", "array<string>", True, True),
    ("map<string,int>", "map<int,int>", True, True),
    ("struct<a:int>", "struct<a:int,b:int>", True, True),
    ("array<int>", "map<int,int>", False, False),
    ("struct<a:int>", "string", False, False),
    ("string", "array<string>", False, False),
]


@pytest.mark.parametrize(("old", "new", "allowed_3", "allowed_4"), TYPE_CHANGES)
@pytest.mark.parametrize("version", list(VERSIONS))
def test_type_changes_follow_the_compatibility_table(
    old: str, new: str, allowed_3: bool, allowed_4: bool, version: str
) -> None:
    """Rule 5.4: widening and text targets are allowed; 3.1 (and 2.3) also allow text → double, 4.x refuses it."""
    # given
    allowed = allowed_4 if version == "4.0" else allowed_3

    # when / then
    assert types_compatible(old, new, VERSIONS[version]) is allowed


def test_type_check_compares_by_position_and_ignores_appended_and_dropped_columns() -> None:
    """Rule 5.2: column i against column i; names are ignored; the longer list's tail is never checked."""
    # given
    old = [("id", "bigint"), ("name", "string"), ("note", "string")]

    # when / then
    assert incompatible_columns(old, [("name", "string"), ("id", "bigint")], V31) == ["id"]
    assert incompatible_columns(old, [("key", "bigint"), ("label", "varchar(3)")], V31) == []
    assert incompatible_columns(old[:1], [("id", "bigint"), ("extra", "boolean")], V40) == []
    assert incompatible_columns(old, [("id", "int")], V23) == ["id"]


def test_incompatible_change_message_names_the_new_columns() -> None:
    """Rule 5.6: Hive's message, then the new names of the offending columns; views are not type-checked."""
    # given
    old = [("a", "bigint"), ("b", "string"), ("c", "date")]
    new = [("x", "int"), ("b", "string"), ("y", "timestamp")]

    # when
    findings = check_column_types(old, new, V40, is_view=False)
    on_view = check_column_types(old, new, V40, is_view=True)

    # then
    assert [(f.code, f.rule, f.message) for f in findings] == [
        (
            "incompatible_column_type",
            "5.6",
            "The following columns have types incompatible with the existing columns in their respective positions :"
            "\nx,y",
        )
    ]
    assert on_view == []
    assert [f.code for f in check_column_types(old, [("a", "foo")], V40, is_view=True)] == ["invalid_type"]


@pytest.mark.parametrize(
    "serde", ["org.apache.hadoop.hive.kudu.KuduSerDe", "org.apache.iceberg.mr.hive.HiveIcebergSerDe"]
)
@pytest.mark.parametrize("version", list(VERSIONS))
def test_incompatible_changes_are_allowed_for_exempt_serdes_on_hive_4(serde: str, version: str) -> None:
    """Rule 5.5: 4.x lets Kudu and Iceberg tables change a column to an incompatible type (a warning); 3.1 does not."""
    # given
    old, new = [("id", "bigint"), ("name", "string")], [("id", "int"), ("name", "string")]

    # when
    findings = check_column_types(old, new, VERSIONS[version], is_view=False, serde=serde)

    # then
    if version == "4.0":
        assert [(f.code, f.rule, f.severity) for f in findings] == [
            ("incompatible_column_type_exempt", "5.5", "warning")
        ]
        assert findings[0].message == (
            f"Columns id change to types incompatible with their old ones: Hive allows it for {serde} tables, "
            "and the data is not rewritten."
        )
    else:
        assert [(f.code, f.rule, f.severity) for f in findings] == [("incompatible_column_type", "5.6", "blocker")]


def test_only_the_listed_serdes_are_exempt() -> None:
    """Rule 5.5 matches the serialization library exactly; other serdes and unknown types are still refused."""
    # given
    old, new = [("id", "bigint")], [("id", "int")]

    # when
    parquet = check_column_types(
        old, new, V40, is_view=False, serde="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    )
    lower_case = check_column_types(old, new, V40, is_view=False, serde="org.apache.hadoop.hive.kudu.kuduserde")
    unknown = check_column_types(
        old, [("id", "foo")], V40, is_view=False, serde="org.apache.hadoop.hive.kudu.KuduSerDe"
    )

    # then
    assert [f.code for f in parquet] == [f.code for f in lower_case] == ["incompatible_column_type"]
    assert [f.code for f in unknown] == ["invalid_type"]


@per_version
def test_an_iceberg_table_may_narrow_a_column_on_hive_4(metastore: Metastore) -> None:
    """Rule 5.5 on a real table: with HiveIcebergSerDe, bigint → int is a warning on 4.x and a blocker before."""
    # given
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        SerDe.objects.using(metastore.alias).filter(id=customers.sd.serde_id).update(
            slib="org.apache.iceberg.mr.hive.HiveIcebergSerDe"
        )

    # when
    result = preview(metastore, "ALTER TABLE sales.customers CHANGE id id int")

    # then
    if line(metastore) == "4.0":
        assert result.blockers == ()
        assert "incompatible_column_type_exempt" in warning_codes(result)
        assert ("id", "int", None) in result.after.columns
    else:
        assert codes(result) == [("incompatible_column_type", "5.6")]


@pytest.mark.parametrize("version", list(VERSIONS))
def test_bucketing_columns_must_be_table_columns_from_hive_4(version: str) -> None:
    """Rule 2.5: lower-cased bucketing columns missing from the new columns, as Java prints a list; 3.1 only warns."""
    # given
    bucketing, columns = ["Payment_Id", "order_id", "region"], ["order_id", "pid"]

    # when
    findings = check_bucket_columns(bucketing, columns, VERSIONS[version])
    fine = check_bucket_columns(["ORDER_ID"], columns, VERSIONS[version])

    # then
    message = "Bucket columns - [payment_id, region] doesn't match with any table columns"
    if version == "4.0":
        assert [(f.code, f.rule, f.message, f.severity) for f in findings] == [
            ("bucket_columns", "2.5", message, "blocker")
        ]
    else:
        assert [(f.code, f.rule, f.severity) for f in findings] == [("bucket_columns_dangling", "2.5", "warning")]
        assert findings[0].message.startswith(f"{message}: Hive {version} does not check this")
    assert fine == []


# (table, statement's clause, allowed on 2.3 and 3.1, allowed on 4.0)
COLUMN_CHANGES = [
    pytest.param("sales.customers", "CHANGE name name double", True, False, id="string-to-double"),
    pytest.param("sales.customers", "CHANGE id id int", False, False, id="bigint-to-int"),
    pytest.param("sales.customers", "CHANGE id id string", True, True, id="bigint-to-string"),
    pytest.param("sales.customers", "CHANGE signup_date signup_date timestamp", False, False, id="date-to-timestamp"),
    pytest.param("sales.customers", "CHANGE name name varchar(5)", True, True, id="string-to-varchar"),
    pytest.param("sales.orders", "CHANGE amount amount decimal(5,0)", True, True, id="decimal-narrower-params"),
    pytest.param("sales.orders", "CHANGE amount amount bigint", False, False, id="decimal-to-bigint"),
    pytest.param("sales.orders", "CHANGE amount amount double", True, True, id="decimal-to-double"),
    pytest.param("sales.customers", "CHANGE country country string FIRST", False, False, id="first-shifts-types"),
    pytest.param("sales.customers", "CHANGE country country string AFTER id", True, True, id="after-keeps-types"),
    pytest.param(
        "sales.customers",
        "REPLACE COLUMNS (name string, id bigint, email string, country string, signup_date date)",
        False,
        False,
        id="replace-swaps-positions",
    ),
]


@per_version
@pytest.mark.parametrize(("table", "clause", "allowed_3", "allowed_4"), COLUMN_CHANGES)
def test_column_changes_are_checked_against_the_compatibility_table(
    metastore: Metastore, table: str, clause: str, allowed_3: bool, allowed_4: bool
) -> None:
    """Rule 5 on real tables: an incompatible change is a blocker naming rule 5.6, per version."""
    # given
    allowed = allowed_4 if line(metastore) == "4.0" else allowed_3

    # when
    result = preview(metastore, f"ALTER TABLE {table} {clause}")

    # then
    assert codes(result) == ([] if allowed else [("incompatible_column_type", "5.6")])


@per_version
def test_unknown_column_type_is_blocked(metastore: Metastore) -> None:
    """Rule 2.4: 'Invalid column type: foo' (for a spec that did not come through the parser, which refuses it)."""
    # given
    columns = (ColumnDef("x", "foo"), ColumnDef("y", "varchar(3)"))
    spec = AddColumns(target=TableRef("sales", "customers"), columns=columns)

    # when
    result = alter_preview(metastore=metastore, spec=spec)

    # then
    assert [(f.code, f.rule, f.message) for f in result.blockers] == [
        ("invalid_type", "2.4", "Invalid column type: foo")
    ]
    assert result.steps == ()


@per_version
def test_varchar_may_shrink_once_it_is_varchar(metastore: Metastore) -> None:
    """Rule 5.4: varchar(10) → varchar(5) is accepted (same canonical name), on a column changed before."""
    # given
    first = preview(metastore, "ALTER TABLE sales.customers CHANGE name name varchar(10)")
    alter_execute(preview=first, actor="test", source="cli")

    # when
    result = preview(metastore, "ALTER TABLE sales.customers CHANGE name name varchar(5)")

    # then
    assert result.blockers == ()
    assert ("name", "varchar(5)", None) in result.after.columns


# 6 Partition keys ---------------------------------------------------------------------------------------------------


def test_partition_keys_keep_their_names_and_order() -> None:
    """Rule 6.2: same length, same names, same order (case-sensitive); views are exempt (6.1)."""
    # given / when / then
    assert check_partition_keys(["dt", "hour"], ["dt", "hour"], is_view=False) == []
    for changed in (["hour", "dt"], ["dt"], ["dt", "hour", "region"], ["DT", "hour"]):
        findings = check_partition_keys(["dt", "hour"], changed, is_view=False)
        assert [(f.code, f.rule, f.message) for f in findings] == [
            ("partition_keys_changed", "6.3", "partition keys can not be changed.")
        ]
    assert check_partition_keys(["dt"], ["x"], is_view=True) == []


@per_version
def test_a_column_may_not_take_a_partition_keys_name(metastore: Metastore) -> None:
    """Rule 6.2 through column changes: a data column named like a partition key is refused."""
    # given / when
    result = preview(metastore, "ALTER TABLE sales.orders ADD COLUMNS (dt string)")

    # then
    assert codes(result) == [("partition_key_clash", "6.2")]
    assert result.after.partition_keys == (("dt", "string"), ("hour", "int"))


# 2.7 / 2.9 Rename target --------------------------------------------------------------------------------------------


@per_version
def test_rename_onto_an_existing_table_is_blocked(metastore: Metastore) -> None:
    """Rule 2.7: 'new table sales.customers already exists'."""
    # given / when
    result = preview(metastore, "ALTER TABLE sales.orders RENAME TO sales.customers")

    # then
    assert ("target_exists", "2.7") in codes(result)
    assert "new table sales.customers already exists" in [f.message for f in result.blockers]


@per_version
def test_rename_into_an_unknown_database_is_blocked(metastore: Metastore) -> None:
    """The new database must exist."""
    # given / when
    result = preview(metastore, "ALTER TABLE sales.orders RENAME TO nowhere.orders")

    # then
    assert codes(result) == [("unknown_database", "15.2")]
    assert result.steps == ()


@per_version
def test_rename_across_a_replication_source_is_blocked(metastore: Metastore) -> None:
    """Rule 8.7 (isRenameAllowed): no move across databases when one is a replication source; same-db is fine."""
    # given
    with allow_metastore_writes():
        DatabaseParam.objects.using(metastore.alias).create(
            database_id=Database.objects.on(metastore).get(name="sales").id, key="repl.source.for", value="1"
        )

    # when
    across = preview(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")
    within = preview(metastore, "ALTER TABLE sales.customers RENAME TO sales.clients")

    # then
    assert codes(across) == [("rename_not_allowed", "8.7")]
    assert across.blockers[0].message == (
        "Alter table not allowed for table sales.customersto new table = ops.customers"
    )
    assert within.blockers == ()


# 7 / 8 Where the data goes ------------------------------------------------------------------------------------------


@per_version
def test_external_table_and_view_renames_keep_their_location(metastore: Metastore) -> None:
    """Rules 7.3/8.2 and 7.6: external tables and views are renamed in metadata only."""
    # given
    external = table_row(metastore, "marketing", "campaigns")

    # when
    external_rename = preview(metastore, "ALTER TABLE marketing.campaigns RENAME TO sales.campaigns")
    view_rename = preview(metastore, "ALTER VIEW marketing.campaign_performance RENAME TO sales.performance")

    # then
    for result in (external_rename, view_rename):
        assert result.blockers == ()
        assert result.moves == ()
        assert "SDS" not in {step.metastore_table for step in result.steps}
    assert external_rename.after.location == external.sd.location
    assert view_rename.after.location is None


@per_version
def test_managed_table_in_a_specified_location_keeps_it(metastore: Metastore) -> None:
    """Rule 8.4: a managed table outside ``<db>/<name>`` is renamed without moving its data."""
    # given
    customers = table_row(metastore, "sales", "customers")
    custom = location_of(Path(metastore.config.warehouse) / "custom" / "customers")
    set_location(metastore, customers.sd_id, custom)

    # when
    result = preview(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")

    # then
    assert result.blockers == ()
    assert result.moves == ()
    assert result.after.location == custom
    assert {step.metastore_table for step in result.steps} <= {"TBLS", "TAB_COL_STATS"}


@per_version
def test_default_directory_is_recognized_case_insensitively(metastore: Metastore) -> None:
    """Rule 8.3: ``<db>/<NAME>`` still counts as the default directory, so the table moves to the new default."""
    # given
    customers = table_row(metastore, "sales", "customers")
    upper = customers.sd.location.removesuffix("customers") + "CUSTOMERS"
    set_location(metastore, customers.sd_id, upper)

    # when
    result = preview(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")

    # then
    database = Database.objects.on(metastore).get(name="ops")
    assert result.after.location == f"{database.location_uri}/customers"
    assert result.moves == ()  # .../CUSTOMERS does not exist on disk: only the location changes (8.7)
    assert warning_codes(result) == ["source_missing"]


@hive4_only
def test_hive4_uses_the_databases_managed_location(metastore: Metastore) -> None:
    """Rules 8.3/8.5 (4.x): the default directory is relative to the managed location when one is set."""
    # given
    warehouse = Path(metastore.config.warehouse)
    managed_marketing = location_of(warehouse / "managed" / "marketing.db")
    with allow_metastore_writes():
        Database.objects.using(metastore.alias).filter(name="marketing").update(managed_location_uri=managed_marketing)

    # when
    moved = preview(metastore, "ALTER TABLE sales.customers RENAME TO marketing.customers")
    with allow_metastore_writes():
        Database.objects.using(metastore.alias).filter(name="sales").update(
            managed_location_uri=location_of(warehouse / "managed" / "sales.db")
        )
    kept = preview(metastore, "ALTER TABLE sales.customers RENAME TO marketing.customers_2")

    # then
    assert [(m.source, m.destination) for m in moved.moves] == [
        (table_row(metastore, "sales", "customers").sd.location, f"{managed_marketing}/customers")
    ]
    assert kept.moves == ()
    assert kept.after.location == table_row(metastore, "sales", "customers").sd.location


@per_version
def test_rename_onto_an_existing_directory_is_blocked(metastore: Metastore, warehouse: Path) -> None:
    """Rule 8.7: 'New location for this table … already exists' (checked before anything moves)."""
    # given
    (warehouse / "ops.db" / "customers").mkdir(parents=True)

    # when
    result = preview(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")

    # then
    assert codes(result) == [("destination_exists", "8.7")]
    assert result.blockers[0].message == (
        f"New location for this table hive.ops.customers already exists : "
        f"{location_of(warehouse / 'ops.db' / 'customers')}"
    )


@per_version
def test_rename_keeps_the_filesystem_and_refuses_one_it_cannot_reach(metastore: Metastore) -> None:
    """Rules 8.5/8.7: the new location keeps the old scheme and authority; an unreachable one cannot be moved.
    (Hive 4 judges the default directory by the managed location, rule 8.3: set too.)"""
    # given
    customers = table_row(metastore, "sales", "customers")
    set_location(metastore, customers.sd_id, "hdfs://nn1:8020/warehouse/sales.db/customers")
    hdfs = {"location_uri": "hdfs://nn1:8020/warehouse/sales.db"}
    if metastore.schema.has(Database, "managed_location_uri"):
        hdfs["managed_location_uri"] = hdfs["location_uri"]
    with allow_metastore_writes():
        Database.objects.using(metastore.alias).filter(name="sales").update(**hdfs)

    # when
    result = preview(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")

    # then
    ops = Database.objects.on(metastore).get(name="ops")
    assert result.after.location == f"hdfs://nn1:8020{path_of(ops.location_uri)}/customers"
    assert codes(result) == [("filesystem_unreachable", "8.7")]
    assert result.moves == ()


# ACID (TransactionalValidationListener, DDLTask) ---------------------------------------------------------------------


@per_version
@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE sales.payments_acid UNSET TBLPROPERTIES ('transactional')",
        "ALTER TABLE sales.payments_acid SET TBLPROPERTIES ('transactional'='false')",
        "ALTER TABLE ops.job_runs_acid SET TBLPROPERTIES ('transactional'='FALSE', 'comment'='x')",
    ],
)
def test_transactional_cannot_be_unset(metastore: Metastore, statement: str) -> None:
    """A transactional table stays transactional."""
    # given / when
    result = preview(metastore, statement)

    # then
    assert [(f.code, f.message) for f in result.blockers] == [
        ("acid_unset", "TBLPROPERTIES with 'transactional'='true' cannot be unset")
    ]


@per_version
def test_becoming_acid_needs_orc_and_on_hive_2_3_buckets(metastore: Metastore) -> None:
    """Full ACID needs an ORC table (and on 2.3 a bucketed one); insert-only needs no ORC; external never."""
    # given
    customers = table_row(metastore, "sales", "customers")

    # when
    parquet = preview(metastore, "ALTER TABLE sales.customers SET TBLPROPERTIES ('transactional'='true')")
    insert_only = preview(
        metastore,
        "ALTER TABLE sales.customers SET TBLPROPERTIES "
        "('transactional'='true', 'transactional_properties'='insert_only')",
    )
    external = preview(metastore, "ALTER TABLE marketing.campaigns SET TBLPROPERTIES ('transactional'='true')")
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=customers.sd_id).update(
            input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
        )
    orc = preview(metastore, "ALTER TABLE sales.customers SET TBLPROPERTIES ('transactional'='true')")

    # then
    bucketing = [("acid_bucketing", "acid")] if line(metastore) == "2.3" else []
    assert codes(parquet) == [("acid_format", "acid"), *bucketing]
    assert codes(insert_only) == bucketing
    assert codes(orc) == bucketing
    assert ("acid_external", "acid") in codes(external)
    assert external.blockers[0].message == (
        "`marketing`.`campaigns` cannot be declared transactional because it's an external table"
    )


@per_version
def test_replace_columns_on_orc_cannot_drop_columns(metastore: Metastore) -> None:
    """REPLACE COLUMNS on an ORC table (payments_acid) may rename or widen columns, not leave fewer of them: Hive's
    client refuses it with its own message (REPLACE_CANNOT_DROP_COLUMNS), on every version."""
    # given
    columns = "payment_id bigint, order_id bigint, amount decimal(10,2)"

    # when
    fewer = preview(metastore, f"ALTER TABLE sales.payments_acid REPLACE COLUMNS ({columns})")
    renamed = preview(metastore, f"ALTER TABLE sales.payments_acid REPLACE COLUMNS ({columns}, paid timestamp)")
    more = preview(metastore, f"ALTER TABLE sales.payments_acid REPLACE COLUMNS ({columns}, paid_at timestamp, n int)")

    # then
    assert [(f.code, f.message) for f in fewer.blockers] == [
        (
            "replace_cannot_drop_columns",
            "Replacing columns cannot drop columns for table sales.payments_acid. SerDe may be incompatible",
        )
    ]
    assert renamed.blockers == ()
    assert more.blockers == ()


@per_version
def test_replace_columns_dropping_parquet_columns_follows_each_versions_client(metastore: Metastore) -> None:
    """Parquet: an unpartitioned table may drop columns everywhere; a partitioned one only with CASCADE from 3.1
    (2.3.10's DDLTask has no such check); text tables may always drop columns."""
    # given
    orders = "id bigint, customer_id bigint, amount decimal(10,2)"

    # when
    customers = preview(metastore, "ALTER TABLE sales.customers REPLACE COLUMNS (id bigint, name string)")
    uncascaded = preview(metastore, f"ALTER TABLE sales.orders REPLACE COLUMNS ({orders})")
    cascaded = preview(metastore, f"ALTER TABLE sales.orders REPLACE COLUMNS ({orders}) CASCADE")
    text = preview(metastore, "ALTER TABLE default.scratch_notes REPLACE COLUMNS (id int)")

    # then
    refused = [] if line(metastore) == "2.3" else ["replace_cannot_drop_columns"]
    assert [f.code for f in customers.blockers] == []
    assert [f.code for f in uncascaded.blockers] == refused
    assert [f.code for f in cascaded.blockers] == []
    assert [f.code for f in text.blockers] == []
    if refused:
        assert uncascaded.blockers[0].message == (
            "Replacing columns cannot drop columns for table sales.orders. SerDe may be incompatible"
        )


@per_version
def test_replace_columns_on_an_avro_table_is_refused(metastore: Metastore) -> None:
    """AvroSerDe is not among the serdes whose columns REPLACE COLUMNS may replace, on any version (Hive:
    CANNOT_REPLACE_COLUMNS)."""
    # given
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        SerDe.objects.using(metastore.alias).filter(id=customers.sd.serde_id).update(
            slib="org.apache.hadoop.hive.serde2.avro.AvroSerDe"
        )

    # when
    result = preview(metastore, "ALTER TABLE sales.customers REPLACE COLUMNS (id bigint, name string, email string)")

    # then
    assert [(f.code, f.message) for f in result.blockers] == [
        (
            "replace_columns_serde",
            "Replace columns is not supported for table sales.customers. SerDe may be incompatible.",
        )
    ]


@per_version
def test_reordering_columns_of_an_orc_table_is_refused(metastore: Metastore) -> None:
    """CHANGE … FIRST|AFTER on an ORC table: Hive's client refuses the clause (CANNOT_REORDER_COLUMNS) before the
    metastore judges the types; a plain CHANGE and a Parquet table's reorder are allowed."""
    # given
    clause = "CHANGE paid_at paid_at timestamp"

    # when
    first = preview(metastore, f"ALTER TABLE sales.payments_acid {clause} FIRST")
    after = preview(metastore, f"ALTER TABLE sales.payments_acid {clause} AFTER amount")
    in_place = preview(metastore, f"ALTER TABLE sales.payments_acid {clause} COMMENT 'when'")
    parquet = preview(metastore, "ALTER TABLE sales.customers CHANGE country country string AFTER id")

    # then
    message = "Reordering columns is not supported for table sales.payments_acid. SerDe may be incompatible"
    assert (first.blockers[0].code, first.blockers[0].message) == ("cannot_reorder_columns", message)  # Hive's first
    assert [f.code for f in after.blockers] == ["cannot_reorder_columns"]
    assert in_place.blockers == ()
    assert parquet.blockers == ()


SERDES = {
    "orc": "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
    "parquet": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    "text": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
    "avro": "org.apache.hadoop.hive.serde2.avro.AvroSerDe",
    "dynamic": "org.apache.hadoop.hive.serde2.dynamic_type.DynamicSerDe",
    "iceberg": "org.apache.iceberg.mr.hive.HiveIcebergSerDe",
    "columnset": "org.apache.hadoop.hive.serde.thrift.columnsetSerDe",
}
# (serde, dropping, partitioned, cascade) -> the refusal on 2.3, 3.1 and 4.0 ("" allowed, "serde", "drop").
REPLACE_CASES = [
    ("orc", True, False, False, ("drop", "drop", "drop")),
    ("orc", False, True, False, ("", "", "")),
    ("parquet", True, False, False, ("", "", "")),
    ("parquet", True, True, False, ("", "drop", "drop")),
    ("parquet", True, True, True, ("", "", "")),
    ("text", True, True, False, ("", "", "")),
    ("avro", False, False, False, ("serde", "serde", "serde")),
    ("dynamic", True, False, False, ("", "", "serde")),
    ("iceberg", True, False, False, ("serde", "serde", "")),
    ("columnset", True, False, False, ("", "", "")),
]


@pytest.mark.parametrize(("serde", "dropping", "partitioned", "cascade", "expected"), REPLACE_CASES)
def test_replace_columns_refusals_by_serde_and_version(
    serde: str, dropping: bool, partitioned: bool, cascade: bool, expected: tuple[str, str, str]
) -> None:
    """REPLACE COLUMNS rules of Hive's client per serde and version (DDLTask, AlterTableReplaceColumnsOperation)."""
    # given
    codes_by_kind = {"": [], "serde": ["replace_columns_serde"], "drop": ["replace_cannot_drop_columns"]}

    # when
    found = [
        [
            f.code
            for f in check_replace_columns_serde(
                database="db",
                table="t",
                serde=SERDES[serde],
                old_count=3,
                new_count=2 if dropping else 3,
                cascade=cascade,
                partitioned=partitioned,
                version=version,
            )
        ]
        for version in VERSIONS.values()
    ]

    # then
    assert found == [codes_by_kind[kind] for kind in expected]


def test_a_transactional_table_drops_no_orc_columns_even_without_schema_evolution() -> None:
    """``isSchemaEvolutionEnabled`` is true for a transactional table whatever hive.exec.schema.evolution says; a
    non-transactional ORC table without schema evolution may drop columns."""
    # given
    common = dict(database="db", table="t", serde=SERDES["orc"], old_count=3, new_count=2, cascade=False)

    # when
    without = check_replace_columns_serde(**common, partitioned=False, version=V31, schema_evolution=False)
    with_it = check_replace_columns_serde(**common, partitioned=False, version=V31, schema_evolution=True)

    # then
    assert without == []
    assert [f.code for f in with_it] == ["replace_cannot_drop_columns"]


# 17 Rename partition ------------------------------------------------------------------------------------------------


@per_version
def test_rename_partition_preconditions(metastore: Metastore) -> None:
    """Rule 17.2: the old partition exists, the new one does not, and the new spec names every key."""
    # given
    source = "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3)"

    # when
    missing = preview(
        metastore, "ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=4) RENAME TO PARTITION (dt='x', hour=4)"
    )
    taken = preview(metastore, f"{source} RENAME TO PARTITION (dt='2024-01-03', hour=3)")
    partial = preview(metastore, f"{source} RENAME TO PARTITION (dt='2024-01-09')")

    # then
    assert [(f.code, f.message) for f in missing.blockers] == [
        (
            "unknown_partition",
            "Unable to rename partition because old partition does not exist: `sales`.`orders` dt=2024-01-01/hour=4",
        )
    ]
    assert ("partition_exists", "17.2") in codes(taken)
    assert "Partition already exists:sales.orders.[2024-01-03, 3]" in [f.message for f in taken.blockers]
    assert codes(partial) == [("partition_spec", "17.2")]


@per_version
def test_renamed_partition_of_a_managed_table_moves_under_the_table_root(metastore: Metastore) -> None:
    """Rules 17.3/17.4: managed data moves to ``<table location>/<new name>``, even from outside the root."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    result = preview(
        metastore,
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=3) RENAME TO PARTITION (dt='2024-02-01', hour=3)",
    )

    # then
    assert result.blockers == ()
    assert [(m.source, m.destination) for m in result.moves] == [
        (
            location_of(Path(metastore.config.warehouse) / "archive/sales/orders/dt=2024-01-01/hour=3"),
            f"{orders.sd.location}/dt=2024-02-01/hour=3",
        )
    ]


@per_version
def test_external_partition_rename_keeps_the_location_and_hive4_reads_the_external_parameter(
    metastore: Metastore,
) -> None:
    """Rule 17.3: external tables keep partition locations; 4.x decides by the EXTERNAL parameter, 3.1 by the type."""
    # given
    clause = "PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-02', hour=3)"
    orders = table_row(metastore, "sales", "orders")
    external = preview(metastore, f"ALTER TABLE marketing.clicks {clause}")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(table_id=orders.id, key="EXTERNAL", value="TRUE")

    # when
    flagged = preview(metastore, f"ALTER TABLE sales.orders {clause}")

    # then
    assert external.moves == ()
    assert "SDS" not in {step.metastore_table for step in external.steps}
    assert (flagged.moves == ()) is (line(metastore) == "4.0")


@per_version
def test_renaming_a_partition_without_a_directory_changes_only_metadata(metastore: Metastore) -> None:
    """Rule 17.4: the location is set to the target even when the source directory is missing."""
    # given / when
    result = preview(
        metastore,
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-03', hour=9) RENAME TO PARTITION (dt='2024-02-03', hour=9)",
    )

    # then
    assert result.blockers == ()
    assert result.moves == ()
    assert warning_codes(result) == ["source_missing"]
    assert "SDS" in {step.metastore_table for step in result.steps}


@per_version
def test_renaming_a_partition_onto_an_existing_directory_is_blocked(metastore: Metastore, warehouse: Path) -> None:
    """Rule 17.4: 'New location for this table already exists'."""
    # given
    (warehouse / "sales.db/orders/dt=2024-02-02/hour=3").mkdir(parents=True)

    # when
    result = preview(
        metastore,
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-02', hour=3)",
    )

    # then
    assert codes(result) == [("destination_exists", "17.4")]


@per_version
def test_a_renamed_partition_keeps_its_filesystem_which_the_console_cannot_reach(metastore: Metastore) -> None:
    """Rule 17.4: the target keeps the partition location's scheme and authority; the console cannot move data on
    s3a."""
    # given
    sd_id = partition_sd(metastore, "sales", "orders", "dt=2024-01-02/hour=3")
    set_location(metastore, sd_id, "s3a://bucket/orders/dt=2024-01-02/hour=3")

    # when
    result = preview(
        metastore,
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-02', hour=3)",
    )

    # then
    target = f"s3a://bucket{urlsplit(table_row(metastore, 'sales', 'orders').sd.location).path}/dt=2024-02-02/hour=3"
    assert codes(result) == [("filesystem_unreachable", "17.4")]
    assert [s.params for s in result.steps if s.metastore_table == "SDS"] == [(target, sd_id)]


@per_version
def test_renaming_a_partition_on_an_unreachable_filesystem_is_blocked(metastore: Metastore) -> None:
    """Rule 17.4: the console cannot move data it cannot reach, so it does not repoint the partition either."""
    # given
    orders = table_row(metastore, "sales", "orders")
    set_location(metastore, orders.sd_id, "hdfs://nn1/warehouse/sales.db/orders")
    sd_id = partition_sd(metastore, "sales", "orders", "dt=2024-01-02/hour=3")
    set_location(metastore, sd_id, "hdfs://nn1/warehouse/sales.db/orders/dt=2024-01-02/hour=3")

    # when
    result = preview(
        metastore,
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-02', hour=3)",
    )

    # then
    assert codes(result) == [("filesystem_unreachable", "17.4")]


# Drop partitions ----------------------------------------------------------------------------------------------------


@per_version
def test_drop_partition_preconditions(metastore: Metastore) -> None:
    """The keys must be partition keys of a partitioned table, and something must match unless IF EXISTS."""
    # given / when
    unknown_key = preview(metastore, "ALTER TABLE sales.orders DROP PARTITION (region='x')")
    no_match = preview(metastore, "ALTER TABLE sales.orders DROP PARTITION (dt='1999-01-01')")
    if_exists = preview(metastore, "ALTER TABLE sales.orders DROP IF EXISTS PARTITION (dt='1999-01-01')")
    unpartitioned = preview(metastore, "ALTER TABLE sales.customers DROP PARTITION (dt='1999-01-01')")

    # then
    assert [(f.code, f.message) for f in unknown_key.blockers] == [
        ("unknown_partition_key", "region is not a partition key of `sales`.`orders`; keys: dt, hour")
    ]
    assert [(f.code, f.message) for f in no_match.blockers] == [
        ("no_partition_matches", "No partition of `sales`.`orders` matches PARTITION (`dt`='1999-01-01')")
    ]
    assert if_exists.blockers == ()
    assert if_exists.steps == ()
    assert codes(unpartitioned) == [("not_partitioned", "ddl")]

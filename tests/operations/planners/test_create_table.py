"""CREATE TABLE on the suite's metastores: the rows Hive writes per version, Hive's rules as blockers, the directory,
the CREATE_TABLE event, and the revert that drops exactly what was created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog_admin.errors import ApplicationError
from catalog_admin.models import NotificationEvent
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, metastore_dump, sequences_behind

pytestmark = pytest.mark.django_db

FULL = (
    "CREATE TABLE sales.fresh (id int COMMENT 'the id', tags map<string,int>) COMMENT 'new' "
    "PARTITIONED BY (dt string) CLUSTERED BY (id) SORTED BY (id) INTO 4 BUCKETS "
    "ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\001' NULL DEFINED AS 'NA' STORED AS TEXTFILE "
    "TBLPROPERTIES ('team'='sales')"
)


def _rows(metastore: Metastore, name: str) -> dict:
    table = table_row(metastore, "sales", name)
    return {
        "type": table.type,
        "location": table.sd.location,
        "formats": (table.sd.input_format, table.sd.output_format, table.sd.serde.slib),
        "buckets": table.sd.num_buckets,
        "columns": list(table.sd.cd.columns.order_by("position").values_list("name", "type", "comment")),
        "keys": list(table.partition_keys.order_by("position").values_list("name", "type", "comment")),
        "params": dict(table.params.values_list("key", "value")),
        "serde_params": dict(table.sd.serde.params.values_list("key", "value")),
        "bucket_columns": list(table.sd.bucket_columns.order_by("position").values_list("name", flat=True)),
        "sort_columns": list(table.sd.sort_columns.order_by("position").values_list("name", "order")),
    }


def test_create_table_writes_the_rows_hive_writes(metastore: Metastore, warehouse: Path) -> None:
    """Every clause lands where Hive puts it; the managed directory is made under the database's; ids come from
    SEQUENCE_TABLE; one CREATE_TABLE event."""
    # given
    preview = alter_preview_statement(metastore=metastore, statement=FULL)
    assert preview.blockers == ()

    # when
    execution = execute(preview)

    # then
    rows = _rows(metastore, "fresh")
    assert rows["type"] == "MANAGED_TABLE"
    assert rows["location"].endswith("/sales.db/fresh") and Path(rows["location"].removeprefix("file:")).is_dir()
    assert rows["formats"] == (
        "org.apache.hadoop.mapred.TextInputFormat",
        "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
    )
    assert rows["columns"] == [("id", "int", "the id"), ("tags", "map<string,int>", None)]
    assert rows["keys"] == [("dt", "string", None)]
    assert (rows["buckets"], rows["bucket_columns"], rows["sort_columns"]) == (4, ["id"], [("id", 1)])
    assert rows["serde_params"] == {"field.delim": "\x01", "serialization.format": "\x01",
                                    "serialization.null.format": "NA"}  # fmt: skip
    expected = {"team": "sales", "comment": "new", "SORTBUCKETCOLSPREFIX": "TRUE"}
    if metastore.schema.capabilities.writes_bucketing_version:
        expected["bucketing_version"] = "2"
    ddl_time = rows["params"].pop("transient_lastDdlTime")
    assert rows["params"] == expected, "a partitioned table gets no basic statistics"
    assert int(ddl_time) == table_row(metastore, "sales", "fresh").create_time > 0
    assert sequences_behind(metastore) == {}
    assert execution.actual_counts["NOTIFICATION_LOG"]["insert"] == 1
    event = NotificationEvent.objects.using(metastore.alias).get()
    assert (event.event_type, event.db_name, event.table_name) == ("CREATE_TABLE", "sales", "fresh")


@pytest.mark.parametrize(
    ("stored_as", "formats"),
    [
        ("ORC", ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
                 "org.apache.hadoop.hive.ql.io.orc.OrcSerde")),
        ("PARQUET", ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                     "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                     "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")),
        ("AVRO", ("org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
                  "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
                  "org.apache.hadoop.hive.serde2.avro.AvroSerDe")),
        ("RCFILE", ("org.apache.hadoop.hive.ql.io.RCFileInputFormat",
                    "org.apache.hadoop.hive.ql.io.RCFileOutputFormat",
                    "org.apache.hadoop.hive.serde2.columnar.LazyBinaryColumnarSerDe")),
    ],
)  # fmt: skip
def test_stored_as_picks_hives_formats_and_an_unpartitioned_table_gets_zero_statistics(
    metastore: Metastore, warehouse: Path, stored_as: str, formats: tuple[str, str, str]
) -> None:
    """StorageFormatFactory's classes; a new unpartitioned managed table starts with accurate zero statistics
    (every column flagged from 3.0)."""
    # when
    execute(alter_preview_statement(metastore=metastore, statement=f"CREATE TABLE sales.f (a int, b string) "
                                                                    f"STORED AS {stored_as}"))  # fmt: skip

    # then
    rows = _rows(metastore, "f")
    assert rows["formats"] == formats
    assert rows["serde_params"] == {"serialization.format": "1"}
    assert {k: rows["params"][k] for k in ("numFiles", "numRows", "rawDataSize", "totalSize")} == dict.fromkeys(
        ("numFiles", "numRows", "rawDataSize", "totalSize"), "0"
    )
    accurate = json.loads(rows["params"]["COLUMN_STATS_ACCURATE"])
    flags = {"COLUMN_STATS": {"a": "true", "b": "true"}}
    assert accurate == {"BASIC_STATS": "true", **(flags if metastore.schema.version.capabilities.catalogs else {})}


def test_like_copies_the_storage_but_not_the_properties(metastore: Metastore, warehouse: Path) -> None:
    """``DDLTask.createTableLike``: columns, keys, formats, SerDe and bucketing of the source; its TBLPROPERTIES
    stay behind."""
    # given
    source = _rows(metastore, "orders")

    # when
    execute(alter_preview_statement(metastore=metastore, statement="CREATE TABLE sales.orders_copy LIKE sales.orders"))

    # then
    copy = _rows(metastore, "orders_copy")
    for key in ("formats", "buckets", "columns", "keys", "serde_params", "bucket_columns", "sort_columns"):
        assert copy[key] == source[key], key
    assert copy["location"].endswith("/sales.db/orders_copy")
    assert not {k for k in copy["params"] if k not in ("transient_lastDdlTime", "bucketing_version")}


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("CREATE TABLE sales.orders (a int)", "table_exists"),
        ("CREATE TABLE sales.n (a int, a string)", "duplicate_column"),
        ("CREATE TABLE sales.n (a int) PARTITIONED BY (a string)", "partition_column_repeated"),
        ("CREATE TABLE sales.n (a int) CLUSTERED BY (b) INTO 2 BUCKETS", "invalid_column"),
        ("CREATE TABLE sales.n (a int) LOCATION 'file:/etc/n'", "outside_roots"),
        ("CREATE EXTERNAL TABLE sales.n (a int) STORED AS ORC TBLPROPERTIES ('transactional'='true')",
         "acid_external"),
        ("CREATE TABLE sales.n (a int) STORED AS PARQUET TBLPROPERTIES ('transactional'='true')", "acid_format"),
        ("CREATE TABLE sales.n LIKE sales.nothing", "like_not_found"),
        ("CREATE TABLE sales.n (a int) ROW FORMAT DELIMITED LINES TERMINATED BY ','", "lines_terminated"),
    ],
)  # fmt: skip
def test_hive_rules_block_and_nothing_is_written(metastore: Metastore, statement: str, code: str) -> None:
    """A rule broken is a blocker naming it, and the plan has no statements: nothing can be written."""
    # given
    before = metastore_dump(metastore.alias)

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert code in {b.code for b in preview.blockers}
    assert preview.steps == () and preview.directories_created == ()
    with pytest.raises(ApplicationError):
        execute(preview)
    assert metastore_dump(metastore.alias) == before


def test_if_not_exists_on_an_existing_table_does_nothing(metastore: Metastore) -> None:
    # when
    preview = alter_preview_statement(metastore=metastore, statement="CREATE TABLE IF NOT EXISTS sales.orders (a int)")

    # then
    assert (preview.blockers, preview.steps, preview.events) == ((), (), None)
    assert [w.code for w in preview.warnings] == ["table_exists"]


def test_a_table_created_meanwhile_makes_the_plan_stale(metastore: Metastore, warehouse: Path) -> None:
    """Execution re-checks under the database row's lock that the name is still free."""
    # given
    preview = alter_preview_statement(metastore=metastore, statement="CREATE TABLE sales.twice (a int)")
    execute(alter_preview_statement(metastore=metastore, statement="CREATE TABLE sales.twice (b int)"))

    # when / then
    with pytest.raises(ApplicationError) as refused:
        execute(preview)
    assert refused.value.code == "stale_preview"


def _dump(metastore: Metastore) -> dict:
    """Every row but the notification log's and SEQUENCE_TABLE's (ids handed out stay handed out)."""
    return {t: rows for t, rows in metastore_dump(metastore.alias, events=False).items() if t != "SEQUENCE_TABLE"}


def test_revert_drops_every_created_row_and_the_empty_directory(metastore: Metastore, warehouse: Path) -> None:
    """The revert deletes exactly the created rows (children first), removes the directory the execution made, and
    writes Hive's DROP_TABLE."""
    # given
    rows_before = _dump(metastore)
    execution = execute(alter_preview_statement(metastore=metastore, statement=FULL))
    location = Path(table_row(metastore, "sales", "fresh").sd.location.removeprefix("file:"))

    # when
    revert = execute(revert_preview(execution=execution))

    # then
    assert revert.actual_counts == revert.expected_counts
    assert _dump(metastore) == rows_before
    assert not location.exists()
    assert NotificationEvent.objects.using(metastore.alias).order_by("event_id").last().event_type == "DROP_TABLE"


def test_revert_refuses_to_delete_files_written_since(metastore: Metastore, warehouse: Path) -> None:
    """Files in the directory the console made were written by someone since: the revert names them and waits."""
    # given
    execution = execute(alter_preview_statement(metastore=metastore, statement="CREATE TABLE sales.written (a int)"))
    location = Path(table_row(metastore, "sales", "written").sd.location.removeprefix("file:"))
    (location / "000000_0").write_text("1\n")

    # when
    preview = revert_preview(execution=execution)

    # then
    assert [b.code for b in preview.blockers] == ["files_written"]
    assert "000000_0" in preview.blockers[0].message
    assert preview.steps == () and preview.directories_removed == ()


def test_a_transactional_table_is_normalized_as_hives_listener_leaves_it(metastore: Metastore, warehouse: Path) -> None:
    """``'TRANSACTIONAL'='True'`` becomes ``transactional``=``true``; from 3.0 ``transactional_properties`` defaults
    to ``default`` (TransactionalValidationListener); 2.3 also wants the table bucketed."""
    # given
    bucketed = "CLUSTERED BY (a) INTO 2 BUCKETS " if metastore.schema.capabilities.acid_requires_bucketing else ""

    # when
    execute(alter_preview_statement(metastore=metastore, statement=f"CREATE TABLE sales.acid (a int) {bucketed}"
                                    "STORED AS ORC TBLPROPERTIES ('TRANSACTIONAL'='True')"))  # fmt: skip

    # then
    params = _rows(metastore, "acid")["params"]
    assert "TRANSACTIONAL" not in params and params["transactional"] == "true"
    normalizes = metastore.schema.capabilities.create_table_normalizes_transactional_properties
    assert params.get("transactional_properties") == ("default" if normalizes else None)


@pytest.mark.parametrize(
    ("properties", "code"),
    [("'transactional'='yes'", "acid_value"), ("'transactional'='true', 'transactional_properties'='x'",
                                               "acid_properties")],
)  # fmt: skip
def test_transactional_values_hive_refuses_block(metastore: Metastore, properties: str, code: str) -> None:
    # when
    preview = alter_preview_statement(metastore=metastore, statement="CREATE TABLE sales.acid (a int) CLUSTERED BY (a) "
                                      f"INTO 2 BUCKETS STORED AS ORC TBLPROPERTIES ({properties})")  # fmt: skip

    # then
    codes = {b.code for b in preview.blockers}
    normalizes = metastore.schema.capabilities.create_table_normalizes_transactional_properties
    assert code in codes or (code == "acid_properties" and not normalizes)

"""SHOW CREATE TABLE as Hive prints it: DDLTask.showCreateTable (2.3, 3.1) and ShowCreateTableOperation (4.0)."""

from __future__ import annotations

from catalog_admin.hive.show_create import CreateTableSource, escape_hive_command, escape_java, show_create_table

TEXT_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
TEXT_IN = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"

ORDERS = CreateTableSource(
    database="sales",
    name="orders",
    table_type="EXTERNAL_TABLE",
    columns=(("id", "bigint", None), ("note", "string", "it's free; text")),
    partition_keys=(("dt", "string", None), ("hour", "int", None)),
    params={"EXTERNAL": "TRUE", "comment": "Orders", "numRows": "10", "transient_lastDdlTime": "1700000000"},
    serde_lib=TEXT_SERDE,
    serde_params={"field.delim": ",", "serialization.format": ","},
    input_format=TEXT_IN,
    output_format=TEXT_OUT,
    location="file:/warehouse/sales.db/orders",
)


def test_hive_2_and_3_print_a_delimited_row_format_and_every_parameter() -> None:
    statement = show_create_table(ORDERS, operation=False)

    assert statement == (
        "CREATE EXTERNAL TABLE `sales.orders`(\n"
        "  `id` bigint, \n"
        "  `note` string COMMENT 'it\\'s free\\; text')\n"
        "COMMENT 'Orders'\n"
        "PARTITIONED BY ( \n"
        "  `dt` string, \n"
        "  `hour` int)\n"
        "ROW FORMAT DELIMITED \n"
        "  FIELDS TERMINATED BY ',' \n"
        "STORED AS INPUTFORMAT \n"
        f"  '{TEXT_IN}' \n"
        "OUTPUTFORMAT \n"
        f"  '{TEXT_OUT}'\n"
        "LOCATION\n"
        "  'file:/warehouse/sales.db/orders'\n"
        "TBLPROPERTIES (\n"
        "  'numRows'='10', \n"
        "  'transient_lastDdlTime'='1700000000')"
    )


def test_hive_4_prints_the_serde_its_properties_and_leaves_statistics_out() -> None:
    statement = show_create_table(ORDERS, operation=True)

    assert "ROW FORMAT SERDE \n  'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe' \n" in statement
    assert "WITH SERDEPROPERTIES ( \n  'field.delim'=',', \n  'serialization.format'=',') \n" in statement
    assert "DELIMITED" not in statement
    assert statement.endswith("TBLPROPERTIES (\n  'transient_lastDdlTime'='1700000000')")
    assert "PARTITIONED BY ( \n  `dt` string, \n  `hour` int)\nROW FORMAT" in statement  # no empty lines


def test_a_bucketed_parquet_table_prints_clustered_and_sorted_by() -> None:
    source = CreateTableSource(
        database="ops",
        name="jobs",
        table_type="MANAGED_TABLE",
        columns=(("job_id", "bigint", None),),
        params={},
        serde_lib=PARQUET_SERDE,
        serde_params={"serialization.format": "1"},
        input_format=PARQUET_IN,
        output_format=PARQUET_OUT,
        location="file:/w/jobs",
        bucket_columns=("job_id",),
        num_buckets=4,
        sort_columns=(("job_id", "ASC"),),
    )

    for operation in (False, True):
        statement = show_create_table(source, operation=operation)
        assert statement.startswith("CREATE TABLE `ops.jobs`(\n  `job_id` bigint)\nCLUSTERED BY")
        assert "CLUSTERED BY ( \n  job_id) \nSORTED BY ( \n  job_id ASC) \nINTO 4 BUCKETS\n" in statement
        assert f"ROW FORMAT SERDE \n  '{PARQUET_SERDE}' \nSTORED AS INPUTFORMAT" in statement
        assert "SERDEPROPERTIES" not in statement  # serialization.format=1: dropped by both


def test_a_view_prints_its_expanded_text() -> None:
    view = CreateTableSource(
        "sales", "v", "VIRTUAL_VIEW", view_expanded_text="SELECT `o`.`id` FROM `sales`.`orders` `o`"
    )

    assert (
        show_create_table(view, operation=False) == "CREATE VIEW `sales.v` AS SELECT `o`.`id` FROM `sales`.`orders` `o`"
    )


def test_an_hbase_table_has_no_location_and_is_stored_by_its_handler() -> None:
    handler = "org.apache.hadoop.hive.hbase.HBaseStorageHandler"
    source = CreateTableSource(
        "default",
        "h",
        "EXTERNAL_TABLE",
        columns=(("k", "string", None),),
        params={"storage_handler": handler},
        serde_lib="org.apache.hadoop.hive.hbase.HBaseSerDe",
        serde_params={"hbase.columns.mapping": ":key"},
        location="file:/ignored",
    )

    statement = show_create_table(source, operation=False)

    assert f"STORED BY \n  '{handler}' \nWITH SERDEPROPERTIES ( \n  'hbase.columns.mapping'=':key')" in statement
    assert "LOCATION" not in statement
    assert "storage_handler" not in statement.split("TBLPROPERTIES")[1]


def test_escaping_follows_hives_output() -> None:
    assert escape_hive_command("a'b;c") == "a\\'b\\;c"
    assert escape_java('\x01\t"é\\') == '\\u0001\\t"\\u00E9\\\\'  # quotes verbatim (the witness)

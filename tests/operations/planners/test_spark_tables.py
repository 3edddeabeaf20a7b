"""
Spark's data-source tables keep working (issue 25, case 9): the SerDe parameter ``path`` Spark reads moves with the
table's location (SET LOCATION, relocation, a compaction of the root) and comes back on revert; what Spark refuses on
its tables because readers would lose data is blocked with the reason. The tables are made data-source tables the
way Spark's HiveExternalCatalog stores them (``spark.sql.sources.provider`` and ``path``); Spark itself writes them
in ``tests/witness/test_spark_datasource.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Column, SerDeParam, TableParam
from catalog_admin.seeding.files import encode_rows
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Preview
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.relocate import relocate_execute
from operations.services.revert import revert_preview
from operations.spark.programs import relocate as relocate_program
from tests.fixtures.factories import table_row
from tests.fixtures.operations import location_of, path_of

pytestmark = pytest.mark.usefixtures("warehouse")


def as_datasource(metastore: Metastore, provider: str, *, path: str | None = None, **params: str) -> str:
    """sales.customers made a Spark ``USING <provider>`` table: the provider, Spark's path (its location unless
    given) and any more TABLE_PARAMS; its path."""
    customers = table_row(metastore, "sales", "customers")
    path = path or customers.sd.location
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).bulk_create(
            [TableParam(table_id=customers.id, key=k, value=v)
             for k, v in {"spark.sql.sources.provider": provider, **params}.items()]
        )  # fmt: skip
        SerDeParam.objects.using(metastore.alias).create(serde_id=customers.sd.serde_id, key="path", value=path)
    return path


def spark_path(metastore: Metastore) -> str:
    serde_id = table_row(metastore, "sales", "customers").sd.serde_id
    return SerDeParam.objects.using(metastore.alias).get(serde_id=serde_id, key="path").value


def codes(preview: Preview) -> set[str]:
    return {b.code for b in preview.blockers}


def execute(preview: Preview):  # noqa: ANN201 - an Execution
    return alter_execute(preview=preview, actor="steward", source="cli")


def test_set_location_moves_sparks_path_and_revert_brings_it_back(metastore: Metastore, warehouse: Path) -> None:
    """The plan's statements point the SerDe's path where the location goes; revert writes the old path back."""
    # given
    old = as_datasource(metastore, "parquet")
    new = location_of(warehouse / "sales.db" / "customers_elsewhere")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{new}'"
    )
    forward = execute(preview)
    moved = spark_path(metastore)
    execute(revert_preview(execution=forward))

    # then
    step = next(s for s in preview.steps if s.metastore_table == "SERDE_PARAMS")
    assert step.action == "update" and new in step.params
    assert ("path", new) in preview.after.serde_params
    assert moved == new
    assert spark_path(metastore) == old


def test_a_relocation_moves_sparks_path_with_the_data_and_revert_restores_it(
    metastore: Metastore, warehouse: Path
) -> None:
    """SET LOCATION … WITH DATA of a data-source table: after the swap Spark reads the copy, after revert the
    source."""
    # given
    old = as_datasource(metastore, "parquet")
    target = location_of(warehouse / "sales.db" / "customers_v2")
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{target}' WITH DATA"
    )

    # when
    execution = relocate_execute(
        preview=preview,
        actor="steward",
        source="cli",
        run_program=lambda plan: relocate_program.run(None, plan, [].append),
    )
    moved = spark_path(metastore)
    execute(revert_preview(execution=execution))

    # then
    assert preview.blockers == (), preview.blockers
    assert "SERDE_PARAMS" in {s.metastore_table for s in preview.steps}
    assert moved == target
    assert spark_path(metastore) == old


def test_a_relocation_is_refused_where_spark_reads_another_directory(metastore: Metastore, warehouse: Path) -> None:
    """A path other than the location: the data moved would not be what Spark reads."""
    # given
    as_datasource(metastore, "parquet", path=location_of(warehouse / "sales.db" / "somewhere_else"))
    target = location_of(warehouse / "sales.db" / "customers_v2")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{target}' WITH DATA"
    )

    # then
    assert codes(preview) == {"spark_path_elsewhere"}
    assert preview.steps == ()


def test_converting_a_data_source_table_is_blocked(metastore: Metastore) -> None:
    """Spark reads a USING parquet table as parquet whatever the metastore says: ORC files would be unreadable."""
    # given
    as_datasource(metastore, "parquet")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers SET FILEFORMAT ORC WITH DATA"
    )

    # then
    assert "spark_datasource_convert" in codes(preview)
    message = next(b.message for b in preview.blockers if b.code == "spark_datasource_convert")
    assert "spark.sql.sources.provider=parquet" in message


def test_compacting_a_table_spark_bucketed_is_blocked(metastore: Metastore) -> None:
    """Spark's bucketing lives in TABLE_PARAMS (not BUCKETING_COLS): its one-file-per-bucket layout is named."""
    # given
    as_datasource(metastore, "parquet", **{"spark.sql.sources.schema.numBuckets": "4"})

    # when
    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers CONCATENATE")

    # then
    assert "spark_bucketed_rewrite" in codes(preview)
    assert "INVALID_BUCKET_FILE" in next(b.message for b in preview.blockers if b.code == "spark_bucketed_rewrite")


@pytest.mark.parametrize(
    "clause",
    [
        "CHANGE COLUMN country region string",
        "CHANGE COLUMN id id string",
        "REPLACE COLUMNS (id bigint, name string)",
    ],
    ids=["rename", "retype", "replace"],
)
def test_column_changes_spark_reads_as_null_are_blocked_on_by_name_formats(metastore: Metastore, clause: str) -> None:
    """Spark and Hive read parquet columns by name and type: a rename, retype or replace would read NULL."""
    # given
    as_datasource(metastore, "parquet")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=f"ALTER TABLE sales.customers {clause}")

    # then
    assert codes(preview) == {"spark_by_name_columns"}
    assert preview.steps == ()


@pytest.mark.parametrize(
    "clause", ["CHANGE COLUMN country country string COMMENT 'ISO code'", "ADD COLUMNS (tier string)"],
    ids=["comment", "add"],
)  # fmt: skip
def test_column_changes_spark_reads_the_same_way_go_through(metastore: Metastore, clause: str) -> None:
    """A comment or a new column leaves every existing file readable."""
    # given
    as_datasource(metastore, "parquet")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=f"ALTER TABLE sales.customers {clause}")

    # then
    assert preview.blockers == (), preview.blockers


@pytest.mark.parametrize("provider", ["csv", "json"])
def test_columns_of_a_placeholder_schema_are_not_changed(metastore: Metastore, provider: str) -> None:
    """A USING csv/json table's metastore columns are Spark's placeholder (col array<string>): ADD COLUMNS would
    rebuild Spark's schema copy from it."""
    # given
    as_datasource(metastore, provider)
    cd_id = table_row(metastore, "sales", "customers").sd.cd_id
    with allow_metastore_writes():
        columns = Column.objects.using(metastore.alias).filter(cd_id=cd_id)
        columns.exclude(name="id").delete()
        columns.update(name="col", type="array<string>", comment="from deserializer")

    # when
    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers ADD COLUMNS (x int)")

    # then
    assert codes(preview) == {"spark_placeholder_columns"}
    assert "spark.sql.sources.schema" in preview.blockers[0].message


def test_renaming_a_column_of_a_hive_parquet_table_warns_that_its_files_read_null(metastore: Metastore) -> None:
    """Hive allows the rename on its own Parquet tables, but the files keep the old name: the preview says so."""
    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers CHANGE country region string"
    )

    # then
    assert preview.blockers == (), preview.blockers
    warning = next(w.message for w in preview.warnings if w.code == "renamed_by_name")
    assert "renaming country to region" in warning and "read as NULL" in warning


def test_compacting_a_data_source_tables_root_keeps_sparks_path_at_its_root(metastore: Metastore) -> None:
    """An unpartitioned table's rewrite puts the new files into its own root (the old ones to the trash): its
    location and Spark's path stay where they are, so no SerDe parameter changes."""
    # given
    as_datasource(metastore, "parquet")
    customers = table_row(metastore, "sales", "customers")
    columns = (("id", "bigint"), ("name", "string"), ("email", "string"), ("country", "string"))
    for number in (1, 2):
        rows = [(9000 + number, f"n{number}", f"e{number}", "DE")]
        (path_of(customers.sd.location) / f"00000{number}_9").write_bytes(encode_rows("parquet", columns, rows))

    # when
    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers CONCATENATE")

    # then
    assert preview.blockers == (), preview.blockers
    unit = preview.data_copy.units[0]
    assert unit.source == customers.sd.location and "/_compacted-" in unit.destination
    assert not any(s.metastore_table in ("SERDE_PARAMS", "SDS") for s in preview.steps)
    assert preview.after.location == customers.sd.location
    assert preview.after.serde_params == preview.before.serde_params

"""
Issue 3's proof: an ALTER TABLE run by the console leaves the metastore and the table's folders as Hive 2.3 does.

Each test makes two identical tables through Spark (``spark_twins``: ``diff_hive.<t>`` and ``diff_console.<t>``,
parquet, partitioned by (dt string, hour int), one partition outside the table root, Hive-style column statistics),
runs one statement through Hive 2.3's own Driver on the first (``hive_ql``: HiveQL parser → DDLSemanticAnalyzer →
DDLTask → HMSHandler → HiveAlterHandler → ObjectStore, in Spark's JVM, as Beeline would) and through the console on
the second (``alter_preview_statement`` + ``alter_execute``, which commit), then compares:

* the two metastore images (``tests/witness/differential.py``: every row of the table, with ids, database names, each
  copy's own location prefixes, creation times and ``transient_lastDdlTime`` left out): their ``differences`` are
  exactly the differences the test names, nothing else;
* the two folder trees (the table's folder, its outside and elsewhere folders, the console's trash), likewise;
* the whole metastore's orphan rows, which neither side may add;
* the rows Spark reads back from the console's table after ``REFRESH TABLE``: the inserted rows, as from Hive's.

Spark SQL alters tables its own way (it copies the table's columns into a renamed partition, lets the metastore
recount numFiles/totalSize on every alter, stamps ``spark.sql.partitionProvider``), so it is the witness only where
Hive's Driver cannot run the statement or the table is Spark's: DROP PARTITION (its analysis needs classes Spark does
not ship) and Spark's data-source (``USING parquet``) tables, whose ``path`` only Spark keeps.

The differences the console makes on purpose, each asserted where it shows:

* Hive 2.3 deletes the column statistics of every partition a table RENAME moves (and leaves those of a partition
  outside the root under the old table name); a renamed partition loses its statistics too; a column rename drops
  the column's statistics and its COLUMN_STATS_ACCURATE flag. The console keeps them all, under the new names.
* Hive leaves Spark's copy of the schema (``spark.sql.sources.schema``) stale after ADD COLUMNS and CHANGE COLUMN;
  the console rewrites it to what Spark itself writes (after Spark's own ADD COLUMNS the two copies are identical).
* Hive's client (DDLTask) stamps ``last_modified_by``/``last_modified_time`` on the table, or on the partition it
  alters; the console does not.
* DROP PARTITION: Hive deletes a managed partition's data; the console moves it to ``<database>/.catalog-admin-trash``.
  Both remove the key folders the drop empties inside the table root (``dt=…/``), but Hive also removes the emptied
  folder above a partition location outside the table root; the console removes no folder outside the table root.
* Not Hive's doing but Spark's, and not copied (where Spark is the witness): Spark stamps
  ``spark.sql.partitionProvider`` on every ALTER of a partitioned table.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from catalog_admin.models import Table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.partitions import get_partition_detail
from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from tests.fixtures.spark import TWIN_ROWS, HiveQLError, TableCopy, Twins
from tests.witness.differential import ABSENT, differences, metastore_image, orphans, read_rows, tree_image

AnalysisException = pytest.importorskip("pyspark.errors").AnalysisException

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

IN_ROOT = ("dt=2024-01-01/hour=1", "dt=2024-01-01/hour=2", "dt=2024-01-02/hour=1")
OUTSIDE = "dt=2024-01-03/hour=0"
COLUMNS = ("amount", "id", "name")
# Written by HiveQL's DDLTask (the client), not by the metastore.
HIVE_CLIENT_STAMPS = ("last_modified_by", "last_modified_time")
SCHEMA_KEY = "spark.sql.sources.schema"
# A value Hive escapes in partition names and directories (', * and [ ]) with what it keeps (the space, the é).
ESCAPED_VALUE = "a'b*[c] café"
ESCAPED_SPEC = "(dt='a\\'b*[c] café', hour=1)"
ESCAPED_NAME = "dt=a%27b%2A%5Bc%5D café/hour=1"
DATASOURCE = pytest.mark.parametrize("datasource", [False, True], ids=["hive_serde", "datasource"])


@dataclass(frozen=True)
class Outcome:
    """Both copies after the statement, the console copy's image before it, and how they differ."""

    hive: TableCopy
    console: TableCopy
    before: dict[str, Any]
    metastore: dict[tuple[str, ...], tuple[Any, Any]]
    trees: dict[tuple[str, ...], tuple[Any, Any]]


def alter_both(
    metastore: Metastore,
    twins: Twins,
    statement: str,
    *,
    witness: Callable[[str], Any],
    renamed_to: str = "",
) -> Outcome:
    """
    Run ``statement`` through ``witness`` (Hive's Driver, or Spark SQL) on the Hive copy and through the console on
    the other.

    ``{table}``, ``{database}`` and ``{elsewhere}`` in the statement are each copy's own.
    """
    orphans_before = orphans()
    before = metastore_image(twins.console)
    witness(_for(statement, twins.hive))

    preview = alter_preview_statement(metastore=metastore, statement=_for(statement, twins.console))
    assert not preview.blockers, preview.blockers
    execution = alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI, reason="witness")
    assert execution.state == Execution.State.SUCCEEDED

    hive, console = twins.hive, twins.console
    if renamed_to:
        hive, console = hive.renamed(renamed_to), console.renamed(renamed_to)
    assert metastore_image(hive) and metastore_image(console), "both copies exist after the statement"
    assert orphans() == orphans_before, "neither side leaves rows that nothing refers to"
    return Outcome(
        hive=hive,
        console=console,
        before=before,
        metastore=differences(metastore_image(hive), metastore_image(console)),
        trees=differences(tree_image(hive), tree_image(console)),
    )


def _for(statement: str, copy: TableCopy) -> str:
    return statement.format(table=copy.qualified, database=copy.database, elsewhere=f"file:{copy.elsewhere}")


def statistics(image: dict[str, Any], partition: str, column: str, **changes: Any) -> dict[str, Any]:
    """One PART_COL_STATS row of an image, with ``changes``."""
    return {**image["partitions"][partition]["column_statistics"][column], **changes}


def without_hive_client_stamps(
    found: dict[tuple[str, ...], tuple[Any, Any]], owner: tuple[str, ...] = ()
) -> dict[tuple[str, ...], Any]:
    """``found`` less the parameters Hive's client (DDLTask) stamps on the table, or on the partition ``owner``
    (``("partitions", name)``) it alters: asserted to be there on the Hive copy only."""
    stamps = {(*owner, "params", key) for key in HIVE_CLIENT_STAMPS}
    for path in stamps:
        hive, console = found[path]
        assert hive not in (None, ABSENT) and console == ABSENT, path
    return {path: values for path, values in found.items() if path not in stamps}


def hive_driver(hive_ql, twins: Twins) -> Callable[[str], Any]:
    """Hive's Driver, in the Hive copy's database."""
    return hive_ql.using(twins.hive.database)


def rows(change: Callable[[tuple[Any, ...]], tuple[Any, ...] | None] = lambda row: row) -> list[tuple[Any, ...]]:
    """The twins' rows as Spark reads them, each through ``change`` (None drops it)."""
    changed = (change(row) for row in TWIN_ROWS)
    return sorted(row for row in changed if row is not None)


# Tables -----------------------------------------------------------------------------------------------------------


@DATASOURCE
def test_rename_table_moves_like_hive_and_keeps_the_statistics_hive_deletes(
    spark, hive_ql, spark_metastore, spark_twins, datasource
):
    """
    RENAME TO moves the folder, rewrites every location under the old root (and a data-source table's ``path``) and
    leaves the outside partition where it is, exactly as Hive 2.3 (Hive's Driver; Spark SQL for the data-source
    table, whose ``path`` only Spark keeps). Hive deletes the moved partitions' statistics and leaves the outside
    partition's under the old table name; the console keeps all of them, under the new name.
    """
    # given
    name = "rename_ds" if datasource else "rename_serde"
    twins = spark_twins(name, datasource=datasource)
    new = f"{name}_renamed"
    witness = spark.sql if datasource else hive_driver(hive_ql, twins)

    # when
    outcome = alter_both(
        spark_metastore, twins, f"ALTER TABLE {{table}} RENAME TO {{database}}.{new}", witness=witness, renamed_to=new
    )

    # then
    kept = {
        ("partitions", partition, "column_statistics", column): (
            ABSENT,
            statistics(outcome.before, partition, column, table_name=new),
        )
        for partition in IN_ROOT
        for column in COLUMNS
    }
    left_stale = {("partitions", OUTSIDE, "column_statistics", column, "table_name"): (name, new) for column in COLUMNS}
    found = outcome.metastore if datasource else without_hive_client_stamps(outcome.metastore)
    assert found == kept | left_stale
    assert outcome.trees == {}
    assert tree_image(outcome.console)["tables"][0] == f"{new}/"
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == rows()


@DATASOURCE
def test_add_columns_matches_hive_and_keeps_spark_schema_copy(spark, hive_ql, spark_metastore, spark_twins, datasource):
    """
    ADD COLUMNS changes the same rows as Hive's Driver, partitions keeping their columns; Hive leaves Spark's schema
    copy stale, the console writes what Spark itself writes (for the data-source table, where Spark is the witness,
    the two copies are identical).
    """
    # given
    twins = spark_twins("add_columns_ds" if datasource else "add_columns_serde", datasource=datasource)
    witness = spark.sql if datasource else hive_driver(hive_ql, twins)

    # when
    outcome = alter_both(
        spark_metastore, twins, "ALTER TABLE {table} ADD COLUMNS (note string COMMENT 'free text')", witness=witness
    )

    # then
    if datasource:
        assert outcome.metastore == {}
    else:
        stale = outcome.before["params"][SCHEMA_KEY]
        current = metastore_image(outcome.console)["params"][SCHEMA_KEY]
        assert without_hive_client_stamps(outcome.metastore) == {("params", SCHEMA_KEY): (stale, current)}
    assert outcome.trees == {}
    image = metastore_image(outcome.console)
    assert (
        '{"name":"note","type":"string","nullable":true,"metadata":{"comment":"free text"}}'
        in image["params"][SCHEMA_KEY]
    )
    assert image["storage"]["columns"][-1] == ("note", "string", "free text")
    assert image["partitions"][OUTSIDE]["storage"]["columns"] == outcome.before["storage"]["columns"]
    expected = rows(lambda row: (*row[:3], None, *row[3:]))
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == expected


# Columns (HiveQL: Spark SQL refuses these on Hive tables) ----------------------------------------------------------


def test_change_column_rename_keeps_the_statistics_hive_drops(spark, hive_ql, spark_metastore, spark_twins):
    """
    CHANGE COLUMN name label … CASCADE renames the column in the table and every partition as Hive does. Hive drops
    the column's statistics and its COLUMN_STATS_ACCURATE flag and leaves Spark's schema copy stale; the console keeps
    the statistics and the flag under the new name and rewrites Spark's copy.
    """
    # given
    twins = spark_twins("change_name")
    with pytest.raises(AnalysisException, match="RENAME COLUMN"):
        spark.sql(f"ALTER TABLE {twins.hive.qualified} CHANGE COLUMN name label string")

    # when
    outcome = alter_both(
        spark_metastore,
        twins,
        "ALTER TABLE {table} CHANGE COLUMN name label string CASCADE",
        witness=hive_driver(hive_ql, twins),
    )

    # then
    stale = outcome.before["params"][SCHEMA_KEY]
    flags_without_name = '{"COLUMN_STATS":{"amount":"true","id":"true"}}'
    flags_with_label = '{"COLUMN_STATS":{"amount":"true","id":"true","label":"true"}}'
    expected = {("params", SCHEMA_KEY): (stale, stale.replace('"name":"name"', '"name":"label"'))}
    for partition in (*IN_ROOT, OUTSIDE):
        expected[("partitions", partition, "column_statistics", "label")] = (
            ABSENT,
            statistics(outcome.before, partition, "name"),
        )
        expected[("partitions", partition, "params", "COLUMN_STATS_ACCURATE")] = (flags_without_name, flags_with_label)
    assert without_hive_client_stamps(outcome.metastore) == expected
    assert outcome.trees == {}
    # Parquet resolves columns by name: files written before the rename read as NULL under the new name, on both.
    expected_rows = rows(lambda row: (row[0], None, *row[2:]))
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == expected_rows


def test_change_column_type_drops_the_statistics_as_hive_does(spark, hive_ql, spark_metastore, spark_twins):
    """
    CHANGE COLUMN id id bigint CASCADE (a compatible widening) changes the table and every partition and drops the
    column's statistics and flags exactly as Hive does; only Spark's schema copy differs (the console updates it).
    """
    # given
    twins = spark_twins("change_type")
    with pytest.raises(AnalysisException, match="NOT_SUPPORTED_CHANGE_COLUMN"):
        spark.sql(f"ALTER TABLE {twins.hive.qualified} CHANGE COLUMN id id bigint")

    # when
    outcome = alter_both(
        spark_metastore,
        twins,
        "ALTER TABLE {table} CHANGE COLUMN id id bigint CASCADE",
        witness=hive_driver(hive_ql, twins),
    )

    # then
    stale = outcome.before["params"][SCHEMA_KEY]
    current = stale.replace('"name":"id","type":"integer"', '"name":"id","type":"long"')
    assert without_hive_client_stamps(outcome.metastore) == {("params", SCHEMA_KEY): (stale, current)}
    assert outcome.trees == {}
    image = metastore_image(outcome.console)
    assert all(set(part["column_statistics"]) == {"amount", "name"} for part in image["partitions"].values())
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == rows()


# Table metadata ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("twin", "statement"),
    [
        ("set_props", "ALTER TABLE {table} SET TBLPROPERTIES ('team'='platform', 'retention.days'='30')"),
        ("unset_props", "ALTER TABLE {table} UNSET TBLPROPERTIES ('team')"),
        ("serde_props", "ALTER TABLE {table} SET SERDEPROPERTIES ('serialization.encoding'='UTF-8')"),
        ("table_location", "ALTER TABLE {table} SET LOCATION '{elsewhere}/table'"),
    ],
    ids=["set_tblproperties", "unset_tblproperties", "set_serdeproperties", "set_location"],
)
def test_table_metadata_changes_match_hive(spark, hive_ql, spark_metastore, spark_twins, twin, statement):
    """
    SET/UNSET TBLPROPERTIES, SET SERDEPROPERTIES and the table's SET LOCATION (partitions keep theirs, no data moves;
    a partitioned table's quick statistics are its partitions') change the same rows as Hive's Driver, apart from the
    stamps of Hive's client.
    """
    # given
    twins = spark_twins(twin)

    # when
    outcome = alter_both(spark_metastore, twins, statement, witness=hive_driver(hive_ql, twins))

    # then
    assert without_hive_client_stamps(outcome.metastore) == {}
    assert outcome.trees == {}
    assert differences(outcome.before, metastore_image(outcome.console)), "the statement changed something"
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == rows()


# Partitions -------------------------------------------------------------------------------------------------------


def test_set_partition_location_matches_hive(spark, hive_ql, spark_metastore, spark_twins):
    """
    PARTITION (…) SET LOCATION points the partition at its new folder and changes nothing else, as Hive's Driver:
    the partition carries numFiles and totalSize, equal before and after, so Hive's ``requireCalStats`` is false and
    its statistics stay as they were (rule 13.1). Only the stamps of Hive's client (on the partition) differ.
    """
    # given
    twins = spark_twins("partition_location")
    partition = "dt=2024-01-01/hour=2"
    for copy in (twins.hive, twins.console):  # a steward copies the data first (one file twice); nothing moves
        shutil.copytree(copy.root / partition, copy.elsewhere / "p")
        data = next(f for f in sorted((copy.elsewhere / "p").iterdir()) if f.suffix == ".parquet")
        shutil.copyfile(data, copy.elsewhere / "p" / "again.parquet")

    # when
    outcome = alter_both(
        spark_metastore,
        twins,
        "ALTER TABLE {table} PARTITION (dt='2024-01-01', hour=2) SET LOCATION '{elsewhere}/p'",
        witness=hive_driver(hive_ql, twins),
    )

    # then
    assert without_hive_client_stamps(outcome.metastore, ("partitions", partition)) == {}
    assert outcome.trees == {}
    assert metastore_image(outcome.console)["partitions"][partition]["storage"]["location"] == "<elsewhere>/p"
    copied_twice = [row for row in rows() if (row[3], row[4]) == ("2024-01-01", 2)]
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == sorted(rows() + copied_twice)


def test_rename_partition_moves_like_hive_and_keeps_the_statistics_hive_deletes(
    spark, hive_ql, spark_metastore, spark_twins
):
    """
    PARTITION (…) RENAME TO PARTITION (…) renames the partition and moves its folder as Hive's Driver does (both
    leave the emptied ``dt=2024-01-02/`` behind). Hive 2.3 deletes the partition's statistics (as the preview's
    "what Hive would do" says); the console keeps them.
    """
    # given
    twins = spark_twins("rename_partition")
    old, new = "dt=2024-01-02/hour=1", "dt=2024-01-05/hour=1"
    statement = "ALTER TABLE {table} PARTITION (dt='2024-01-02', hour=1) RENAME TO PARTITION (dt='2024-01-05', hour=1)"
    predicted = alter_preview_statement(metastore=spark_metastore, statement=_for(statement, twins.hive)).hive

    # when
    outcome = alter_both(spark_metastore, twins, statement, witness=hive_driver(hive_ql, twins))

    # then
    kept = {
        ("partitions", new, "column_statistics", column): (
            ABSENT,
            statistics(outcome.before, old, column, partition_name=new),
        )
        for column in COLUMNS
    }
    assert outcome.metastore == kept
    assert predicted.statistics_deleted == len(COLUMNS)
    assert outcome.trees == {}
    assert "rename_partition/dt=2024-01-05/hour=1/" in tree_image(outcome.console)["tables"]
    expected = rows(lambda row: (*row[:3], "2024-01-05", row[4]) if row[3] == "2024-01-02" else row)
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == expected


def test_rename_partition_to_values_hive_escapes_is_named_and_placed_as_hive_does(
    spark, hive_ql, spark_metastore, spark_twins
):
    """
    RENAME TO PARTITION (dt='a\\'b*[c] café', hour=1): the console's preview gives the partition the PART_NAME, key
    values and location Hive gives it (', * and [ ] as %XX, the space and the é kept; the directory named literally
    so), and the console finds Hive's renamed partition by its plain values.
    """
    # given
    twins = spark_twins("escaped_partition")
    clause = f"PARTITION (dt='2024-01-02', hour=1) RENAME TO PARTITION {ESCAPED_SPEC}"
    hive_driver(hive_ql, twins)(f"ALTER TABLE {twins.hive.qualified} {clause}")
    hive = metastore_image(twins.hive)
    new = ESCAPED_NAME

    # when
    preview = alter_preview_statement(
        metastore=spark_metastore, statement=f"ALTER TABLE {twins.console.qualified} {clause}"
    )
    found = alter_preview_statement(
        metastore=spark_metastore,
        statement=f"ALTER TABLE {twins.hive.qualified} PARTITION {ESCAPED_SPEC}"
        " RENAME TO PARTITION (dt='2024-01-09', hour=1)",
    )
    table = Table.objects.on(spark_metastore).get(database__name=twins.hive.database, name=twins.hive.name)

    # then
    assert set(hive["partitions"]) - {*IN_ROOT, OUTSIDE} == {new}
    assert hive["partitions"][new]["values"] == [ESCAPED_VALUE, "1"]
    assert hive["partitions"][new]["storage"]["location"] == f"{hive['storage']['location']}/{new}"
    assert (twins.hive.root / new).is_dir()
    assert preview.blockers == ()
    assert [step.params[0] for step in preview.steps if step.metastore_table == "PARTITIONS"] == [new]
    assert [step.params[0] for step in preview.steps if step.metastore_table == "PARTITION_KEY_VALS"] == [
        ESCAPED_VALUE,
        "1",
    ]
    assert [move.destination for move in preview.moves] == [f"{preview.before.location}/{new}"]
    assert found.blockers == ()
    assert get_partition_detail(spark_metastore, table, new).values == {"dt": ESCAPED_VALUE, "hour": "1"}


def test_rename_partition_to_values_hive_escapes_moves_the_folder_as_hive_does(
    spark, hive_ql, spark_metastore, spark_twins
):
    """The renamed partition's folder is the literal escaped name its location gives, on both copies."""
    # given
    twins = spark_twins("escaped_folder")

    # when
    outcome = alter_both(
        spark_metastore,
        twins,
        f"ALTER TABLE {{table}} PARTITION (dt='2024-01-02', hour=1) RENAME TO PARTITION {ESCAPED_SPEC}",
        witness=hive_driver(hive_ql, twins),
    )

    # then
    assert f"escaped_folder/{ESCAPED_NAME}/" in tree_image(outcome.hive)["tables"]
    assert outcome.trees == {}
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive)


def test_rename_partition_onto_an_existing_folder_without_a_source_is_refused_as_hive_2_3_does(
    hive_ql, spark_metastore, spark_twins
):
    """
    Hive 2.3 checks the target folder even when the partition's own folder is missing ('New location for this table
    <db>.<tbl> already exists : <target>'); the console refuses the same rename on the 2.3 schema.
    """
    # given: the partition's folder is gone and its target folder exists, on both copies
    twins = spark_twins("rename_onto_folder")
    for copy in (twins.hive, twins.console):
        shutil.rmtree(copy.root / "dt=2024-01-02")
        (copy.root / "dt=2024-01-05/hour=1").mkdir(parents=True)
    clause = "PARTITION (dt='2024-01-02', hour=1) RENAME TO PARTITION (dt='2024-01-05', hour=1)"
    before = metastore_image(twins.hive)

    # when
    with pytest.raises(HiveQLError, match="already exists") as refused:
        hive_driver(hive_ql, twins)(f"ALTER TABLE {twins.hive.qualified} {clause}")
    preview = alter_preview_statement(
        metastore=spark_metastore, statement=f"ALTER TABLE {twins.console.qualified} {clause}"
    )

    # then
    target = f"{preview.before.location}/dt=2024-01-05/hour=1"
    assert f"New location for this table {twins.hive.qualified} already exists" in str(refused.value)
    assert metastore_image(twins.hive) == before
    assert [(f.code, f.message) for f in preview.blockers] == [
        ("destination_exists", f"New location for this table {twins.console.qualified} already exists : {target}")
    ]


def test_drop_partition_moves_the_data_to_trash_where_hive_deletes_it(spark, hive_ql, spark_metastore, spark_twins):
    """
    DROP PARTITION removes the same rows as Hive and the same folders inside the table root, the emptied
    ``dt=2024-01-02/`` included, so Hive's MSCK REPAIR TABLE still accepts the table. The data goes to the console's
    trash instead of being deleted, and the emptied folder outside the table root stays. The witness is Spark SQL
    (Hive's metastore code underneath): Hive's Driver cannot analyse DROP PARTITION here, its partition expressions
    need FunctionRegistry classes (LLAP) that Spark does not ship.
    """
    # given
    twins = spark_twins("drop_partition")

    # when
    outcome = alter_both(
        spark_metastore,
        twins,
        "ALTER TABLE {table} DROP PARTITION (dt='2024-01-02', hour=1), PARTITION (dt='2024-01-03', hour=0)",
        witness=spark.sql,
    )

    # then
    assert outcome.metastore == {}
    trash = tree_image(outcome.console)["trash"]
    assert outcome.trees == {("outside",): (None, []), ("trash",): (None, trash)}
    data = sorted(entry.split("/", 1)[1] for entry in trash if entry.endswith(".parquet") and "/." not in entry)
    assert [entry.rsplit("/", 1)[0] for entry in data] == ["dt=2024-01-02/hour=1", "dt=2024-01-03/hour=0"]
    hive_ql(f"MSCK REPAIR TABLE {outcome.console.qualified}")  # fails on a partition folder missing its hour=…
    expected = rows(lambda row: None if row[3] in ("2024-01-02", "2024-01-03") else row)
    assert read_rows(spark, outcome.console) == read_rows(spark, outcome.hive) == expected

"""
Issue 10's proof for relocate, on real data written by Spark's Hive 2.3 client (``spark_pg``) and copied by the
relocate program on the run's real Spark session (local[2]):

* a partition range relocated to another governed root: Spark SQL through the Hive client reads exactly the same rows
  (sorted compare), the partitions' storage descriptors point where Hive would have them (``<root>/<partition
  name>``), the other partitions and the table root are untouched, the old files are kept; a resumed plan skips the
  units already done; revert points back at the kept source;
* a table relocated to an S3 bucket (SeaweedFS) and back to local disk: every file byte-identical on the bucket, the
  metastore pointing at ``s3a://…``, and after the way back Spark reads the same rows again;
* issue 25: 20,000 rows a plain Spark writer (no Hive lock) appends to a partition after the copy are copied by the
  swap's re-listing, and Spark reads them after the swap and after the cleanup.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.models import Relocation
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.relocate import relocate_execute, relocations_cleanup
from operations.services.revert import revert_preview
from operations.spark.programs import relocate as relocate_program
from tests.fixtures.object_store import S3Server

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE = "relocate_src"
LATE = 20_000
ROWS = [(i, f"n{i}", float(i) / 2, f"2024-01-0{1 + i % 3}", i % 2) for i in range(1, 31)]


@pytest.fixture(scope="module")
def events_table(spark) -> str:  # noqa: ANN001
    """``relocate_src.events``: parquet, partitioned by (dt, hour), six partitions written by Spark's Hive client."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    spark.sql(
        f"CREATE TABLE {DATABASE}.events (id int, name string, amount double) PARTITIONED BY (dt string, hour int) "
        "STORED AS PARQUET"
    )
    values = ", ".join(f"({i}, '{n}', {a}, '{d}', {h})" for i, n, a, d, h in ROWS)
    spark.sql(f"INSERT INTO {DATABASE}.events PARTITION (dt, hour) SELECT * FROM VALUES {values}")
    spark.sql(f"CREATE TABLE {DATABASE}.small (id int, name string) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DATABASE}.small VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    return f"{DATABASE}.events"


def rows(spark, table: str) -> list[tuple]:  # noqa: ANN001
    spark.sql(f"REFRESH TABLE {table}")
    return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {table}").collect())


def on_spark(spark, events: list[dict]):  # noqa: ANN001, ANN201 - a run_program
    return lambda plan: relocate_program.run(spark, plan, events.append)


def locations(metastore: Metastore, table: str) -> dict[str, str]:
    from catalog_admin.models import Partition, Table

    database, name = table.split(".")
    row = Table.objects.using(metastore.alias).select_related("sd").get(database__name=database, name=name)
    parts = Partition.objects.using(metastore.alias).filter(table_id=row.id).values_list("name", "sd__location")
    return {"": row.sd.location, **dict(parts)}


def tree_md5(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


def test_a_partition_range_relocates_on_spark_and_reverts(
    spark,
    spark_metastore: Metastore,
    events_table: str,
    spark_tmp: Path,  # noqa: ANN001
) -> None:
    """Same rows through Hive's client, Hive's layout at the new root, the source kept; resume skips; revert."""
    # given
    before_rows, before = rows(spark, events_table), locations(spark_metastore, events_table)
    target = spark_tmp / "elsewhere" / "relocated_events"
    statement = f"ALTER TABLE {events_table} PARTITION (dt <= '2024-01-02') SET LOCATION 'file:{target}' WITH DATA"
    preview = alter_preview_statement(metastore=spark_metastore, statement=statement)
    assert preview.blockers == (), preview.blockers
    moving = sorted(u.key for u in preview.data_copy.units)
    events: list[dict] = []

    # when: a first run copies one unit, the resumed one the rest, then the swap
    first = relocate_program.run(spark, _plan_of(preview, moving[1:]), [].append)
    execution = relocate_execute(
        preview=preview, actor="steward", source="cli", run_program=on_spark(spark, events), completed=moving[:1]
    )

    # then
    after = locations(spark_metastore, events_table)
    assert sorted(first["units"]) == moving[:1] and [e["unit_done"] for e in events if "unit_done" in e] == moving[1:]
    assert rows(spark, events_table) == before_rows == sorted(ROWS)
    assert {n: after[n] for n in moving} == {n: f"file:{target}/{n}" for n in moving}
    assert {n: loc for n, loc in after.items() if n not in moving} == {
        n: loc for n, loc in before.items() if n not in moving
    }
    for name in moving:
        old = Path(before[name].removeprefix("file:"))
        assert tree_md5(old) == tree_md5(target / name) != {}, "the source is kept, the copy is identical"
    assert Relocation.objects.get(execution=execution).state == Relocation.State.SWAPPED

    # and when reverted, Spark reads the kept source again
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    assert locations(spark_metastore, events_table) == before
    assert rows(spark, events_table) == before_rows


def test_a_table_relocates_to_s3_and_back(
    spark, spark_metastore: Metastore, events_table: str, spark_tmp: Path, s3_filesystems: S3Server,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """To the bucket: identical objects and s3a:// locations; back to disk: Spark reads the same rows."""
    # given: the bucket's lake/ folder is one of spark_pg's governed roots
    lake = s3_filesystems.location("lake")
    configs = [replace(c, extra_roots=(*c.extra_roots, lake)) if c.name == spark_metastore.name else c
               for c in settings.METASTORE_CONFIGS]  # fmt: skip
    monkeypatch.setattr(settings, "METASTORE_CONFIGS", configs)
    metastore = get_metastore(spark_metastore.name)
    table = f"{DATABASE}.small"
    before_rows, source = rows(spark, table), Path(locations(metastore, table)[""].removeprefix("file:"))
    bucket_root = f"{lake}/small"
    back = spark_tmp / "elsewhere" / "small_back"

    # when
    to_s3 = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE {table} SET LOCATION '{bucket_root}' WITH DATA"
    )
    assert to_s3.blockers == (), to_s3.blockers
    relocate_execute(preview=to_s3, actor="steward", source="cli", run_program=on_spark(spark, []))
    on_bucket = locations(metastore, table)[""]
    from catalog_admin.locations import filesystem_for

    bucket = filesystem_for(bucket_root)
    copied = {f.relative: bucket.checksum(f.location) for f in bucket.list_files(bucket_root)}
    home = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE {table} SET LOCATION 'file:{back}' WITH DATA"
    )
    assert home.blockers == (), home.blockers
    relocate_execute(preview=home, actor="steward", source="cli", run_program=on_spark(spark, []))

    # then
    assert on_bucket == bucket_root
    assert copied == tree_md5(source) != {}
    assert locations(metastore, table)[""] == f"file:{back}"
    assert tree_md5(back) == tree_md5(source)
    assert rows(spark, table) == before_rows == [(1, "a"), (2, "b"), (3, "c")]
    # either way an object store is one end: its "rename" is a copy and delete, and the previews say what it costs
    for preview in (to_s3, home):
        cost = next(w.message for w in preview.warnings if w.code == "object_store_copy")
        assert cost.startswith(f"An object store has no rename: the job copies {preview.data_copy.files} files")


def _plan_of(preview, skip: list[str]) -> dict:  # noqa: ANN001
    from operations.services.relocate import relocation_copy_plan

    return relocation_copy_plan(preview=preview, completed=skip)


def test_rows_a_plain_spark_writer_adds_during_a_relocation_survive_the_swap_and_the_cleanup(
    spark, spark_metastore: Metastore, spark_tmp: Path, events_table: str  # noqa: ANN001 - events_table: the database
) -> None:  # fmt: skip
    """Issue 25, case 1: a Spark job that takes no Hive lock appends 20,000 rows to a partition after the copy listed
    it. The swap's re-listing copies its files in a verified catch-up pass: Spark's Hive client reads every row at
    the new location, and still after the cleanup removed the source."""
    # given
    table = f"{DATABASE}.live"
    spark.sql(f"CREATE TABLE {table} (id int, name string) PARTITIONED BY (dt string) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {table} PARTITION (dt='2024-01-01') VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    source = Path(locations(spark_metastore, table)["dt=2024-01-01"].removeprefix("file:"))
    target = spark_tmp / "elsewhere" / "live"
    preview = alter_preview_statement(
        metastore=spark_metastore,
        statement=f"ALTER TABLE {table} PARTITION (dt='2024-01-01') SET LOCATION 'file:{target}' WITH DATA",
    )
    assert preview.blockers == (), preview.blockers

    def copy_then_write(plan: dict) -> dict:
        manifest = relocate_program.run(spark, plan, [].append)
        late = spark.range(LATE).selectExpr("CAST(id + 100 AS INT) AS id", "CONCAT('late', id) AS name")
        late.write.mode("append").parquet(str(source))  # straight into the directory: no metastore, no Hive lock
        return manifest

    # when
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=copy_then_write)
    after_swap = len(rows(spark, table))
    relocations_cleanup(now=timezone.now() + timedelta(days=365))
    after_cleanup = len(rows(spark, table))

    # then
    assert locations(spark_metastore, table)["dt=2024-01-01"] == f"file:{target}/dt=2024-01-01"
    assert after_swap == after_cleanup == 3 + LATE
    assert not source.exists()
    assert execution.relocation.files == len(list(p for p in (target / "dt=2024-01-01").rglob("*") if p.is_file()))

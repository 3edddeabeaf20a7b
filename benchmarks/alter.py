"""
The alter service at scale, and Hive's own rename for comparison.

    .venv/bin/python benchmarks/alter.py [--partitions 100000] [--col-stats 5] [--hive-partitions 10000]

1. PostgreSQL database ``ca_bench_alter`` with Hive's official 2.3.0 schema, ``bench.events`` seeded with
   P partitions and C statistics rows each (``seed_metastore``), its table directory on local disk.
2. Preview time of each operation on that table (target < 300 ms), then end-to-end rename (preview +
   execute, directory move included; target < 10 s) and ``ADD COLUMNS … CASCADE`` (target < 10 s, one
   new column descriptor), with Python's peak memory during each, also at P/10 partitions (flat in P).
3. In the same run, Hive's own rename of a table with H partitions (H×C statistics rows) through
   Spark's built-in Hive 2.3 client on the same PostgreSQL (database ``ca_bench_rename``, 2.3.0 schema),
   against the console's rename of identical tables there (median of three; target: at least 50× faster).

Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import time
import tracemalloc
from pathlib import Path

from common import REPO, recreate_metastore, setup_django, timed, write_section

DATABASE = "ca_bench_alter"
RENAME_DATABASE = "ca_bench_rename"  # the head-to-head's own metastore, on the same PostgreSQL
WAREHOUSE = REPO / "var" / "bench" / "alter-warehouse"
WAREHOUSES = {"bench": WAREHOUSE / "bench", "rename": WAREHOUSE / "rename"}
PREVIEW_STATEMENTS = {
    "RENAME TO": "ALTER TABLE bench.{t} RENAME TO bench.{t}_renamed",
    "ADD COLUMNS … CASCADE": "ALTER TABLE bench.{t} ADD COLUMNS (added string) CASCADE",
    "CHANGE COLUMN (rename) CASCADE": "ALTER TABLE bench.{t} CHANGE COLUMN attr_5 attr_five string CASCADE",
    "SET TBLPROPERTIES": "ALTER TABLE bench.{t} SET TBLPROPERTIES ('owner_team'='bench')",
    "SET LOCATION": "ALTER TABLE bench.{t} SET LOCATION 'file:/tmp/elsewhere'",
    "partition locations by prefix": "ALTER TABLE bench.{t} PARTITION LOCATIONS REPLACE PREFIX '{root}' "
    "WITH 'file:/data/moved'",
    "PARTITION RENAME": "ALTER TABLE bench.{t} PARTITION (dt='{day}', hour=0) "
    "RENAME TO PARTITION (dt='1999-01-01', hour=0)",
    "DROP PARTITION (one day)": "ALTER TABLE bench.{t} DROP PARTITION (dt='{day}')",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--col-stats", type=int, default=5)
    parser.add_argument("--hive-partitions", type=int, default=10_000)
    args = parser.parse_args()

    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    recreate_metastore(DATABASE, "2.3.0")
    recreate_metastore(RENAME_DATABASE, "2.3.0")
    setup_django(
        f"bench=postgresql://postgres@127.0.0.1:5432/{DATABASE};"
        f"rename=postgresql://postgres@127.0.0.1:5432/{RENAME_DATABASE}"
    )
    results: list[str] = []
    big = seed_table(args.partitions, args.col_stats)
    small = seed_table(args.partitions // 10, args.col_stats)
    results += previews(big, args.partitions)
    results += end_to_end(big, small, args.partitions)
    results += hive_against_console(args.hive_partitions, args.col_stats)
    report(args, results)


def seed_table(partitions: int, col_stats: int, metastore: str = "bench") -> str:
    """Seed one more ``bench.events*`` table; returns its name. Its table directory exists on disk."""
    from django.core.management import call_command

    from catalog_admin.models import Table

    tables = Table.objects.using(metastore).filter(database__name="bench")
    before = set(tables.values_list("name", flat=True))
    timed(
        f"seed {partitions} partitions",
        lambda: call_command(
            "seed_metastore",
            metastore=metastore,
            big_table_partitions=partitions,
            col_stats=col_stats,
            warehouse=str(WAREHOUSES[metastore]),
            verbosity=0,
        ),
    )
    name = (set(tables.values_list("name", flat=True)) - before).pop()
    _analyze(metastore)
    _table_dir(name, metastore).mkdir(parents=True, exist_ok=True)
    return name


def _table_dir(name: str, metastore: str = "bench") -> Path:
    from catalog_admin.models import Table

    location = Table.objects.using(metastore).get(database__name="bench", name=name).sd.location
    return Path(location.removeprefix("file:"))


def _analyze(metastore: str) -> None:
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes

    with allow_metastore_writes(), connections[metastore].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def _first_day(table: str) -> str:
    from catalog_admin.models import Partition

    names = Partition.objects.using("bench").filter(table__name=table).order_by("name").values_list("name", flat=True)
    name = names[0]
    return name.split("/")[0].split("=")[1]


def previews(table: str, partitions: int) -> list[str]:
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_preview_statement

    metastore = get_metastore("bench")
    day = _first_day(table)
    root = "file:" + str(_table_dir(table))
    lines = [
        f"### Preview on `bench.{table}` ({partitions:,} partitions)",
        "",
        "| operation | preview ms (median of 5) | rows it will change | risk |",
        "|---|---:|---:|---|",
    ]
    for label, template in PREVIEW_STATEMENTS.items():
        statement = template.format(t=table, day=day, root=root)
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            preview = alter_preview_statement(metastore=metastore, statement=statement)
            samples.append((time.perf_counter() - started) * 1000)
        rows = sum(r.inserted + r.updated + r.deleted for r in preview.row_changes)
        samples.sort()
        lines.append(f"| {label} | {samples[2]:.0f} | {rows:,} | {preview.risk} |")
        print(lines[-1], flush=True)
    return [*lines, ""]


def _execute(statement: str, metastore: str = "bench", *, trace_memory: bool = True) -> tuple[float, float, dict]:
    """Preview + execute; returns seconds, peak traced memory in MB (0 untraced) and the counts.

    Tracing memory slows Python's allocations down: the head-to-head against Hive runs untraced.
    """
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_execute, alter_preview_statement

    if trace_memory:
        tracemalloc.start()
    started = time.perf_counter()
    preview = alter_preview_statement(metastore=get_metastore(metastore), statement=statement)
    execution = alter_execute(preview=preview, actor="benchmark", source="cli", reason="benchmark")
    seconds = time.perf_counter() - started
    peak = 0
    if trace_memory:
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert execution.actual_counts == execution.expected_counts
    return seconds, peak / 2**20, execution.actual_counts


def end_to_end(big: str, small: str, partitions: int) -> list[str]:
    from catalog_admin.models import Column, ColumnDescriptor

    lines = [
        "### End to end (preview + execute, one metastore transaction, directory move included; timed with "
        "Python's memory tracing on)",
        "",
        "| operation | partitions | seconds | peak Python memory MB | CDS / COLUMNS_V2 rows before → after |",
        "|---|---:|---:|---:|---|",
    ]
    for table, count in ((small, partitions // 10), (big, partitions)):
        for label, statement in (
            ("ADD COLUMNS … CASCADE", f"ALTER TABLE bench.{table} ADD COLUMNS (added string) CASCADE"),
            ("RENAME TO (managed, directory moved)", f"ALTER TABLE bench.{table} RENAME TO bench.{table}_renamed"),
        ):
            cds, columns = ColumnDescriptor.objects.using("bench").count(), Column.objects.using("bench").count()
            seconds, peak, _counts = _execute(statement)
            cds_after, columns_after = (
                ColumnDescriptor.objects.using("bench").count(),
                Column.objects.using("bench").count(),
            )
            growth = f"{cds:,} / {columns:,} → {cds_after:,} / {columns_after:,}"
            lines.append(f"| {label} | {count:,} | {seconds:.2f} | {peak:.1f} | {growth} |")
            print(lines[-1], flush=True)
    return [*lines, ""]


def hive_against_console(partitions: int, col_stats: int, runs: int = 3) -> list[str]:
    """Hive's rename through Spark's Hive client against the console's, on identical freshly seeded tables.

    Both run on their own metastore database (same PostgreSQL) holding just these tables, not beside the
    million statistics rows the 100,000-partition phase left. The console renames ``runs`` tables (median
    reported) before Spark starts, so the JVM is not running beside it; Hive renames one (tens of seconds).
    """
    import statistics
    import sys

    sys.path.insert(0, str(REPO))
    from tests.witness.spark_hive import start_spark_hive, stop_spark

    hive_table = seed_table(partitions, col_stats, "rename")
    console_tables = [seed_table(partitions, col_stats, "rename") for _ in range(runs)]
    console_runs = []
    for table in console_tables:
        statement = f"ALTER TABLE bench.{table} RENAME TO bench.{table}_by_console"
        seconds, _peak, _counts = _execute(statement, "rename", trace_memory=False)
        console_runs.append(seconds)
        print(f"console rename of {partitions} partitions: {seconds:.2f} s", flush=True)
    console_seconds = statistics.median(console_runs)
    spark = start_spark_hive(RENAME_DATABASE, WAREHOUSES["rename"])
    try:
        spark.sql(f"DESCRIBE bench.{hive_table}").collect()  # warm the Hive client up outside the timing
        hive_seconds, _ = timed(
            f"Hive rename of {partitions} partitions",
            lambda: spark.sql(f"ALTER TABLE bench.{hive_table} RENAME TO bench.{hive_table}_by_hive").collect(),
        )
    finally:
        stop_spark(spark)
    stats = tuple(_statistics_left(f"{t}_by_{by}") for t, by in ((hive_table, "hive"), (console_tables[0], "console")))
    return [
        f"### Hive's rename against the console's ({partitions:,} partitions, "
        f"{partitions * col_stats:,} statistics rows)",
        "",
        "| | seconds | partition statistics rows afterwards |",
        "|---|---:|---:|",
        f"| Hive 2.3 (Spark's built-in Hive client, same PostgreSQL) | {hive_seconds:.1f} | {stats[0]:,} |",
        f"| catalog-admin (median of {runs} identical tables: "
        f"{', '.join(f'{s:.2f}' for s in console_runs)}) | {console_seconds:.2f} | {stats[1]:,} |",
        "",
        f"The console was **{hive_seconds / console_seconds:.0f}×** faster and kept every statistics row.",
        "",
    ]


def _statistics_left(table: str) -> int:
    from catalog_admin.models import PartitionColumnStatistics

    return PartitionColumnStatistics.objects.using("rename").filter(partition__table__name=table).count()


def report(args: argparse.Namespace, results: list[str]) -> None:
    header = [
        f"Command: `.venv/bin/python benchmarks/alter.py --partitions {args.partitions} --col-stats {args.col_stats} "
        f"--hive-partitions {args.hive_partitions}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores "
        f"(load average {os.getloadavg()[0]:.1f} when the report was written); PostgreSQL 15 on 127.0.0.1, "
        "Hive 2.3.0 official schema.",
        "",
    ]
    write_section(REPO / "docs" / "benchmarks.md", "Alter at scale", "\n".join(header + results))


if __name__ == "__main__":
    main()

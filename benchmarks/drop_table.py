"""
DROP TABLE at scale: the console's drop (preview + execute, the data kept in its trash) against Hive's own drop
through Spark's built-in Hive 2.3 client, on identical tables in the same run.

    .venv/bin/python benchmarks/drop_table.py [--partitions 100000] [--col-stats 5] [--runs 1] [--before COMMIT]

1. A PostgreSQL database ``ca_bench_drop`` with Hive's official 2.3.0 schema; ``1 + runs`` tables ``bench.events*``
   seeded with P partitions and C statistics rows each (``seed_metastore``; P×C rows of PART_COL_STATS), every
   partition's directory on local disk with one small data file.
2. The console drops ``runs`` of them (``alter_preview_statement`` + ``alter_execute``: one DELETE per metastore
   table, the table's directory moved to the trash, the before-image kept for the undrop), timed apart: the preview,
   and the execution. Spark is not running then.
   With ``--before``, one more identical table is dropped the same way by the code of that commit, in a child
   process on the same metastore (``before_code.py``): the baseline in the same run.
3. Hive drops the other one (``spark.sql("DROP TABLE …")``: ``HiveClientImpl.dropTable`` → ``HMSHandler.drop_table``,
   partitions dropped in batches by ``ObjectStore.dropPartitions``, the directory deleted), after one warm-up
   statement outside the timing.

Results go to ``docs/benchmarks.md`` ("DROP TABLE against Hive's"), with the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import time
from pathlib import Path

from before_code import execute_before
from common import REPO, recreate_metastore, setup_django, timed, write_section

DATABASE = "ca_bench_drop"
ALIAS = "drop"
WAREHOUSE = REPO / "var" / "bench" / "drop-warehouse"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--col-stats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1, help="tables the console drops (the median is reported)")
    parser.add_argument("--before", default="", help="a commit whose code drops one more table (the baseline)")
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    recreate_metastore(DATABASE, "2.3.0")
    os.environ[f"METASTORE_EXTRA_ROOTS_{ALIAS.upper()}"] = WAREHOUSE.as_uri()  # the console governs the bench's data
    setup_django(f"{ALIAS}=postgresql://postgres@127.0.0.1:5432/{DATABASE}")
    tables = [seed_table(args.partitions, args.col_stats) for _ in range(1 + args.runs + bool(args.before))]
    hive_table, console_tables = tables[0], tables[1 : 1 + args.runs]
    _analyze()
    console = [console_drop(table) for table in console_tables]
    baseline = execute_before(args.before, ALIAS, f"DROP TABLE bench.{tables[-1]}") if args.before else None
    loads.append(os.getloadavg()[0])
    hive_seconds, hive_left = hive_drop(hive_table)
    loads.append(os.getloadavg()[0])
    report(args, console, baseline, hive_seconds, hive_left, loads)


def seed_table(partitions: int, col_stats: int) -> str:
    """One more ``bench.events*`` table with ``partitions`` partitions, ``col_stats`` statistics rows each, and a
    directory with one data file per partition; returns its name."""
    from django.core.management import call_command

    from catalog_admin.models import Partition, Table

    tables = Table.objects.using(ALIAS).filter(database__name="bench")
    before = set(tables.values_list("name", flat=True))
    timed(
        f"seed {partitions} partitions",
        lambda: call_command(
            "seed_metastore",
            metastore=ALIAS,
            big_table_partitions=partitions,
            col_stats=col_stats,
            warehouse=str(WAREHOUSE),
            verbosity=0,
        ),
    )
    name = (set(tables.values_list("name", flat=True)) - before).pop()
    locations = Partition.objects.using(ALIAS).filter(table__database__name="bench", table__name=name)
    for location in locations.values_list("sd__location", flat=True).iterator():
        directory = Path(location.removeprefix("file:"))
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "000000_0").write_bytes(b"1\tone\t1.0\n")
    return name


def _analyze() -> None:
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes

    with allow_metastore_writes(), connections[ALIAS].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def console_drop(table: str) -> tuple[float, float, int, int]:
    """Preview and execute ``DROP TABLE``: (preview s, execution s, statements, statistics rows deleted)."""
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_execute, alter_preview_statement

    statement = f"DROP TABLE bench.{table}"
    preview_s, preview = timed(
        f"console preview: {statement}",
        lambda: alter_preview_statement(metastore=get_metastore(ALIAS), statement=statement),
    )
    assert not preview.blockers, preview.blockers
    assert len({s.metastore_table for s in preview.steps}) == len(preview.steps), "one statement per metastore table"
    execute_s, execution = timed(
        f"console execution: {statement}",
        lambda: alter_execute(preview=preview, actor="bench", source="cli", reason="benchmark"),
    )
    assert execution.actual_counts == execution.expected_counts
    assert all(not Path(m.source.removeprefix("file:")).exists() for m in preview.moves)
    assert all(Path(m.destination.removeprefix("file:")).exists() for m in preview.moves)  # kept in the trash
    return preview_s, execute_s, len(preview.steps), preview.statistics_dropped


def hive_drop(table: str) -> tuple[float, int]:
    """Hive's DROP TABLE through Spark's Hive client; (seconds, PART_COL_STATS rows left of the table)."""
    import sys

    sys.path.insert(0, str(REPO))
    from catalog_admin.models import Table
    from tests.witness.spark_hive import start_spark_hive, stop_spark

    spark = start_spark_hive(DATABASE, WAREHOUSE)
    started = time.perf_counter()
    try:
        spark.sql(f"DESCRIBE bench.{table}").collect()  # warm the Hive client up outside the timing
        started = time.perf_counter()
        spark.sql(f"DROP TABLE bench.{table}").collect()
    except Exception as exc:  # noqa: BLE001 - Hive's own deadline (hive.metastore.client.socket.timeout, 600 s)
        print(f"Hive's DROP TABLE failed after {time.perf_counter() - started:.1f} s: {str(exc)[:300]}", flush=True)
    finally:
        seconds = time.perf_counter() - started
        stop_spark(spark)
    print(f"Hive: DROP TABLE bench.{table}: {seconds:.2f} s", flush=True)
    left = Table.objects.using(ALIAS).filter(database__name="bench", name=table).count()
    return seconds, left


def report(
    args: argparse.Namespace,
    console: list[tuple[float, float, int, int]],
    baseline: dict | None,
    hive_seconds: float,
    hive_left: int,
    loads: list[float],
) -> None:
    totals = [preview + execute for preview, execute, _steps, _stats in console]
    median = statistics.median(totals)
    preview_s, execute_s, steps, stats = console[0]
    hive_outcome = "rows and data deleted" if not hive_left else "**failed**: the table is still there"
    body = [
        f"Command: `.venv/bin/python benchmarks/drop_table.py --partitions {args.partitions} "
        f"--col-stats {args.col_stats} --runs {args.runs}{f' --before {args.before}' if args.before else ''}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores shared with other work (load "
        f"average {', '.join(f'{load:.1f}' for load in loads)} at the start, after the console's drops and after "
        "Hive's); PostgreSQL 15 on 127.0.0.1, Hive's official 2.3.0 schema; the console's own state on SQLite.",
        "",
        f"Identical tables of {args.partitions:,} partitions with {args.partitions * args.col_stats:,} "
        "PART_COL_STATS rows, each partition's directory holding one file.",
        "",
        "| | seconds | what it did |",
        "|---|---:|---|",
        f"| Hive 2.3 (Spark's built-in Hive client, `DROP TABLE`) | {hive_seconds:.1f} | {hive_outcome} |",
        f"| catalog-admin, preview | {preview_s:.2f} | {steps} statements planned, {stats:,} statistics rows |",
        f"| catalog-admin, execution | {execute_s:.2f} | one DELETE per metastore table, the table's directory "
        "moved to the trash, the before-image kept |",
        f"| catalog-admin, preview + execution (median of {len(totals)}: "
        f"{', '.join(f'{t:.2f}' for t in totals)}) | {median:.2f} | |",
    ]
    if baseline is not None:
        before = baseline["preview_s"] + baseline["execute_s"]
        body += [
            f"| baseline: the code of {args.before}, preview | {baseline['preview_s']:.2f} | |",
            f"| baseline: the code of {args.before}, execution | {baseline['execute_s']:.2f} | |",
            f"| baseline: the code of {args.before}, preview + execution | {before:.2f} | "
            f"{hive_seconds / before:.0f}× Hive's |",
        ]
    body += [
        "",
        f"The console's drop was **{hive_seconds / median:.0f}×** faster than Hive's (goal: at least 50×), "
        "its data kept in the trash for the undrop.",
    ]
    write_section(REPO / "docs" / "benchmarks.md", "DROP TABLE against Hive's", "\n".join(body))


if __name__ == "__main__":
    main()

"""
``TRUNCATE TABLE … PARTITION (…)`` at scale, against the console's ``DROP PARTITION`` of as many partitions (the
baseline, measured in the same run on the same table: both move the same data to the same trash).

    .venv/bin/python benchmarks/truncate.py [--partitions 100000] [--days 30] [--version 3.1.0] [--reuse]

A PostgreSQL database ``ca_<alias>_truncate<suffix>`` with Hive's official schema, ``bench.events`` seeded with P
hourly partitions (one column statistics row each) and every partition's directory on local disk with one small
file (``drop_range_preview.seed``). Measured: the preview and the execution of a truncate of ``--days`` whole days
(24 partitions each, one partial spec per day: ``PARTITION (dt='…')``, the first of them timed alone, then the
range as one request per day), and of the drop of the next ``--days`` days; the preview of a truncate of the whole
table (every partition; set-based: a statement per 5,000 partitions and table). Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import time
from datetime import date, timedelta

from alter import alias_of
from common import REPO, recreate_metastore, setup_django, write_section
from drop_range_preview import WAREHOUSE, seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--version", default="3.1.0")
    parser.add_argument("--reuse", action="store_true", help="keep the database and directories of an earlier run")
    args = parser.parse_args()
    alias = alias_of(args.version)
    database = f"ca_{alias}_truncate{os.environ.get('CATALOG_ADMIN_TEST_DB_SUFFIX', '')}"
    if not args.reuse:
        shutil.rmtree(WAREHOUSE, ignore_errors=True)
        recreate_metastore(database, args.version)
    os.environ[f"METASTORE_WAREHOUSE_{alias.upper()}"] = str(WAREHOUSE / alias)
    setup_django(f"{alias}={f'postgresql://postgres@127.0.0.1:5432/{database}'}")
    table = "events" if args.reuse else seed(alias, args.partitions)
    first = _first_day(alias, table)
    days = [first + timedelta(days=i) for i in range(2 * args.days)]
    truncate = [f"TRUNCATE TABLE bench.{table} PARTITION (dt='{day}')" for day in days[: args.days]]
    drop = [f"ALTER TABLE bench.{table} DROP PARTITION (dt='{day}')" for day in days[args.days :]]
    whole = _timed_preview(alias, f"TRUNCATE TABLE bench.{table}")
    rows = [("truncate", *_run(alias, truncate)), ("drop partition (baseline)", *_run(alias, drop))]
    report(args, rows, whole)


def _first_day(alias: str, table: str) -> date:
    from catalog_admin.models import Partition

    found = Partition.objects.using(alias).filter(table__database__name="bench", table__name=table)
    return date.fromisoformat(found.order_by("name").first().name.split("/")[0].removeprefix("dt="))


def _timed_preview(alias: str, statement: str) -> tuple[float, int, int]:
    """ms of one preview, the partitions it touches and its statements."""
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_preview_statement

    started = time.perf_counter()
    plan = alter_preview_statement(metastore=get_metastore(alias), statement=statement)
    ms = (time.perf_counter() - started) * 1000
    assert not plan.blockers, plan.blockers
    print(f"{alias}: preview of {statement}: {ms:.0f} ms, {plan.partitions_touched} partitions", flush=True)
    return ms, plan.partitions_touched, len(plan.steps)


def _run(alias: str, statements: list[str]) -> tuple[int, float, float, int]:
    """Partitions, total preview s, total execution s and files moved of one request per statement."""
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_execute, alter_preview_statement

    partitions = files = 0
    previewing = executing = 0.0
    for statement in statements:
        started = time.perf_counter()
        plan = alter_preview_statement(metastore=get_metastore(alias), statement=statement)
        previewing += time.perf_counter() - started
        assert not plan.blockers, plan.blockers
        started = time.perf_counter()
        alter_execute(preview=plan, actor="benchmark", source="cli", reason="benchmark")
        executing += time.perf_counter() - started
        partitions += plan.partitions_touched or len(plan.moves)
        files += sum(move.files or 0 for move in plan.moves)
    print(f"{alias}: {statements[0]} …: {partitions} partitions, {previewing:.2f} s + {executing:.2f} s", flush=True)
    return partitions, previewing, executing, files


def report(args: argparse.Namespace, rows: list[tuple[str, int, float, float, int]], whole: tuple) -> None:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    ms, touched, steps = whole
    lines = [
        f"Command: `.venv/bin/python benchmarks/truncate.py --partitions {args.partitions} --days {args.days} "
        f"--version {args.version}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores, shared "
        f"(`uptime` load averages {load} when the report was written); PostgreSQL on 127.0.0.1, Hive "
        f"{args.version}'s official schema; every partition's directory on local disk (one file).",
        "",
        f"Preview of `TRUNCATE TABLE bench.events` (every partition): {ms:,.0f} ms, {touched:,} partitions, "
        f"{steps} statements.",
        "",
        f"One request per day ({args.days} days of 24 hourly partitions each), the same data to the same trash:",
        "",
        "| statement | partitions | files moved | preview s | execution s | s per partition |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, partitions, previewing, executing, files in rows:
        per = (previewing + executing) / partitions if partitions else 0.0
        lines.append(f"| {label} | {partitions:,} | {files:,} | {previewing:.2f} | {executing:.2f} | {per:.4f} |")
    write_section(REPO / "docs" / "benchmarks.md", "TRUNCATE TABLE at scale", "\n".join(lines))


if __name__ == "__main__":
    main()

"""
The alter service at scale, on each official Hive schema, and Hive's own rename for comparison.

    .venv/bin/python benchmarks/alter.py [--partitions 100000] [--col-stats 5] [--hive-partitions 10000]
                                         [--versions 2.3.0,3.1.0,4.0.0] [--rename-only [--rewrite]]

1. For each schema version, a PostgreSQL database ``ca_bench_alter_<v>`` with Hive's official schema,
   ``bench.events`` seeded with P partitions and C statistics rows each (``seed_metastore``), its table
   directory on local disk. (2.3 and 3.1 label statistics rows with the names a rename must rewrite;
   4.0 keys them by id only.)
2. Preview time of each operation on that table (target < 300 ms; a blocked preview fails the run), then end-to-end
   rename (preview + execute, directory move included; target < 10 s), ``ADD COLUMNS … CASCADE`` (target < 10 s,
   one new column descriptor) and a CASCADE rename of an analysed column (statistics and their accuracy flags
   follow), with Python's peak memory during each, also at P/10 partitions (flat in P).
3. In the same run, Hive's own rename of a table with H partitions (H×C statistics rows) through
   Spark's built-in Hive 2.3 client on the same PostgreSQL (database ``ca_bench_rename``, 2.3.0 schema),
   against the console's rename of identical tables there (median of three; target: at least 50× faster).
   Two more Hive renames calibrate the preview's estimate of Hive's cost (``CATALOG_HIVE_COST``).

Results go to ``docs/benchmarks.md``. ``--rename-only`` runs just the end-to-end rename at P partitions on each
schema (notification events on, as by default), ``--rewrite`` then a prefix rewrite of every partition's location
(one ALTER_PARTITION event each), and writes its own section, "Rename with notification events", with the preview
and the execution timed apart and the execution's slowest SQL statements.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

from common import REPO, recreate_metastore, setup_django, timed, write_section

VERSIONS = ("2.3.0", "3.1.0", "4.0.0")
RENAME_DATABASE = "ca_bench_rename"  # the head-to-head's own metastore, on the same PostgreSQL
WAREHOUSE = REPO / "var" / "bench" / "alter-warehouse"
PREVIEW_STATEMENTS = {
    "RENAME TO": "ALTER TABLE bench.{t} RENAME TO bench.{t}_renamed",
    "ADD COLUMNS … CASCADE": "ALTER TABLE bench.{t} ADD COLUMNS (added string) CASCADE",
    "CHANGE COLUMN (rename) CASCADE": "ALTER TABLE bench.{t} CHANGE COLUMN country country_code string CASCADE",
    "SET TBLPROPERTIES": "ALTER TABLE bench.{t} SET TBLPROPERTIES ('owner_team'='bench')",
    "SET LOCATION": "ALTER TABLE bench.{t} SET LOCATION '{warehouse}/elsewhere'",
    "partition locations by prefix": "ALTER TABLE bench.{t} PARTITION LOCATIONS REPLACE PREFIX '{root}' "
    "WITH '{warehouse}/archive/moved'",
    "PARTITION RENAME": "ALTER TABLE bench.{t} PARTITION (dt='{day}', hour=0) "
    "RENAME TO PARTITION (dt='1999-01-01', hour=0)",
    "DROP PARTITION (one day)": "ALTER TABLE bench.{t} DROP PARTITION (dt='{day}')",
}
END_TO_END = {
    "ADD COLUMNS … CASCADE": "ALTER TABLE bench.{t} ADD COLUMNS (added string) CASCADE",
    "CHANGE COLUMN (rename, analysed) CASCADE": "ALTER TABLE bench.{t} CHANGE COLUMN country country_code string "
    "CASCADE",
    "RENAME TO (managed, directory moved)": "ALTER TABLE bench.{t} RENAME TO bench.{t}_renamed",
}


def alias_of(version: str) -> str:
    """The metastore alias of a schema version's benchmark database: ``bench23``, ``bench31``, ``bench40``."""
    return "bench" + "".join(version.split(".")[:2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--col-stats", type=int, default=5)
    parser.add_argument("--hive-partitions", type=int, default=10_000)
    parser.add_argument("--versions", default=",".join(VERSIONS), help="schema versions, comma-separated")
    parser.add_argument("--rename-only", action="store_true", help="only the end-to-end rename at P partitions")
    parser.add_argument(
        "--rewrite", action="store_true", help="with --rename-only: then rewrite every partition's location prefix"
    )
    args = parser.parse_args()
    versions = [v for v in args.versions.split(",") if v]
    if args.rename_only:
        rename_only(args, versions)
        return

    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    urls = {}
    for version in versions:
        recreate_metastore(f"ca_{alias_of(version)}_alter", version)
        urls[alias_of(version)] = f"postgresql://postgres@127.0.0.1:5432/ca_{alias_of(version)}_alter"
    recreate_metastore(RENAME_DATABASE, "2.3.0")
    urls["rename"] = f"postgresql://postgres@127.0.0.1:5432/{RENAME_DATABASE}"
    setup_django(";".join(f"{alias}={url}" for alias, url in urls.items()))

    preview_ms: dict[str, dict[str, tuple[float, int, str]]] = {}
    runs: list[tuple[str, str, int, float, float, str]] = []
    for version in versions:
        alias = alias_of(version)
        big = seed_table(args.partitions, args.col_stats, alias)
        small = seed_table(args.partitions // 10, args.col_stats, alias)
        preview_ms[version] = previews(alias, big)
        runs += end_to_end(alias, version, ((small, args.partitions // 10), (big, args.partitions)))
    results = preview_table(preview_ms, args.partitions) + end_to_end_table(runs)
    results += hive_against_console(args.hive_partitions, args.col_stats)
    report(args, versions, results)


def rename_only(args: argparse.Namespace, versions: list[str]) -> None:
    """The end-to-end rename of a P-partition table on each schema with the events it writes, then a prefix rewrite
    of every partition's location (one ALTER_PARTITION event per partition, as Hive's alter_partitions)."""
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    urls, suffix = {}, os.environ.get("CATALOG_ADMIN_TEST_DB_SUFFIX", "")  # beside other runs on the same server
    for version in versions:
        recreate_metastore(f"ca_{alias_of(version)}_alter{suffix}", version)
        urls[alias_of(version)] = f"postgresql://postgres@127.0.0.1:5432/ca_{alias_of(version)}_alter{suffix}"
    setup_django(";".join(f"{alias}={url}" for alias, url in urls.items()))
    lines = [
        f"### Rename and prefix rewrite with notification events on ({args.partitions:,} partitions, "
        f"{args.partitions * args.col_stats:,} statistics rows; preview + execute, one metastore transaction)",
        "",
        "| operation | schema | seconds | preview s | execute s | its largest statements (s) | metastore rows changed "
        "| notification events written |",
        "|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for version in versions:
        alias = alias_of(version)
        table = seed_table(args.partitions, args.col_stats, alias)
        statements = {
            "RENAME TO (managed, directory moved)": lambda t=table: END_TO_END[
                "RENAME TO (managed, directory moved)"
            ].format(t=t),
            "partition locations by prefix": lambda t=f"{table}_renamed", a=alias: PREVIEW_STATEMENTS[
                "partition locations by prefix"
            ].format(t=t, root="file:" + str(_table_dir(t, a)), warehouse=f"file:{WAREHOUSE / a}"),
        }
        if not args.rewrite:
            statements.pop("partition locations by prefix")
        for label, statement in statements.items():
            split = _split_execute(statement(), alias)
            counts = split.counts
            events = counts.pop("NOTIFICATION_LOG", {}).get("insert", 0)
            rows = sum(sum(c.values()) for c in counts.values())
            lines.append(
                f"| {label} | Hive {version} | {split.seconds:.2f} | {split.preview:.2f} | {split.execute:.2f} | "
                f"{split.largest()} | {rows:,} | {events:,} |"
            )
            print(
                f"{alias}: {label} at {args.partitions:,} partitions: {split.seconds:.2f} s (preview "
                f"{split.preview:.2f}, execute {split.execute:.2f}: {split.largest()}), {events} events",
                flush=True,
            )
    header = [
        f"Command: `.venv/bin/python benchmarks/alter.py --rename-only --partitions {args.partitions} "
        f"--col-stats {args.col_stats} --versions {','.join(versions)}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores "
        f"(load average {os.getloadavg()[0]:.1f} when the report was written); "
        "PostgreSQL on 127.0.0.1, Hive's official schemas; timed without memory tracing.",
        "",
    ]
    write_section(REPO / "docs" / "benchmarks.md", "Rename with notification events", "\n".join(header + lines + [""]))


def seed_table(partitions: int, col_stats: int, metastore: str) -> str:
    """Seed one more ``bench.events*`` table; returns its name. Its table directory exists on disk."""
    from django.core.management import call_command

    from catalog_admin.models import Table

    tables = Table.objects.using(metastore).filter(database__name="bench")
    before = set(tables.values_list("name", flat=True))
    timed(
        f"{metastore}: seed {partitions} partitions",
        lambda: call_command(
            "seed_metastore",
            metastore=metastore,
            big_table_partitions=partitions,
            col_stats=col_stats,
            warehouse=str(WAREHOUSE / metastore),
            verbosity=0,
        ),
    )
    name = (set(tables.values_list("name", flat=True)) - before).pop()
    _analyze(metastore)
    _table_dir(name, metastore).mkdir(parents=True, exist_ok=True)
    return name


def _table_dir(name: str, metastore: str) -> Path:
    from catalog_admin.models import Table

    location = Table.objects.using(metastore).get(database__name="bench", name=name).sd.location
    return Path(location.removeprefix("file:"))


def _analyze(metastore: str) -> None:
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes

    with allow_metastore_writes(), connections[metastore].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def _first_day(table: str, metastore: str) -> str:
    from catalog_admin.models import Partition

    names = Partition.objects.using(metastore).filter(table__name=table).order_by("name").values_list("name", flat=True)
    return names[0].split("/")[0].split("=")[1]


def previews(metastore: str, table: str) -> dict[str, tuple[float, int, str]]:
    """Per operation: the median preview time in ms of 5, the rows it will change, and its risk."""
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_preview_statement

    day, root = _first_day(table, metastore), "file:" + str(_table_dir(table, metastore))
    measured = {}
    for label, template in PREVIEW_STATEMENTS.items():
        statement = template.format(t=table, day=day, root=root, warehouse=f"file:{WAREHOUSE / metastore}")
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            preview = alter_preview_statement(metastore=get_metastore(metastore), statement=statement)
            samples.append((time.perf_counter() - started) * 1000)
        assert not preview.blockers, f"{label}: a blocked preview measures nothing ({preview.blockers})"
        rows = sum(r.inserted + r.updated + r.deleted for r in preview.row_changes)
        measured[label] = (sorted(samples)[2], rows, preview.risk)
        print(f"{metastore}: preview {label}: {measured[label][0]:.0f} ms, {rows:,} rows", flush=True)
    return measured


def preview_table(measured: dict[str, dict[str, tuple[float, int, str]]], partitions: int) -> list[str]:
    versions = list(measured)
    lines = [
        f"### Preview on `bench.events` ({partitions:,} partitions; median of 5, ms; target < 300)",
        "",
        f"| operation | {' | '.join(f'Hive {v}' for v in versions)} | rows it will change "
        f"({' / '.join(versions)}) | risk |",
        f"|---|{'---:|' * len(versions)}---:|---|",
    ]
    for label in PREVIEW_STATEMENTS:
        cells = [measured[v][label] for v in versions]
        lines.append(
            f"| {label} | {' | '.join(f'{ms:.0f}' for ms, _r, _k in cells)} | "
            f"{' / '.join(f'{rows:,}' for _ms, rows, _k in cells)} | {cells[0][2]} |"
        )
    return [*lines, ""]


@dataclass
class SplitRun:
    """One preview + execute, timed apart, with the execution's SQL statements (seconds, text)."""

    preview: float
    execute: float
    counts: dict
    statements: list[tuple[float, str]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return self.preview + self.execute

    def largest(self, count: int = 3) -> str:
        """The ``count`` slowest statements of the execution, as ``UPDATE PART_COL_STATS 4.61``."""
        named = []
        for seconds, sql in sorted(self.statements, reverse=True)[:count]:
            words = sql.replace('"', "").replace("`", "").split()
            verb = words[0].upper() if words else "?"
            target = words[2] if verb == "INSERT" and len(words) > 2 else words[1] if len(words) > 1 else "?"
            named.append(f"{verb} {target} {seconds:.2f}")
        return ", ".join(named)


def _split_execute(statement: str, metastore: str) -> SplitRun:
    """Preview, then execute with every SQL statement on the metastore timed (Django's ``execute_wrapper``)."""
    from django.db import connections

    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_execute, alter_preview_statement

    statements: list[tuple[float, str]] = []

    def timer(execute, sql, params, many, context):  # noqa: ANN001, ANN202 - Django's wrapper signature
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            statements.append((time.perf_counter() - started, sql))

    started = time.perf_counter()
    preview = alter_preview_statement(metastore=get_metastore(metastore), statement=statement)
    previewed = time.perf_counter()
    with connections[metastore].execute_wrapper(timer):
        execution = alter_execute(preview=preview, actor="benchmark", source="cli", reason="benchmark")
    executed = time.perf_counter()
    assert execution.actual_counts == execution.expected_counts
    return SplitRun(previewed - started, executed - previewed, execution.actual_counts, statements)


def _execute(statement: str, metastore: str, *, trace_memory: bool = True) -> tuple[float, float, dict]:
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


def end_to_end(
    metastore: str, version: str, tables: tuple[tuple[str, int], ...]
) -> list[tuple[str, str, int, float, float, str]]:
    """``(label, version, partitions, seconds, peak MB, descriptor growth)`` for each operation on each table."""
    from catalog_admin.models import Column, ColumnDescriptor

    def descriptors() -> tuple[int, int]:
        return ColumnDescriptor.objects.using(metastore).count(), Column.objects.using(metastore).count()

    runs = []
    for table, partitions in tables:
        for label, template in END_TO_END.items():
            before = descriptors()
            seconds, peak, _counts = _execute(template.format(t=table), metastore)
            after = descriptors()
            growth = f"{before[0]:,} / {before[1]:,} → {after[0]:,} / {after[1]:,}"
            runs.append((label, version, partitions, seconds, peak, growth))
            print(f"{metastore}: {label} at {partitions:,} partitions: {seconds:.2f} s, {peak:.1f} MB", flush=True)
    return runs


def end_to_end_table(runs: list[tuple[str, str, int, float, float, str]]) -> list[str]:
    lines = [
        "### End to end (preview + execute, one metastore transaction, directory move included; timed with "
        "Python's memory tracing on; target < 10 s)",
        "",
        "| operation | schema | partitions | seconds | peak Python memory MB | CDS / COLUMNS_V2 rows before → after |",
        "|---|---|---:|---:|---:|---|",
    ]
    for label, version, partitions, seconds, peak, growth in sorted(runs, key=lambda r: (r[0], r[1], r[2])):
        lines.append(f"| {label} | Hive {version} | {partitions:,} | {seconds:.2f} | {peak:.1f} | {growth} |")
    return [*lines, ""]


def hive_against_console(partitions: int, col_stats: int, runs: int = 3) -> list[str]:
    """Hive's rename through Spark's Hive client against the console's, on identical freshly seeded tables.

    Both run on their own metastore database (same PostgreSQL) holding just these tables, not beside the
    million statistics rows the 100,000-partition phase left. The console renames ``runs`` tables (median
    reported) before Spark starts, so the JVM is not running beside it; Hive renames one (tens of seconds).
    Two more Hive renames (an unpartitioned table, and the same partitions without statistics) calibrate
    the preview's estimate of Hive's cost: a base, a cost per partition and one per statistics row.
    """
    import statistics
    import sys

    sys.path.insert(0, str(REPO))
    from django.conf import settings

    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_preview_statement
    from tests.witness.spark_hive import start_spark_hive, stop_spark

    hive_table = seed_table(partitions, col_stats, "rename")
    bare_table = seed_table(partitions, 0, "rename")
    console_tables = [seed_table(partitions, col_stats, "rename") for _ in range(runs)]
    renames = {t: f"ALTER TABLE bench.{t} RENAME TO bench.{t}_by_console" for t in console_tables}
    estimate = alter_preview_statement(metastore=get_metastore("rename"), statement=renames[console_tables[0]]).hive
    console_runs = []
    for statement in renames.values():
        seconds, _peak, _counts = _execute(statement, "rename", trace_memory=False)
        console_runs.append(seconds)
        print(f"console rename of {partitions} partitions: {seconds:.2f} s", flush=True)
    console_seconds = statistics.median(console_runs)
    spark = start_spark_hive(RENAME_DATABASE, WAREHOUSE / "rename")
    try:
        spark.sql(f"DESCRIBE bench.{hive_table}").collect()  # warm the Hive client up outside the timing

        def hive_rename(table: str) -> float:
            statement = f"ALTER TABLE {table} RENAME TO {table}_by_hive"
            return timed(f"Hive: {statement}", lambda: spark.sql(statement).collect())[0]

        base = hive_rename("default.scratch_notes")
        bare = hive_rename(f"bench.{bare_table}")
        hive_seconds = hive_rename(f"bench.{hive_table}")
    finally:
        stop_spark(spark)
    stats = tuple(_statistics_left(f"{t}_by_{by}") for t, by in ((hive_table, "hive"), (console_tables[0], "console")))
    cost = settings.CATALOG_HIVE_COST
    per_partition, per_statistic = (bare - base) / partitions, (hive_seconds - bare) / (partitions * col_stats)
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
        "Hive's cost, calibrated from the same run (Hive renames of an unpartitioned table and of the same "
        f"{partitions:,} partitions without statistics: {base:.2f} s and {bare:.1f} s):",
        "",
        "| `CATALOG_HIVE_COST` | this run | the setting the preview used |",
        "|---|---:|---:|",
        f"| `base_seconds` | {base:.2f} | {cost['base_seconds']} |",
        f"| `partition_ms` (per partition rewritten) | {per_partition * 1000:.2f} | {cost['partition_ms']} |",
        f"| `statistic_ms` (per statistics row deleted) | {per_statistic * 1000:.2f} | {cost['statistic_ms']} |",
        "",
        f"With that setting the preview estimated Hive's rename at **{estimate.estimated_seconds:.1f} s** "
        f"({estimate.partition_round_trips:,} partition round trips, {estimate.statistics_deleted:,} statistics rows "
        f"deleted); Hive took {hive_seconds:.1f} s. The defaults are in `catalog_admin/settings.py`; set them "
        "(`CATALOG_HIVE_COST_*`) from a run against your own Hive.",
        "",
    ]


def _statistics_left(table: str) -> int:
    from catalog_admin.models import PartitionColumnStatistics

    return PartitionColumnStatistics.objects.using("rename").filter(partition__table__name=table).count()


def report(args: argparse.Namespace, versions: list[str], results: list[str]) -> None:
    header = [
        f"Command: `.venv/bin/python benchmarks/alter.py --partitions {args.partitions} --col-stats {args.col_stats} "
        f"--hive-partitions {args.hive_partitions} --versions {','.join(versions)}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores "
        f"(load average {os.getloadavg()[0]:.1f} when the report was written); PostgreSQL 15 on 127.0.0.1, "
        f"Hive's official {', '.join(versions)} schemas.",
        "",
    ]
    write_section(REPO / "docs" / "benchmarks.md", "Alter at scale", "\n".join(header + results))


if __name__ == "__main__":
    main()

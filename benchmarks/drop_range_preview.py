"""
The preview of a range ``DROP PARTITION`` on a 100,000-partition table with real directories, and its execution.

    .venv/bin/python benchmarks/drop_range_preview.py [--partitions 100000] [--year 8760] [--baseline 720]
        [--version 3.1.0] [--before 9cbe853] [--rounds 3] [--runs 3] [--profile] [--reuse] [--preview-only]
        [--execute-only [--execution-before COMMIT]]

A PostgreSQL database ``ca_<alias>_drop_range<suffix>`` with Hive's official schema, ``bench.events`` seeded with
P hourly partitions (``seed_metastore``; one day is 24 partitions) and every partition's directory on local disk with
one small file. Measured, in the same run:

- the preview of ``DROP PARTITION (dt < '…')`` over a year of hourly partitions (``--year``; target < 1 s), over
  every partition (target < 5 s) and over the ``--baseline`` sizes, by this checkout's code and by the code before
  this change (``--before``, a commit extracted with ``git archive`` under ``var/bench``), each in new processes on
  the same database (``common.previews_in_child``), the two alternating for ``--rounds`` rounds; each process
  previews ``--runs`` times: the first preview in a new process, and the later ones with its caches warm, are
  reported apart (medians over the rounds);
- the execution of the year's drop (its directories moved to the console's trash) against the preview's estimate
  (target: within 2×), unless ``--preview-only``; with ``--execute-only`` only that, and with ``--execution-before``
  the code of that commit first drops the year before it, in a child process on the same table (``before_code.py``).

``--profile`` prints cProfile's top functions of one year's preview. Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import shutil
import statistics
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

from alter import alias_of
from before_code import execute_before
from common import REPO, code_at, previews_in_child, recreate_metastore, setup_django, timed, write_section

WAREHOUSE = REPO / "var" / "bench" / "drop-range-warehouse"
# what was measured; the first preview in a new process and the later ones, ms; partitions dropped; fingerprint
Row = tuple[str, float, float | None, int, str]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--year", type=int, default=8_760)
    parser.add_argument("--baseline", default="720", help="more sizes measured, comma-separated")
    parser.add_argument("--version", default="3.1.0")
    parser.add_argument("--before", default="9cbe853", help="the commit measured as the baseline")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the two codes, alternating")
    parser.add_argument("--runs", type=int, default=3, help="previews per process (the first one cold)")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions of a year's preview")
    parser.add_argument("--reuse", action="store_true", help="keep the database and directories of an earlier run")
    parser.add_argument("--execute-only", action="store_true", help="only drop the next --year partitions, timed")
    parser.add_argument(
        "--execution-before", default="", help="with --execute-only: first the code of this commit drops --year"
    )
    parser.add_argument(
        "--preview-only", action="store_true", help="measure the previews only (the table is left as it was)"
    )
    args = parser.parse_args()
    alias = alias_of(args.version)
    database = f"ca_{alias}_drop_range{os.environ.get('CATALOG_ADMIN_TEST_DB_SUFFIX', '')}"
    if not args.reuse:
        shutil.rmtree(WAREHOUSE, ignore_errors=True)
        recreate_metastore(database, args.version)
    os.environ[f"METASTORE_WAREHOUSE_{alias.upper()}"] = str(WAREHOUSE / alias)  # the governed root
    setup_django(f"{alias}={f'postgresql://postgres@127.0.0.1:5432/{database}'}")
    table = "events" if args.reuse else seed(alias, args.partitions)
    if args.profile:
        profile(alias, table, args.year)
        return
    if args.execute_only:
        baseline = None
        if args.execution_before:
            baseline = execute_before(args.execution_before, alias, statement(alias, table, args.year))
        report_execution(args, execute(alias, table, args.year), baseline)
        return
    sizes = [int(size) for size in args.baseline.split(",") if size] + [args.year, args.partitions]
    url = f"{alias}=postgresql://postgres@127.0.0.1:5432/{database}"
    rows = [row for size in sizes for row in compare(args, alias, url, statement(alias, table, size))]
    run = None if args.preview_only else execute(alias, table, args.year)
    report(args, rows, run)


def seed(alias: str, partitions: int) -> str:
    """``bench.events`` with ``partitions`` hourly partitions, each directory on disk with one small file."""
    from django.core.management import call_command
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes
    from catalog_admin.models import Partition, Table

    timed(
        f"{alias}: seed {partitions} partitions",
        lambda: call_command(
            "seed_metastore",
            metastore=alias,
            big_table_partitions=partitions,
            col_stats=1,
            warehouse=str(WAREHOUSE / alias),
            verbosity=0,
        ),
    )
    table = Table.objects.using(alias).filter(database__name="bench").order_by("-id").first()
    locations = Partition.objects.using(alias).filter(table_id=table.id).values_list("sd__location", flat=True)

    def write_files() -> None:
        for location in locations.iterator(chunk_size=10_000):
            folder = Path(location.removeprefix("file:"))
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "part-00000.parquet").write_bytes(b"x" * 64)

    timed(f"{alias}: write the partitions' directories", write_files)
    with allow_metastore_writes(), connections[alias].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return table.name


def statement(alias: str, table: str, partitions: int) -> str:
    """The range drop of the first ``partitions`` partitions left (whole days of 24 hourly partitions)."""
    from catalog_admin.models import Partition

    found = Partition.objects.using(alias).filter(table__database__name="bench", table__name=table)
    first = found.order_by("name").first()
    day = date.fromisoformat(first.name.split("/")[0].removeprefix("dt="))
    return f"ALTER TABLE bench.{table} DROP PARTITION (dt < '{day + timedelta(days=-(-partitions // 24))}')"


def preview(alias: str, table: str, partitions: int) -> Callable[[], object]:
    """The timed preview. The statement is written before (it looks up the first partition left: a sort of every
    partition's name), as for the ``--before`` code, which is handed it written."""
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_preview_statement

    text = statement(alias, table, partitions)
    return lambda: alter_preview_statement(metastore=get_metastore(alias), statement=text)


def compare(args: argparse.Namespace, alias: str, url: str, text: str) -> list[Row]:
    """The previews of ``text`` by the ``--before`` code and by this checkout's, alternating for ``--rounds``
    rounds, each round a new process per code: the median of the first previews and of the later ones."""
    codes = {f"before ({args.before})": code_at(args.before), "this code": REPO}
    samples: dict[str, list[list[float]]] = {label: [] for label in codes}
    found: dict[str, tuple[int, str]] = {}
    for _ in range(args.rounds):
        for label, code in codes.items():
            runs, dropped, blockers, fingerprint = previews_in_child(code, alias, url, text, args.runs)
            assert not blockers, f"{label} found {blockers} blocker(s)"
            samples[label].append(runs)
            found[label] = (dropped, fingerprint)
            print(f"{alias}: {label} dropping {dropped:,}: {[round(ms) for ms in runs]} ms, plan {fingerprint}")
    rows = []
    for label, per_round in samples.items():
        first = statistics.median(runs[0] for runs in per_round)
        later = [ms for runs in per_round for ms in runs[1:]]
        rows.append((label, first, statistics.median(later) if later else None, *found[label]))
    return rows


def profile(alias: str, table: str, partitions: int) -> None:
    """cProfile's top functions of one preview (cumulative time)."""
    profiler = cProfile.Profile()
    profiler.runcall(preview(alias, table, partitions))
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def execute(alias: str, table: str, partitions: int) -> tuple[int, float, float]:
    """Preview and execute the drop: partitions dropped, estimated and measured seconds of the execution."""
    from operations.services.alter import alter_execute

    plan = preview(alias, table, partitions)()
    started = time.perf_counter()
    alter_execute(preview=plan, actor="benchmark", source="cli", reason="benchmark")  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    estimate = plan.estimated_seconds  # type: ignore[attr-defined]
    print(f"{alias}: executed the drop of {plan.partitions_touched:,}: {seconds:.2f} s, estimated {estimate} s")  # type: ignore[attr-defined]
    return plan.partitions_touched, estimate, seconds  # type: ignore[attr-defined]


def report(args: argparse.Namespace, rows: list[Row], run: tuple | None) -> None:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [
        f"Command: `.venv/bin/python benchmarks/drop_range_preview.py --partitions {args.partitions} "
        f"--year {args.year} --baseline {args.baseline} --version {args.version} --before {args.before} "
        f"--rounds {args.rounds} --runs {args.runs}" + (" --preview-only" if args.preview_only else "") + "`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores "
        f"(`uptime` load averages {load} when the report was written); PostgreSQL on "
        f"127.0.0.1, Hive {args.version}'s official schema; every partition's directory on local disk (one file).",
        "",
        "### Preview of `ALTER TABLE bench.events DROP PARTITION (dt < '…')` (targets: a year < 1 s, all < 5 s)",
        "",
        "| code | partitions dropped | first preview in a new process, ms | later previews, ms | plan fingerprint |",
        "|---|---:|---:|---:|---|",
    ]
    for label, first, later, dropped, fingerprint in rows:
        warm = "" if later is None else f"{later:,.0f}"
        lines.append(f"| {label} | {dropped:,} | {first:,.0f} | {warm} | `{fingerprint[:12]}` |")
    write_section(REPO / "docs" / "benchmarks.md", "Range DROP PARTITION at scale", "\n".join(lines))
    if run is not None:
        report_execution(args, run)


def report_execution(args: argparse.Namespace, run: tuple[int, float, float], baseline: dict | None = None) -> None:
    dropped, estimate, seconds = run
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    before = f" --execution-before {args.execution_before}" if args.execution_before else ""
    lines = [
        f"Command: `.venv/bin/python benchmarks/drop_range_preview.py --partitions {args.partitions} "
        f"--year {args.year} --version {args.version} --execute-only{before}` (`--reuse` on the table an earlier run "
        f"left: drops the next {args.year:,} partitions); `uptime` load averages {load} when the report was written.",
        "",
        "| code | partitions | estimated s | measured s | measured / estimated |",
        "|---|---:|---:|---:|---:|",
    ]
    if baseline is not None:
        lines.append(
            f"| before ({args.execution_before}) | {baseline['partitions']:,} | {baseline['estimated_s']:.2f} | "
            f"{baseline['execute_s']:.2f} | {baseline['execute_s'] / baseline['estimated_s']:.2f} |"
        )
    lines += [
        f"| this code | {dropped:,} | {estimate:.2f} | {seconds:.2f} | {seconds / estimate:.2f} |",
        "",
        "The execution: the metastore rows deleted in one transaction (the before-image kept), each partition's "
        "directory moved to the console's trash and its emptied parent pruned, the audit record.",
    ]
    write_section(
        REPO / "docs" / "benchmarks.md", "Range DROP PARTITION execution against its estimate", "\n".join(lines)
    )


if __name__ == "__main__":
    main()

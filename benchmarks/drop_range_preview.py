"""
The preview of a range ``DROP PARTITION`` on a 100,000-partition table with real directories, and its execution.

    .venv/bin/python benchmarks/drop_range_preview.py [--partitions 100000] [--year 8760] [--baseline 720,1440]
        [--version 3.1.0] [--before 8eae23c] [--before-sizes 720,8760] [--profile] [--reuse] [--preview-only]
        [--execute-only [--execution-before COMMIT]]

A PostgreSQL database ``ca_<alias>_drop_range<suffix>`` with Hive's official schema, ``bench.events`` seeded with
P hourly partitions (``seed_metastore``; one day is 24 partitions) and every partition's directory on local disk with
one small file. Measured, in the same run:

- the preview of ``DROP PARTITION (dt < '…')`` over a year of hourly partitions (``--year``; target < 1 s) and over
  every partition (target < 5 s), median of 3;
- the baseline: the code before this change (``--before``, a commit extracted with ``git archive`` under
  ``var/bench`` and run in a child process on the same database, one preview at each of ``--before-sizes``, by
  default the ``--baseline`` sizes), and at the ``--baseline`` sizes this code with only the containment guard's
  sweep swapped for the pairwise comparison;
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

from alter import alias_of
from before_code import execute_before
from common import REPO, preview_at_commit, recreate_metastore, setup_django, timed, write_section

WAREHOUSE = REPO / "var" / "bench" / "drop-range-warehouse"
Row = tuple[str, float, int, str]  # what was measured, ms, partitions dropped, the plan's fingerprint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--year", type=int, default=8_760)
    parser.add_argument("--baseline", default="720,1440")
    parser.add_argument("--version", default="3.1.0")
    parser.add_argument("--before", default="8eae23c", help="the commit measured as the baseline")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions of a year's preview")
    parser.add_argument("--reuse", action="store_true", help="keep the database and directories of an earlier run")
    parser.add_argument("--execute-only", action="store_true", help="only drop the next --year partitions, timed")
    parser.add_argument(
        "--execution-before", default="", help="with --execute-only: first the code of this commit drops --year"
    )
    parser.add_argument(
        "--preview-only", action="store_true", help="measure the previews only (the table is left as it was)"
    )
    parser.add_argument(
        "--before-sizes", default="", help="sizes the --before commit is measured at (default: --baseline's)"
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
    sizes = [int(size) for size in args.baseline.split(",") if size]
    old_sizes = [int(size) for size in (args.before_sizes or args.baseline).split(",") if size]
    rows = [(size, before(args.before, alias, database, table, size)) for size in old_sizes]
    rows += [(size, measure(alias, table, size, pairwise=True)) for size in sizes]
    rows += [(size, measure(alias, table, size, pairwise=False)) for size in (*sizes, args.year, args.partitions)]
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


@contextmanager
def pairwise_guard(enabled: bool) -> Iterator[None]:
    """The containment guard's old comparison of every location with every user, in place of the sweep."""
    from operations import containment

    def pairwise(locations: list[str], users: list) -> list[list[int]]:
        touches = containment._touches
        return [[i for i, user in enumerate(users) if touches(user.location, end)] for end in locations]

    sweep = containment.users_near
    if enabled:
        containment.users_near = pairwise  # type: ignore[assignment]
    try:
        yield
    finally:
        containment.users_near = sweep  # type: ignore[assignment]


def preview(alias: str, table: str, partitions: int) -> Callable[[], object]:
    """The timed preview. The statement is written before (it looks up the first partition left: a sort of every
    partition's name), as for the ``--before`` code, which is handed it written."""
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_preview_statement

    text = statement(alias, table, partitions)
    return lambda: alter_preview_statement(metastore=get_metastore(alias), statement=text)


def measure(alias: str, table: str, partitions: int, *, pairwise: bool) -> Row:
    """Median ms of the previews (3 runs; 1 for the pairwise baseline) and the partitions it drops."""
    samples = []
    with pairwise_guard(pairwise):
        for _ in range(1 if pairwise else 3):
            started = time.perf_counter()
            plan = preview(alias, table, partitions)()
            samples.append((time.perf_counter() - started) * 1000)
    assert not plan.blockers, plan.blockers
    label = "this code, pairwise guard" if pairwise else "this code"
    ms = statistics.median(samples)
    fingerprint = plan.fingerprint  # type: ignore[attr-defined]
    print(
        f"{alias}: {label} preview dropping {plan.partitions_touched:,}: {ms:.0f} ms ({samples}), plan {fingerprint}",
        flush=True,
    )
    return label, ms, plan.partitions_touched, fingerprint


def before(commit: str, alias: str, database: str, table: str, partitions: int) -> Row:
    """One preview by the code of ``commit`` (extracted once under ``var/bench``), in a child process."""
    url = f"{alias}=postgresql://postgres@127.0.0.1:5432/{database}"
    ms, dropped, blockers, fingerprint = preview_at_commit(commit, alias, url, statement(alias, table, partitions))
    assert not blockers, f"the code of {commit} found {blockers} blocker(s)"
    print(f"{alias}: code of {commit} preview dropping {dropped:,}: {ms:.0f} ms, plan {fingerprint}", flush=True)
    return f"before ({commit})", ms, dropped, fingerprint


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


def report(args: argparse.Namespace, rows: list[tuple[int, Row]], run: tuple | None) -> None:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [
        f"Command: `.venv/bin/python benchmarks/drop_range_preview.py --partitions {args.partitions} "
        f"--year {args.year} --baseline {args.baseline} --version {args.version} --before {args.before}"
        + (f" --before-sizes {args.before_sizes}" if args.before_sizes else "")
        + (" --preview-only" if args.preview_only else "")
        + "`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores "
        f"(`uptime` load averages {load} when the report was written); PostgreSQL on "
        f"127.0.0.1, Hive {args.version}'s official schema; every partition's directory on local disk (one file).",
        "",
        "### Preview of `ALTER TABLE bench.events DROP PARTITION (dt < '…')` (targets: a year < 1 s, all < 5 s)",
        "",
        "| code | partitions dropped | ms | plan fingerprint |",
        "|---|---:|---:|---|",
    ]
    for _size, (label, ms, dropped, fingerprint) in rows:
        lines.append(f"| {label} | {dropped:,} | {ms:,.0f} | `{fingerprint[:12]}` |")
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

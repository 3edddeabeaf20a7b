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

The sides can run apart on the same seeded tables (Hive's drop of 100,000 partitions takes most of an hour), so the
ratio is still one run's: ``--side seed`` creates the metastore and every table and writes their names to
``var/bench/<database>.json``; ``--side hive`` drops the Hive side's table and records its time and loads there;
``--side console`` drops the console's tables and writes the section with both. ``--side both`` (the default) does
all three in turn. Hive's client gives up a metastore call after ``hive.metastore.client.socket.timeout`` (600 s by
default: the embedded ``RetryingHMSHandler`` registers it as the call's ``Deadline``), so the benchmark raises it
(``--hive-timeout``, 6 hours by default) for a large drop to finish.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from before_code import execute_before
from common import REPO, recreate_metastore, setup_django, timed, write_section

DATABASE = "ca_bench_drop"
ALIAS = "drop"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--col-stats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1, help="tables the console drops (the median is reported)")
    parser.add_argument("--before", default="", help="a commit whose code drops one more table (the baseline)")
    parser.add_argument("--side", choices=("both", "seed", "hive", "console"), default="both")
    parser.add_argument("--database", default=DATABASE, help="the PostgreSQL database of the metastore")
    parser.add_argument("--hive-timeout", default="6h", help="Hive's hive.metastore.client.socket.timeout")
    args = parser.parse_args()
    state_file = REPO / "var" / "bench" / f"{args.database}.json"
    if args.side in ("both", "seed"):
        state = seed(args)
        state_file.parent.mkdir(parents=True, exist_ok=True)
        state_file.write_text(json.dumps(state, indent=1))
    state = json.loads(state_file.read_text())
    if args.side in ("both", "hive"):
        state["hive"] = hive_side(state, args.hive_timeout)
        state_file.write_text(json.dumps(state, indent=1))
    if args.side in ("both", "console"):
        state["console"] = console_side(state, args.before)
        state_file.write_text(json.dumps(state, indent=1))
        report(state, args.before)


def warehouse(database: str) -> Path:
    return REPO / "var" / "bench" / f"{database}-warehouse"


def setup(state: dict, side: str) -> None:
    """Django on the seeded metastore, with a console database of this side's own (the sides may run at once);
    once per process."""
    if "django.conf" in sys.modules:
        return
    os.environ["CATALOG_ADMIN_VAR"] = str(REPO / "var" / "bench" / f"{state['database']}-{side}")
    Path(os.environ["CATALOG_ADMIN_VAR"]).mkdir(parents=True, exist_ok=True)
    # the console governs the bench's data
    os.environ[f"METASTORE_EXTRA_ROOTS_{ALIAS.upper()}"] = warehouse(state["database"]).as_uri()
    setup_django(f"{ALIAS}=postgresql://postgres@127.0.0.1:5432/{state['database']}")


def head() -> str:
    """The commit whose code runs (short), ``+`` when the worktree has changes."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True)
    return commit.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def moment() -> dict:
    return {"at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "load": os.getloadavg()[0]}


def seed(args: argparse.Namespace) -> dict:
    """The metastore and its identical tables: Hive's, the console's, and the baseline's (with ``--before``)."""
    shutil.rmtree(warehouse(args.database), ignore_errors=True)
    recreate_metastore(args.database, "2.3.0")
    state = {"database": args.database, "partitions": args.partitions, "col_stats": args.col_stats}
    state["commit"] = head()
    setup(state, "seed")
    state["seeded"] = moment()
    tables = [seed_table(state) for _ in range(1 + args.runs + bool(args.before))]
    _settle()
    state["tables"] = {"hive": tables[0], "console": tables[1 : 1 + args.runs], "before": tables[1 + args.runs :]}
    return state


def seed_table(state: dict) -> str:
    """One more ``bench.events*`` table with ``partitions`` partitions, ``col_stats`` statistics rows each, and a
    directory with one data file per partition; returns its name."""
    from django.core.management import call_command

    from catalog_admin.models import Partition, Table

    tables = Table.objects.using(ALIAS).filter(database__name="bench")
    before = set(tables.values_list("name", flat=True))
    timed(
        f"seed {state['partitions']} partitions",
        lambda: call_command(
            "seed_metastore",
            metastore=ALIAS,
            big_table_partitions=state["partitions"],
            col_stats=state["col_stats"],
            warehouse=str(warehouse(state["database"])),
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


def _settle() -> None:
    """``VACUUM ANALYZE`` of the metastore: each side's drop starts from a vacuumed metastore, as Hive's does after the
    seeding (this machine's PostgreSQL runs with autovacuum off; a production one vacuums after a large delete). Then
    ``sync``, so every drop starts with the seeded trees written back: without it the drops' previews differed by up
    to 2× within one run (``docs/benchmarks.md``)."""
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes

    with allow_metastore_writes(), connections[ALIAS].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    os.sync()


def console_drop(table: str) -> tuple[float, float, int, int]:
    """Preview and execute ``DROP TABLE``: (preview s, execution s, statements, statistics rows deleted)."""
    from catalog_admin.selectors.metastores import get_metastore
    from operations.services.alter import alter_execute, alter_preview_statement

    statement = f"DROP TABLE bench.{table}"
    _settle()  # as autovacuum would have since the last drop (off on this machine's PostgreSQL), as after seeding
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


def console_side(state: dict, before: str) -> dict:
    """The console drops its tables (and the baseline's, with ``--before``): timings and loads."""
    setup(state, "console")
    result: dict = {"start": moment(), "commit": head()}
    result["drops"] = [console_drop(table) for table in state["tables"]["console"]]
    if before:
        _settle()
        result["baseline"] = execute_before(before, ALIAS, f"DROP TABLE bench.{state['tables']['before'][0]}")
    result["end"] = moment()
    return result


def hive_side(state: dict, timeout: str) -> dict:
    """Hive's DROP TABLE of its table through Spark's Hive client: seconds, the outcome, the loads."""
    setup(state, "hive")
    sys.path.insert(0, str(REPO))
    from catalog_admin.models import Table
    from tests.witness.spark_hive import start_spark_hive, stop_spark

    table = state["tables"]["hive"]
    conf = {"spark.hadoop.hive.metastore.client.socket.timeout": timeout}
    spark = start_spark_hive(state["database"], warehouse(state["database"]), conf)
    result: dict = {"timeout": timeout, "error": "", "start": moment()}
    started = time.perf_counter()
    try:
        spark.sql(f"DESCRIBE bench.{table}").collect()  # warm the Hive client up outside the timing
        result["start"] = moment()
        started = time.perf_counter()
        spark.sql(f"DROP TABLE bench.{table}").collect()
    except Exception as exc:  # noqa: BLE001 - Hive's own deadline (hive.metastore.client.socket.timeout)
        result["error"] = str(exc)[:300]
        print(f"Hive's DROP TABLE failed after {time.perf_counter() - started:.1f} s: {result['error']}", flush=True)
    finally:
        result["seconds"] = time.perf_counter() - started
        result["end"] = moment()
        stop_spark(spark)
    print(f"Hive: DROP TABLE bench.{table}: {result['seconds']:.2f} s", flush=True)
    result["left"] = Table.objects.using(ALIAS).filter(database__name="bench", name=table).count()
    return result


def report(state: dict, before: str) -> None:
    console, hive = state["console"], state.get("hive")
    drops = console["drops"]
    totals = [preview + execute for preview, execute, _steps, _stats in drops]
    median = statistics.median(totals)
    preview_s, execute_s, steps, stats = drops[0]
    partitions, col_stats = state["partitions"], state["col_stats"]
    command = (
        f"`.venv/bin/python benchmarks/drop_table.py --partitions {partitions} --col-stats {col_stats} "
        f"--runs {len(drops)}{f' --before {before}' if before else ''}`"
    )
    if hive is not None:
        hive_outcome = "rows and data deleted" if not hive["left"] else "**failed**: the table is still there"
        hive_cell = f"{hive['seconds']:.1f}"
        hive_when = (
            f"Hive's drop {hive['start']['at']} – {hive['end']['at']} (load {hive['start']['load']:.1f} → "
            f"{hive['end']['load']:.1f}, its client's socket timeout {hive['timeout']})"
        )
    else:
        hive_outcome, hive_cell, hive_when = "not run", "–", "Hive's drop not run"
    body = [
        f"Command: {command} (or its sides apart on the same seeded tables: `--side seed`, then `--side hive` and "
        "`--side console`)",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores shared with other work; "
        "PostgreSQL 15 on 127.0.0.1, Hive's official 2.3.0 schema; the console's own state on SQLite. "
        f"Seeded {state['seeded']['at']} at commit {state['commit']}; {hive_when}; the console's drops "
        f"{console['start']['at']} – {console['end']['at']} at commit {console.get('commit', '?')} (load "
        f"{console['start']['load']:.1f} → {console['end']['load']:.1f}).",
        "",
        f"Identical tables of {partitions:,} partitions with {partitions * col_stats:,} "
        "PART_COL_STATS rows, each partition's directory holding one file.",
        "",
        "| | seconds | what it did |",
        "|---|---:|---|",
        f"| Hive 2.3 (Spark's built-in Hive client, `DROP TABLE`) | {hive_cell} | {hive_outcome} |",
        f"| catalog-admin, preview | {preview_s:.2f} | {steps} statements planned, {stats:,} statistics rows |",
        f"| catalog-admin, execution | {execute_s:.2f} | one DELETE per metastore table, the table's directory "
        "moved to the trash, the before-image kept |",
        f"| catalog-admin, preview + execution (median of {len(totals)}: "
        f"{', '.join(f'{t:.2f}' for t in totals)}) | {median:.2f} | |",
    ]
    if "baseline" in console:
        baseline = console["baseline"]
        previous = baseline["preview_s"] + baseline["execute_s"]
        ratio = f"{hive['seconds'] / previous:.0f}× Hive's" if hive is not None else ""
        body += [
            f"| baseline: the code of {before}, preview | {baseline['preview_s']:.2f} | |",
            f"| baseline: the code of {before}, execution | {baseline['execute_s']:.2f} | |",
            f"| baseline: the code of {before}, preview + execution | {previous:.2f} | {ratio} |",
        ]
    if hive is not None:
        bound = "at least " if hive["left"] else ""
        body += [
            "",
            f"The console's drop was **{bound}{hive['seconds'] / median:.0f}×** faster than Hive's (goal: at least "
            "50×), its data kept in the trash for the undrop.",
        ]
    write_section(REPO / "docs" / "benchmarks.md", "DROP TABLE against Hive's", "\n".join(body))


if __name__ == "__main__":
    main()

"""
Merging one metastore into another at scale: the naive baseline hive-tools does, and ``merge_execute``.

    .venv/bin/python benchmarks/merge.py [--partitions 1000000] [--col-stats 5] [--target-tables 100000]
                                         [--version 3.1.0] [--skip-baseline] [--skip-floor]

1. A source PostgreSQL metastore (Hive's official schema, ``ca_bench_merge_src<suffix>``) seeded with ``bench.events``
   of P partitions and P × C partition statistics rows (``seed_metastore``), and a target
   (``ca_bench_merge_tgt<suffix>``) seeded with T small tables. ``<suffix>``: ``CATALOG_ADMIN_TEST_DB_SUFFIX``.
2. The merge preview of ``bench`` into the target (timed).
3. The naive baseline, as NetEase hive-tools' ``MetaDataMerge`` (``src/main/java/com/netease/hivetools/apps/
   MetaDataMerge.java`` and ``mappers/MetaDataMapper.java``) does it: for each Hive table in dependency order, the
   offset is the target's ``MAX(id)``; the source's rows are read into the client (hive-tools pages PARTITIONS, SDS,
   SERDES and their parameter tables by 10,000 ids and reads the others whole; here a server-side cursor reads 10,000
   rows at a time, so memory stays bounded), every id and foreign id is shifted by its table's offset in the client,
   and the rows are written by multi-row ``INSERT`` statements of 100 rows (``MetaDataMapper.batchInsert`` splits each
   list into sub-lists of 100 for its MyBatis ``batchInsert<Table>`` statement), committed per table. hive-tools
   neither advances ``SEQUENCE_TABLE`` nor rewrites names or locations; the baseline does rename the database and
   rewrite locations as the preview asks, in the client, so both sides do the same work.
4. ``operations.merge.execute.merge_execute`` of the same databases under another name, in process (``spark=None``),
   run before the baseline so that the peak memory it reports is its own.
5. The target's floor (``merge_floor.py``): the rows ``merge_execute`` wrote loaded with ``COPY`` into a copy of the
   target taken before it, by one writer with Hive's foreign keys and by two writers without their checks.

Reports partitions/s and the peak memory of this process (``ru_maxrss``; the seeding runs in child processes, so the
peak is the preview's and the merges'). Results go to ``docs/benchmarks.md`` ("Metastore merge").
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import merge_floor
from common import REPO, recreate_metastore, setup_django, timed, write_section

SUFFIX = os.environ.get("CATALOG_ADMIN_TEST_DB_SUFFIX", "")
SOURCE, TARGET = "mergesrc", "mergetgt"
DATABASES = {SOURCE: f"ca_bench_merge_src{SUFFIX}", TARGET: f"ca_bench_merge_tgt{SUFFIX}"}
WAREHOUSE = REPO / "var" / "bench" / "merge-warehouse"
FLOOR, FLOOR_DIR = f"ca_bench_merge_floor{SUFFIX}", REPO / "var" / "bench" / "merge-floor"
PAGE, BATCH = 10_000, 100  # hive-tools: 10,000 ids per page, 100 rows per INSERT

# Which table's offset a column's ids shift by (Hive's foreign keys, package.jdo); a table's own id column shifts by
# its own offset. Parents come first in INSERT_ORDER so the target's foreign keys hold after every statement.
REFERENCES = {
    "DB_ID": "DBS", "TBL_ID": "TBLS", "PARENT_TBL_ID": "TBLS", "CHILD_TBL_ID": "TBLS", "SD_ID": "SDS",
    "SD_ID_OID": "SDS", "SERDE_ID": "SERDES", "CD_ID": "CDS", "PARENT_CD_ID": "CDS", "CHILD_CD_ID": "CDS",
    "PART_ID": "PARTITIONS", "FUNC_ID": "FUNCS",
}  # fmt: skip
INSERT_ORDER = (
    "DBS", "DATABASE_PARAMS", "DB_PRIVS", "FUNCS", "FUNC_RU", "CDS", "COLUMNS_V2", "SERDES", "SERDE_PARAMS", "SDS",
    "SD_PARAMS", "BUCKETING_COLS", "SORT_COLS", "SKEWED_COL_NAMES", "SKEWED_VALUES", "SKEWED_COL_VALUE_LOC_MAP",
    "TBLS", "TABLE_PARAMS", "TBL_PRIVS", "TBL_COL_PRIVS", "KEY_CONSTRAINTS", "PARTITION_KEYS", "PARTITIONS",
    "PARTITION_KEY_VALS", "PARTITION_PARAMS", "PART_PRIVS", "PART_COL_PRIVS", "TAB_COL_STATS", "PART_COL_STATS",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--col-stats", type=int, default=5)
    parser.add_argument("--target-tables", type=int, default=100_000)
    parser.add_argument("--version", default="3.1.0", choices=("2.3.0", "3.1.0"))
    parser.add_argument("--skip-baseline", action="store_true", help="without the naive baseline")
    parser.add_argument("--skip-floor", action="store_true", help="without the target's floor (merge_floor.py)")
    args = parser.parse_args()

    for database in DATABASES.values():
        recreate_metastore(database, args.version)
    for alias, side in ((SOURCE, "source"), (TARGET, "target")):  # the roots each side governs (the merge checks them)
        os.environ.setdefault(f"METASTORE_WAREHOUSE_{alias.upper()}", f"file:{WAREHOUSE}/{side}")
    setup_django(";".join(f"{a}=postgresql://postgres@127.0.0.1:5432/{d}" for a, d in DATABASES.items()))
    seed(args)
    lines = [
        f"Command: `.venv/bin/python benchmarks/merge.py --partitions {args.partitions} --col-stats {args.col_stats} "
        f"--target-tables {args.target_tables} --version {args.version}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores (load average "
        f"{os.getloadavg()[0]:.1f} when the report was written); PostgreSQL on "
        f"127.0.0.1, Hive {args.version}'s official schema on both sides.",
        "",
    ]
    preview_seconds, preview = timed("merge preview", lambda: _preview("naive"))
    partitions = preview.rows_of("PARTITIONS")
    print(f"preview: {partitions:,} partitions, {sum(t.rows for t in preview.tables):,} rows", flush=True)
    lines += [
        f"Merge preview of `bench` ({partitions:,} partitions, {sum(t.rows for t in preview.tables):,} rows to carry) "
        f"into a target of {args.target_tables:,} tables: {preview_seconds:.2f} s.",
        "",
        "The naive baseline is what NetEase hive-tools' `MetaDataMerge` does: per Hive table in dependency order, "
        "offset = the target's `MAX(id)`, the source's rows read into the client, every id and foreign id shifted "
        "there, and multi-row `INSERT`s of 100 rows (`MetaDataMapper.batchInsert`), committed per table (here with the "
        "database renamed and the locations rewritten in the client too). `merge_execute` runs in process "
        "(`spark=None`): ids reserved under the target's locks, storage rows copied in journaled units, then one "
        "publishing transaction; PostgreSQL to PostgreSQL, every table goes through a `COPY` pipe (ids shifted, the "
        "database renamed and the locations rewritten in the source's `SELECT`).",
        "",
        "| run | seconds | partitions | partitions/s | rows inserted | peak RSS of the process (MB) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    if not args.skip_floor:
        _snapshot_target()
    row, phases, merge = merge_execute_row(partitions)  # first: ``ru_maxrss`` only grows, so its peak is its own
    lines.append(row)
    if not args.skip_baseline:
        lines.append(_row("naive baseline (hive-tools' batched INSERT)", *naive_baseline(preview), partitions))
    lines += ["", phases, ""]
    if not args.skip_floor:
        lines += [target_floor(merge, partitions), ""]
    write_section(REPO / "docs" / "benchmarks.md", "Metastore merge", "\n".join(lines))


def seed(args: argparse.Namespace) -> None:
    """Seed both metastores in child processes (``manage.py seed_metastore``), so this process's peak memory is the
    merge's alone."""
    warehouse = str(WAREHOUSE)
    big = ["--big-table-partitions", str(args.partitions), "--col-stats", str(args.col_stats)]
    timed(
        f"seed source: {args.partitions:,} partitions, {args.partitions * args.col_stats:,} statistics rows",
        lambda: _manage("seed_metastore", "--metastore", SOURCE, *big, "--warehouse", f"{warehouse}/source"),
    )
    timed(
        f"seed target: {args.target_tables:,} tables",
        lambda: _manage(
            "seed_metastore", "--metastore", TARGET, "--tables", str(args.target_tables), "--warehouse",
            f"{warehouse}/target",
        ),
    )  # fmt: skip
    for alias in DATABASES:
        _vacuum(alias)


def _manage(*args: str) -> None:
    subprocess.run([sys.executable, str(REPO / "manage.py"), *args], check=True, capture_output=True, text=True)


def _vacuum(alias: str) -> None:
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes

    with allow_metastore_writes(), connections[alias].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def _preview(label: str) -> Any:
    from operations.merge.preview import merge_preview
    from operations.merge.request import MergeRequest, parse_location_rule

    rule = parse_location_rule(f"file:{WAREHOUSE}/source=file:{WAREHOUSE}/target/{label}")
    request = MergeRequest(
        source=SOURCE, target=TARGET, databases=("bench",), renames=(("bench", f"bench_{label}"),),
        location_rules=(rule,),
    )  # fmt: skip
    preview = merge_preview(request)
    if preview.blockers:
        raise SystemExit(f"The merge is blocked: {preview.blockers[0].message}")
    return preview


# The naive baseline ------------------------------------------------------------------------------------------------


def naive_baseline(preview: Any) -> tuple[float, int, float]:
    """hive-tools' merge of ``preview``'s databases: seconds, rows inserted, the process's peak RSS in MB."""
    import psycopg2

    source = psycopg2.connect(host="127.0.0.1", user="postgres", dbname=DATABASES[SOURCE])
    target = psycopg2.connect(host="127.0.0.1", user="postgres", dbname=DATABASES[TARGET])
    started = time.perf_counter()
    inserted = 0
    try:
        offsets = _offsets(target)
        for table in INSERT_ORDER:
            count = _copy_table(source, target, table, preview, offsets)
            inserted += count
            print(f"  baseline {table}: {count:,} rows ({time.perf_counter() - started:.1f} s)", flush=True)
    finally:
        seconds = time.perf_counter() - started
        source.close()
        target.close()
    return seconds, inserted, _rss_mb()


def _offsets(target: Any) -> dict[str, int]:
    """hive-tools' ``getTableMaxId``: each id table's current maximum in the target (new id = old id + maximum)."""
    from operations.merge.scope import CARRIED_TABLES

    offsets = {}
    with target.cursor() as cursor:
        for table in CARRIED_TABLES:
            if table.id_column:
                cursor.execute(f'SELECT COALESCE(MAX("{table.id_column}"), 0) FROM "{table.name}"')
                offsets[table.name] = int(cursor.fetchone()[0])
    return offsets


def _copy_table(source: Any, target: Any, name: str, preview: Any, offsets: dict[str, int]) -> int:
    from psycopg2.extras import execute_values

    from operations.merge.scope import CARRIED_TABLES

    table = next(t for t in CARRIED_TABLES if t.name == name)
    if not preview.rows_of(name):
        return 0
    database_ids = _database_ids(source, preview)
    where = table.where(database_ids)
    copied = 0
    with target.cursor() as out:
        for columns, rows in _pages(source, f'SELECT * FROM "{name}" WHERE {where}'):
            shift = _shifter(name, table.id_column, columns, offsets, preview)
            quoted = ", ".join('"' + column + '"' for column in columns)
            insert = f'INSERT INTO "{name}" ({quoted}) VALUES %s'
            execute_values(out, insert, [shift(row) for row in rows], page_size=BATCH)
            copied += len(rows)
    target.commit()
    return copied


def _database_ids(source: Any, preview: Any) -> str:
    names = [d.name for d in preview.databases]
    with source.cursor() as cursor:
        cursor.execute('SELECT "DB_ID" FROM "DBS" WHERE "NAME" = ANY(%s)', [names])
        return ", ".join(str(int(i)) for (i,) in cursor.fetchall())


def _pages(source: Any, sql: str) -> Iterator[tuple[list[str], list[tuple]]]:
    """The rows of ``sql`` through a server-side cursor, ``PAGE`` at a time, with the column names."""
    with source.cursor(name="merge_baseline") as cursor:
        cursor.itersize = PAGE
        cursor.execute(sql)
        while rows := cursor.fetchmany(PAGE):
            yield [d.name for d in cursor.description], rows


def _shifter(name: str, id_column: str | None, columns: list[str], offsets: dict[str, int], preview: Any) -> Any:
    """A function turning a source row into the target's: ids shifted, the database renamed, locations rewritten."""
    request = preview.request
    shifts = []
    for index, column in enumerate(columns):
        if column == id_column:
            shifts.append((index, offsets[name]))
        elif column in REFERENCES and REFERENCES[column] in offsets:
            shifts.append((index, offsets[REFERENCES[column]]))
    renames = [i for i, c in enumerate(columns) if (name, c) in {("DBS", "NAME"), (name, "DB_NAME")}]
    locations = [i for i, c in enumerate(columns) if c in ("LOCATION", "DB_LOCATION_URI")]

    def shift(row: tuple) -> tuple:
        values = list(row)
        for index, offset in shifts:
            if values[index] is not None:
                values[index] += offset
        for index in renames:
            values[index] = request.new_name(values[index])
        for index in locations:
            values[index] = request.rewrite(values[index])
        return tuple(values)

    return shift


# merge_execute -----------------------------------------------------------------------------------------------------


def merge_execute_row(partitions: int) -> tuple[str, str, Any]:
    """The table row of ``merge_execute``, a sentence with its phases and the publishing time of each big table, and
    the ``MergeImport`` it journaled."""
    label = "merge_execute (operations.merge.execute)"
    from operations.merge.execute import merge_execute

    preview = _preview("merged")
    events: list[tuple[float, str]] = []  # (when, message) of every progress message

    def report(event: dict) -> None:
        if event.get("message"):
            events.append((time.perf_counter(), str(event["message"])))

    started = time.perf_counter()
    merge = merge_execute(preview.request, preview, report=report)
    seconds = time.perf_counter() - started
    copying = next((when for when, message in events if message.startswith("Copying")), None)
    publishing = [(when, message) for when, message in events if message.startswith("Publishing")]
    assert copying and publishing, "the merge program's progress messages changed: update this benchmark"
    first_copy, first_publish = copying - started, publishing[0][0] - started
    copy = first_publish - first_copy
    tables, previous = [], publishing[0][0]
    for when, message in publishing[1:]:
        name, rows = message.removeprefix("Publishing: ").rsplit(" ", 2)[:2]
        if int(rows) >= partitions:  # the partitions and the tables with a row or more per partition
            tables.append(f"`{name}` {int(rows):,} rows {when - previous:.1f} s")
        previous = when
    written = next((message for _, message in events if message.startswith("Events:")), "Events: none")
    checked = next((f"{message}. " for _, message in events if message.startswith("Foreign keys:")), "")
    phases = (
        f"`merge_execute`'s phases: the re-preview (the approval's check), reserving ids and planning "
        f"{first_copy:.2f} s; copying the storage rows (committed units, invisible to Hive) {copy:.2f} s, "
        f"until the publishing transaction had written its first table; publishing the rest (DBS, TBLS and every row "
        f"that references them, one transaction) {seconds - first_publish:.2f} s, of which {', '.join(tables)}. "
        f"{checked}{written}."
    )
    print(phases, flush=True)
    return _row(label, seconds, sum(t.rows for t in preview.tables), _rss_mb(), partitions), phases, merge


# The target's floor ------------------------------------------------------------------------------------------------


def _snapshot_target() -> None:
    """A copy of the target before any merge writes to it, for ``target_floor``."""
    from django.db import connections

    connections.close_all()
    merge_floor.snapshot(DATABASES[TARGET], FLOOR)


def target_floor(merge: Any, partitions: int) -> str:
    """``merge_floor``'s two loads of the rows ``merge`` wrote: a paragraph for the report."""
    dumps = merge_floor.dump_merged(merge, FLOOR_DIR)
    rows = sum(dump.rows for dump in dumps)
    try:
        one, per_table = merge_floor.one_writer(FLOOR, dumps)
        print(f"floor, one writer: {one:.2f} s ({partitions / one:,.0f} partitions/s), {rows:,} rows", flush=True)
        two = merge_floor.two_writers(FLOOR, dumps)
        print(f"floor, two writers: {two:.2f} s ({partitions / two:,.0f} partitions/s)", flush=True)
    finally:
        merge_floor.drop(FLOOR)
        for dump in dumps:
            dump.remove()
    big = ", ".join(f"`{d.table}` {d.rows:,} rows {per_table[d.table]:.1f} s" for d in dumps if d.rows >= partitions)
    return (
        f"The target's floor in the same run (`benchmarks/merge_floor.py`): the {rows:,} rows `merge_execute` wrote, "
        "read back out of the target into `COPY` files (not timed) and loaded with `COPY … FROM` into a copy of the "
        "target made before the merge, in Hive's dependency order, then rolled back. One writer, one transaction, "
        f"foreign keys checked: **{one:.2f} s ({partitions / one:,.0f} partitions/s)**, of which {big}. Two writers "
        "(both cores), each half of every table in its own transaction, foreign-key checks deferred to a commit that "
        f"never comes (less work than any merge must do): **{two:.2f} s ({partitions / two:,.0f} partitions/s)**."
    )


def _row(label: str, seconds: float, rows: int, rss: float, partitions: int) -> str:
    rate = partitions / seconds if seconds else 0.0
    print(f"{label}: {seconds:.2f} s, {rate:,.0f} partitions/s, {rows:,} rows, peak RSS {rss:.0f} MB", flush=True)
    return f"| {label} | {seconds:.2f} | {partitions:,} | {rate:,.0f} | {rows:,} | {rss:.0f} |"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()

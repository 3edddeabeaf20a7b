"""
Compaction of many small Parquet files: the console's rewrite program against the statement a user would write in
Spark, in the same run and on the same data.

    .venv/bin/python benchmarks/compact.py [--partitions 1000] [--files 50] [--rows 100] [--runs 3]

Writes ``--partitions`` × ``--files`` Parquet files (``--rows`` rows each) twice, as two identical partitioned tables
of Spark's Hive client (local[2], a Derby metastore in a temporary directory), then times:

* the baseline: ``INSERT OVERWRITE TABLE b_compacted PARTITION (p) SELECT … FROM b DISTRIBUTE BY p`` (one file per
  partition, nothing verified; into a twin table because Spark refuses to overwrite a table it reads from), twice:
  as it runs in a session that has listed ``b``'s files before (Spark caches a table's file listing), and after
  ``REFRESH TABLE b`` (the listing dropped, as it must be once new small files arrived: what a compaction follows);
* the rewrite program (``operations/spark/programs/rewrite.py``) on the plan the console would give it for ``ALTER
  TABLE a CONCATENATE``: every partition rewritten into one file in a new directory, its rows counted on both sides
  (the written output read back) before it is reported done; then the swap's directory moves (old directory to the
  trash, new one home), timed apart.

``--runs`` rounds of the three, their order rotating from round to round, the medians compared. The metastore
swap (one transaction) is not part of either. Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, write_section

sys.path.insert(0, str(REPO))

from catalog_admin.locations import LocalFileSystem  # noqa: E402
from operations.services.relisting import refuse_rewrite_drift  # noqa: E402
from operations.spark.programs import rewrite  # noqa: E402

COLUMNS = (("id", "bigint"), ("name", "string"), ("amount", "double"))


def write_table(root: Path, partitions: int, files: int, rows: int) -> int:
    """The Parquet files of one table; their total size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    size = 0
    for partition in range(partitions):
        folder = root / f"p={partition}"
        folder.mkdir(parents=True)
        for number in range(files):
            first = (partition * files + number) * rows
            table = pa.table({"id": pa.array(range(first, first + rows), pa.int64()),
                              "name": [f"name-{i % 997}" for i in range(first, first + rows)],
                              "amount": [i / 8 for i in range(first, first + rows)]})  # fmt: skip
            path = folder / f"part-{number:05d}.parquet"
            pq.write_table(table, path)
            size += path.stat().st_size
    return size


def plan_for(root: Path, target_bytes: int) -> dict:
    """The plan ``rewrite_plan`` gives the program for ``ALTER TABLE a CONCATENATE`` (files listed now)."""
    staging = f"file:{root}/_compacted-bench"
    units = []
    for folder in sorted(root.iterdir(), key=lambda p: p.name):
        if folder.name.startswith("_"):
            continue
        listed = LocalFileSystem().list_files(f"file:{folder}") or []
        units.append({"key": folder.name, "source": f"file:{folder}", "destination": f"{staging}/{folder.name}",
                      "source_format": "parquet", "target_format": "parquet",
                      "files": [{"source": f.location, "size": f.size} for f in listed]})  # fmt: skip
    return {"units": units, "columns": [list(c) for c in COLUMNS], "serde": {}, "target_file_bytes": target_bytes,
            "filesystems": {}, "completed": [], "staging": staging, "metastore": None}  # fmt: skip


def swap_moves(plan: dict) -> float:
    """The swap's renames (``planners/rewrite_swap``) for every unit, timed; then moved back for the next round."""
    filesystem = LocalFileSystem()
    trash = plan["staging"].rsplit("/", 1)[0] + "/.catalog-admin-trash/a/bench"
    started = time.perf_counter()
    for unit in plan["units"]:
        filesystem.rename(unit["source"], f"{trash}/{unit['key']}")
        filesystem.rename(unit["destination"], unit["source"])
    elapsed = time.perf_counter() - started
    for unit in plan["units"]:
        filesystem.rename(unit["source"], unit["destination"])
        filesystem.rename(f"{trash}/{unit['key']}", unit["source"])
    return elapsed


def timed(action) -> float:  # noqa: ANN001
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def session(tmp: Path):  # noqa: ANN201 - a SparkSession
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))  # the workers
    return (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(tmp / "warehouse"))
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={tmp}/metastore_db;create=true"
        )
        .config("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
        .config("spark.hadoop.hive.exec.max.dynamic.partitions", "100000")
        .config("spark.hadoop.hive.exec.max.dynamic.partitions.pernode", "100000")
        .enableHiveSupport()
        .getOrCreate()
    )


def create(spark, name: str, root: Path | None) -> None:  # noqa: ANN001
    location = f" LOCATION 'file:{root}'" if root else ""
    spark.sql(f"CREATE TABLE bench.{name} (id bigint, name string, amount double) PARTITIONED BY (p int) "
              f"STORED AS PARQUET{location}")  # fmt: skip
    if root:
        spark.sql(f"MSCK REPAIR TABLE bench.{name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="compact-bench-") as name:
        tmp = Path(name)
        size = write_table(tmp / "a", args.partitions, args.files, args.rows)
        shutil.copytree(tmp / "a", tmp / "b")
        spark = session(tmp)
        spark.sql("CREATE DATABASE bench")
        for table, root in (("a", tmp / "a"), ("b", tmp / "b"), ("b_compacted", None)):
            create(spark, table, root)
        total = spark.sql("SELECT count(*) FROM bench.b").collect()[0][0]  # also warms the JVM and the listing
        plan = plan_for(tmp / "a", 128 * 1024 * 1024)

        insert = (
            "INSERT OVERWRITE TABLE bench.b_compacted PARTITION (p) SELECT id, name, amount, p FROM bench.b "
            "DISTRIBUTE BY p"
        )
        baselines, refreshed, programs = [], [], []
        kinds = ("baseline", "refreshed", "program")
        for round_ in range(args.runs):
            for which in kinds[round_ % 3 :] + kinds[: round_ % 3]:
                if which == "baseline":
                    spark.sql("SELECT count(*) FROM bench.b").collect()  # the listing cached, as after any query
                    baselines.append(timed(lambda: spark.sql(insert)))
                    print(f"baseline INSERT OVERWRITE … DISTRIBUTE BY p: {baselines[-1]:.2f} s", flush=True)
                elif which == "refreshed":
                    spark.sql("REFRESH TABLE bench.b")
                    refreshed.append(timed(lambda: spark.sql(insert)))
                    print(f"baseline after REFRESH TABLE: {refreshed[-1]:.2f} s", flush=True)
                else:
                    shutil.rmtree(tmp / "a" / "_compacted-bench", ignore_errors=True)
                    started = time.perf_counter()
                    manifest = rewrite.run(spark, plan, lambda event: None)
                    programs.append(time.perf_counter() - started)
                    print(f"rewrite program: {programs[-1]:.2f} s", flush=True)
        baseline, program = statistics.median(baselines), statistics.median(programs)
        fresh = statistics.median(refreshed)

        relisting = statistics.median(timed(lambda: refuse_rewrite_drift(plan)) for _ in range(args.runs))
        moving = statistics.median(swap_moves(plan) for _ in range(args.runs))
        compacted = spark.sql("SELECT count(*) FROM bench.b_compacted").collect()[0][0]
        files = sum(u["files"] for u in manifest["units"].values())
        spark.stop()
    assert manifest["rows"] == compacted == total, (manifest["rows"], compacted, total)
    parts = args.partitions
    lines = [
        f"{parts:,} partitions × {args.files} Parquet files ({args.rows} rows each: {total:,} rows, {size / 2**20:.0f} "
        f"MB), Spark local[2], {args.runs} interleaved rounds in the same process, their order rotating, "
        f"medians compared (`benchmarks/compact.py --partitions {parts} --files {args.files} --rows {args.rows} --runs "
        f"{args.runs}`; load average {load_before:.1f} before the runs, {os.getloadavg()[0]:.1f} after). All write "
        "one file per partition; the program also counts every partition's rows on both sides (the input files' "
        "footers, the written output read back) before it reports it done, and lists the files itself (it must see "
        "what is there now). The baseline runs twice: with the table's file listing cached by the session (a query "
        "ran before it) and after `REFRESH TABLE` (listed afresh, as after new files arrived). The metastore swap is "
        "not timed.",
        "",
        "| compaction | seconds (median) | all runs, s | files written | ratio to the cached baseline | "
        "ratio to the refreshed baseline |",
        "|---|---|---|---|---|---|",
        f"| `INSERT OVERWRITE TABLE … PARTITION (p) SELECT … DISTRIBUTE BY p`, listing cached (no verification) | "
        f"{baseline:.2f} | {' / '.join(f'{b:.2f}' for b in baselines)} | {parts} | 1.00× | {baseline / fresh:.2f}× |",
        f"| the same after `REFRESH TABLE` (no verification) | {fresh:.2f} | "
        f"{' / '.join(f'{b:.2f}' for b in refreshed)} | {parts} | {fresh / baseline:.2f}× | 1.00× |",
        f"| rewrite program (`CONCATENATE`), rows verified | {program:.2f} | "
        f"{' / '.join(f'{p:.2f}' for p in programs)} | {files} | {program / baseline:.2f}× | {program / fresh:.2f}× |",
    ]
    cached = " / ".join(f"{p / b:.2f}×" for b, p in zip(baselines, programs, strict=True))
    afresh = " / ".join(f"{p / b:.2f}×" for b, p in zip(refreshed, programs, strict=True))
    lines += ["", f"Each round's ratio (program / baseline of the same round): {cached} cached, {afresh} refreshed."]
    lines += [
        "",
        "The swap's re-listing of every partition (issue 25: nothing appeared, one listing of the "
        f"{parts * args.files:,} files and the sorted comparison): {relisting * 1000:.1f} ms (median; "
        f"{relisting / program:.2%} of the program).",
        "",
        "The swap's directory moves (issue 25: each partition's old directory to the trash and its new one into its "
        f"place, {2 * parts:,} renames on the local filesystem, no link followed; their journal rows in the console's "
        f"database not included): {moving * 1000:.1f} ms (median; {moving / program:.2%} of the program).",
    ]
    print("\n".join(lines))
    write_section(REPO / "docs" / "benchmarks.md", "Compaction against INSERT OVERWRITE", "\n".join(lines))


if __name__ == "__main__":
    main()

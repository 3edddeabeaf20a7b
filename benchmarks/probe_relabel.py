"""
The rename's statistics re-labelling alone, on a database ``benchmarks/alter.py`` seeded (run it first), in the packed
state its seed leaves (``VACUUM FULL``, ``ANALYZE``, ``CHECKPOINT`` before each run) and rolled back: the console's form
against the one naming the unchanged key columns. Prints each run's seconds and ``EXPLAIN (ANALYZE, BUFFERS, WAL)``.

    .venv/bin/python benchmarks/probe_relabel.py [--database ca_bench31_alter] [--table events_renamed]
                                                 [--new-name events] [--rounds 2] [--perf]

``--perf`` records the backend with ``perf record -g`` into ``/tmp/perf-<database>-<form>.data``.
"""

from __future__ import annotations

import argparse
import subprocess
import time

import psycopg2

FORMS = {"console's": "", "key columns named": ', "CS_ID" = "CS_ID", "PART_ID" = "PART_ID"'}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="ca_bench31_alter")
    parser.add_argument("--db-name", default="bench", help="the Hive database of the table")
    parser.add_argument("--table", default="events_renamed", help="the table's name as the statistics carry it")
    parser.add_argument("--new-name", default="events", help="the name the statement writes")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--perf", action="store_true")
    args = parser.parse_args()
    for _round in range(args.rounds):
        for form, extra in FORMS.items():
            seconds, plan = relabel(args, extra, form)
            print(f"{args.database}, {form}: {seconds:.2f} s\n{plan}", flush=True)


def relabel(args: argparse.Namespace, extra: str, form: str) -> tuple[float, str]:
    connection = psycopg2.connect(host="127.0.0.1", user="postgres", dbname=args.database)
    connection.autocommit = True
    cursor = connection.cursor()
    for statement in ('VACUUM FULL "PART_COL_STATS"', 'ANALYZE "PART_COL_STATS"', "CHECKPOINT"):
        cursor.execute(statement)
    cursor.execute("SELECT count(*) FROM information_schema.columns WHERE column_name = 'CAT_NAME' "
                   "AND table_name = 'PART_COL_STATS'")  # fmt: skip
    labels = (["CAT_NAME"] if cursor.fetchone()[0] else []) + ["DB_NAME", "TABLE_NAME"]
    values = (["hive"] if len(labels) == 3 else []) + [args.db_name, args.table]
    where = " AND ".join(f'"{label}" = %s' for label in labels)
    statement = f'UPDATE "PART_COL_STATS" SET "DB_NAME" = %s, "TABLE_NAME" = %s{extra} WHERE {where}'
    perf = None
    if args.perf:
        cursor.execute("SELECT pg_backend_pid()")
        output = f"/tmp/perf-{args.database}-{form.split()[0].strip(chr(39))}.data"
        command = ["perf", "record", "-g", "-p", str(cursor.fetchone()[0]), "-o", output]
        perf = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        time.sleep(1)
    cursor.execute("BEGIN")
    started = time.perf_counter()
    cursor.execute("EXPLAIN (ANALYZE, BUFFERS, WAL) " + statement, (args.db_name, args.new_name, *values))
    seconds = time.perf_counter() - started
    plan = "\n".join(row[0] for row in cursor.fetchall())
    cursor.execute("ROLLBACK")
    if perf:
        perf.send_signal(2)
        perf.wait()
    connection.close()
    return seconds, plan


if __name__ == "__main__":
    main()

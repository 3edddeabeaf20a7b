"""
The Python end of the merge's pipe against ``psql``: ``COPY (SELECT …) TO STDOUT`` of 5,000,000 rows shaped like the
statistics rows, through psycopg2's ``copy_expert`` into a file and through ``psql`` into ``/dev/null``, with the
wall time and the client's CPU time of each. A scratch database (``ca_probe_copy_out``) is created and dropped.

    .venv/bin/python benchmarks/probe_copy_out.py [--rows 5000000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import psycopg2

DATABASE = "ca_probe_copy_out"
PSQL = ["psql", "-X", "-q", "-h", "127.0.0.1", "-U", "postgres"]
ROWS = (
    "SELECT g AS cs_id, 'hive'::text AS cat, 'bench_merged'::text AS db, 'events'::text AS tbl, "
    "'dt=2024-01-01/hr=' || (g %% 24) AS part, 'col_' || (g %% 5) AS col, 'bigint'::text AS typ, g / 5 AS part_id, "
    "g * 3 AS lo, g * 7 AS hi, 0 AS nulls, g %% 1000 AS ndv, 1732000000 AS analyzed FROM generate_series(1, %s) g"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    subprocess.run([*PSQL, "-d", "postgres", "-c", f"DROP DATABASE IF EXISTS {DATABASE}", "-c",
                    f"CREATE DATABASE {DATABASE}"], check=True)  # fmt: skip
    try:
        connection = psycopg2.connect(host="127.0.0.1", user="postgres", dbname=DATABASE)
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE t AS {ROWS}", (args.rows,))
        connection.commit()
        for _round in range(args.rounds):
            print(f"psycopg2 copy_expert: {_through_psycopg2(connection)}", flush=True)
            print(f"psql: {_through_psql()}", flush=True)
        connection.close()
    finally:
        subprocess.run([*PSQL, "-d", "postgres", "-c", f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"], check=True)


def _through_psycopg2(connection: psycopg2.extensions.connection) -> str:
    started, before = time.perf_counter(), os.times()
    with open(os.devnull, "wb") as sink, connection.cursor() as cursor:
        cursor.copy_expert("COPY (SELECT * FROM t) TO STDOUT", sink)
    after = os.times()
    cpu = after.user - before.user + after.system - before.system
    return f"{time.perf_counter() - started:.2f} s wall, {cpu:.2f} s of this process's CPU"


def _through_psql() -> str:
    started, before = time.perf_counter(), os.times()
    command = [*PSQL, "-d", DATABASE, "-c", "COPY (SELECT * FROM t) TO STDOUT"]
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    after = os.times()
    cpu = after.children_user - before.children_user + after.children_system - before.children_system
    return f"{time.perf_counter() - started:.2f} s wall, {cpu:.2f} s of psql's CPU"


if __name__ == "__main__":
    main()

"""
The least time the target's side of a merge can take on this machine, whatever reads the source: exactly the rows a
merge wrote, already shifted and renamed, loaded with ``COPY … FROM`` into a copy of the target as it was before that
merge (Hive's tables with their indexes), so that a merge's rate can be set against what the target can absorb.

- one writer, in Hive's dependency order, one transaction, the foreign keys checked as Hive's schema declares them
  (what the merge's publishing transaction must do for DBS, TBLS and every row that references them);
- two writers (both cores), each loading half of every table's rows in its own transaction with the foreign-key checks
  deferred to a commit that never comes (``SET CONSTRAINTS ALL DEFERRED``, then rolled back): less work than any
  merge must do, so a lower bound for any parallel writer.

The rows are read out of the merged target into files first (not timed).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg2

COPY_BUFFER = 1 << 20


@dataclass(frozen=True)
class Dump:
    """One Hive table's merged rows as ``COPY`` text, in two halves (one per writer of ``two_writers``)."""

    table: str
    halves: tuple[Path, Path]
    rows: int

    def remove(self) -> None:
        for half in self.halves:
            half.unlink(missing_ok=True)


def snapshot(target: str, copy: str) -> None:
    """``copy``: a new database made from ``target`` as it is now (nobody may be connected to ``target``)."""
    _as_admin(f"DROP DATABASE IF EXISTS {copy} WITH (FORCE)", f"CREATE DATABASE {copy} TEMPLATE {target}")


def drop(copy: str) -> None:
    _as_admin(f"DROP DATABASE IF EXISTS {copy} WITH (FORCE)")


def _as_admin(*statements: str) -> None:
    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
    finally:
        admin.close()


def dump_merged(merge: Any, folder: Path) -> list[Dump]:
    """The rows ``merge`` (a ``MergeImport``) wrote into its target, per carried table in dependency order: what its
    revert would delete (``imported_rows``)."""
    from django.db import connections

    from operations.merge.copy_plan import COPY_TABLES, PUBLISH_TABLES
    from operations.merge.reads import MetastoreReader
    from operations.merge.revert import imported_rows

    folder.mkdir(parents=True, exist_ok=True)
    tgt = MetastoreReader(merge.target)
    dumps = []
    with connections[merge.target].cursor() as cursor:
        for name in (*COPY_TABLES, *PUBLISH_TABLES):
            if not tgt.has_table(name):
                continue
            whole = folder / f"{name}.copy"
            with whole.open("w") as out:
                merged = f'SELECT * FROM "{name}" WHERE {imported_rows(merge, name, tgt)}'
                cursor.copy_expert(f"COPY ({merged}) TO STDOUT", out)
            halves = (folder / f"{name}.1.copy", folder / f"{name}.2.copy")
            dump = Dump(name, halves, _split(whole, halves))
            if dump.rows:
                dumps.append(dump)
            else:
                dump.remove()
    return dumps


def _split(whole: Path, halves: tuple[Path, Path]) -> int:
    """``whole``'s lines, the first half into ``halves[0]`` and the rest into ``halves[1]`` (``whole`` removed): the
    number of lines (a row of ``COPY`` text is one line: newlines in values are escaped)."""
    with whole.open() as rows:
        count = sum(1 for _ in rows)
    with whole.open() as rows, halves[0].open("w") as first, halves[1].open("w") as second:
        for number, row in enumerate(rows):
            (first if number < count // 2 else second).write(row)
    whole.unlink()
    return count


def one_writer(database: str, dumps: list[Dump]) -> tuple[float, dict[str, float]]:
    """Every dump loaded in order on one connection, in one transaction, rolled back: seconds, and per table."""
    per_table: dict[str, float] = {}
    connection = psycopg2.connect(host="127.0.0.1", user="postgres", dbname=database)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for dump in dumps:
            began = time.perf_counter()
            for half in dump.halves:
                _load(cursor, dump.table, half)
            per_table[dump.table] = time.perf_counter() - began
    seconds = time.perf_counter() - started
    connection.rollback()
    connection.close()
    return seconds, per_table


def two_writers(database: str, dumps: list[Dump]) -> float:
    """Each half of every dump loaded by its own connection, concurrently, foreign keys deferred, both rolled back:
    seconds until both were done."""
    connections = [psycopg2.connect(host="127.0.0.1", user="postgres", dbname=database) for _ in range(2)]
    for connection in connections:
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    errors: list[BaseException] = []

    def write(connection: Any, half: int) -> None:
        try:
            with connection.cursor() as cursor:
                for dump in dumps:
                    _load(cursor, dump.table, dump.halves[half])
        except BaseException as exc:  # reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(c, i)) for i, c in enumerate(connections)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    for connection in connections:
        connection.rollback()
        connection.close()
    if errors:
        raise errors[0]
    return seconds


def _load(cursor: Any, name: str, path: Path) -> None:
    with path.open() as rows:
        cursor.copy_expert(f'COPY "{name}" FROM STDIN', rows, size=COPY_BUFFER)

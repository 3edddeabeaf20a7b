"""
The merge program: copy a source metastore's rows into a target, ids shifted by the reserved offsets, names and
locations rewritten, in the two phases of ``operations.merge.copy_plan`` (its ``build_plan`` writes ``plan``).

``copy`` units (one key range of one table, not in ``plan["completed"]``) are each deleted from the target's reserved
range first (a crashed run may have committed part of one), written and committed, then reported with
``{"unit_done": key}``. ``publish`` writes every remaining table in one transaction on one connection.

On Spark each unit is read through JDBC in parallel key ranges; ids are shifted with column expressions (view texts
rewritten by ``catalog_admin.hive.view_text`` in a UDF, as locations are); the executors write their partitions straight
to the target (``mapInArrow``: the DataFrame API only, so Spark Connect runs it too; PostgreSQL: ``COPY … FROM STDIN``
through psycopg2's ``copy_expert``, the fast path; MySQL/MariaDB: batched ``INSERT``). The publishing transaction is
one connection's:
PostgreSQL to PostgreSQL it pipes ``COPY (SELECT …) TO STDOUT`` into ``COPY … FROM STDIN`` (ids shifted, names
renamed and locations rewritten in the ``SELECT``, ``operations.merge.pipe_sql``; no row through Python, on Spark
too), otherwise it streams Spark's rows to the driver (``toLocalIterator``: one partition at a time). ``spark`` None
runs the same plan in this process, piping every unit the same way PostgreSQL to PostgreSQL and otherwise reading each
range with ``fetchmany``: memory is bounded by a batch either way.
"""

from __future__ import annotations

import contextvars
import io
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from catalog_admin.hive.locations import rewrite_prefix
from catalog_admin.hive.view_text import rewrite_database_param, rewrite_view_text
from operations.spark.programs.frames import parallelism

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = (
    "FETCH_ROWS",
    "connect",
    "copy",
    "fault_point",
    "publish",
    "run",
    "target_rows",
    "unit_key",
    "with_passwords",
)

FETCH_ROWS = 5_000
# One table's copy units this process copies at a time (each a source and a target connection): the source's SELECT
# and the target's COPY of one unit leave a core idle on a small host.
UNITS_AT_ONCE = 2
# Bytes a pipe's COPY moves per call (psycopg2's default 8 KiB): each call takes the GIL, which the merge's events,
# built in another thread meanwhile, hold between switches.
COPY_CHUNK = 1 << 20
# The planner settings a step may ask of its source session (``source_settings``), with the values allowed.
SOURCE_SETTINGS = {"enable_nestloop": ("on", "off")}
# The JDBC driver class of each vendor, named so Spark finds it in jars added with spark.jars (not on the system
# class path of a spark-submit driver); PostgreSQL's and MariaDB's Connector/J jars.
JDBC_DRIVERS = {"postgresql": "org.postgresql.Driver", "mysql": "org.mariadb.jdbc.Driver"}


def fault_point(name: str) -> None:
    """A named step; tests replace it to inject a failure. As ``operations.services.alter.fault_point`` (which this
    Django-free program cannot import on a cluster): a process whose ``CATALOG_ADMIN_KILL_AT`` names the point kills
    itself with SIGKILL there; nothing sets that variable in production."""
    if os.environ.get("CATALOG_ADMIN_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def unit_key(step: dict, low: int) -> str:
    return f"{step['table']}:{low}"


def run(spark: SparkSession | None, plan: dict, report: Callable[[dict], None], *, publish_on: Any = None) -> dict:
    """Copy every unit not yet completed, then publish (not when ``plan["phases"]`` names ``copy`` only: the driver
    of a merge job, whose worker publishes); the manifest counts rows per table. ``publish_on``: a connection whose
    open transaction the publishing rows go into, left for its owner to add to (the notification events) and commit;
    None: the program's own connection, committed here. Passwords come from the plan in memory or, in a driver, from
    its environment (:func:`with_passwords`)."""
    started = time.monotonic()
    plan = with_passwords(plan, os.environ)
    rows = copy(spark, plan, report)
    if "publish" in plan.get("phases", ("copy", "publish")):
        report({"phase": "publish"})  # the point of no return: a cancel is taken only before it
        rows.update(publish(spark, plan, report, into=publish_on))
    return {"program": "merge", "rows": rows, "seconds": round(time.monotonic() - started, 3)}


def copy(spark: SparkSession | None, plan: dict, report: Callable[[dict], None]) -> dict[str, int]:
    """Every copy unit not in ``plan["completed"]``, table by table in the plan's (foreign-key) order, each committed,
    then reported ``{"unit_done": key}``; rows written per table."""
    completed = set(plan.get("completed", ()))
    steps = [s for s in plan["steps"] if s["phase"] == "copy"]
    total = sum(len(s["ranges"]) for s in steps) + 1
    done = sum(1 for s in steps for r in s["ranges"] if unit_key(s, r[0]) in completed)
    report({"message": f"Copying {total - 1 - done} of {total - 1} batches", "partitions_done": done,
            "partitions_total": total})  # fmt: skip
    rows: dict[str, int] = {}
    for step in steps:
        pending = [(low, high) for low, high in step["ranges"] if unit_key(step, low) not in completed]
        for (low, _high), written in _copied(spark, plan, step, pending):
            rows[step["table"]] = rows.get(step["table"], 0) + written
            fault_point("merge.unit_copied")
            done += 1
            report({"unit_done": unit_key(step, low)})
            report({"partitions_done": done, "partitions_total": total, "table": step["table"],
                    "message": f"{step['table']}: {rows[step['table']]} rows"})  # fmt: skip
    return rows


def _copied(
    spark: SparkSession | None, plan: dict, step: dict, ranges: list[tuple[int, int]]
) -> Iterator[tuple[tuple[int, int], int]]:
    """Each of one table's ``ranges`` copied (:func:`_copy_unit`) with its rows written, as they finish: on Spark one
    after another (each is a distributed job already), in this process :data:`UNITS_AT_ONCE` at a time, each on
    connections of its own and in this thread's context (the write guard's permission). When the caller stops taking
    them (a cancel), the units running finish and no other starts."""
    if spark is not None or len(ranges) < 2:
        for low, high in ranges:
            yield (low, high), _copy_unit(spark, plan, step, low, high)
        return
    waiting = iter(ranges)
    with ThreadPoolExecutor(UNITS_AT_ONCE, thread_name_prefix="merge-unit") as pool:
        running: dict[Future[int], tuple[int, int]] = {}

        def start_next() -> None:
            unit = next(waiting, None)
            if unit is not None:
                task = contextvars.copy_context().run
                running[pool.submit(task, _copy_unit, spark, plan, step, *unit)] = unit

        for _ in range(UNITS_AT_ONCE):
            start_next()
        try:
            while running:
                finished = next(iter(wait(running, return_when=FIRST_COMPLETED).done))
                unit = running.pop(finished)
                yield unit, finished.result()
                start_next()
        finally:
            for task in running:
                task.cancel()  # one not started yet never starts; the executor's exit waits for those running


def publish(spark: SparkSession | None, plan: dict, report: Callable[[dict], None], *, into: Any = None) -> dict:
    """The publishing tables in one transaction (``into``: the caller's connection and open transaction, which the
    caller commits; None: the program's own, committed here); rows written per table."""
    plan = with_passwords(plan, os.environ)
    steps = [s for s in plan["steps"] if s["phase"] == "publish"]
    rows = _publish(spark, plan, steps, report, into)
    total = sum(len(s["ranges"]) for s in plan["steps"] if s["phase"] == "copy") + 1
    report({"partitions_done": total, "partitions_total": total, "message": "Published"})
    return rows


def with_passwords(plan: dict, environ: Any) -> dict:
    """``plan`` with each side's password (``side["password_env"]`` looked up in ``environ``) in memory: a side
    that has one keeps it. The plan as written (job.json, the job row) never holds one."""
    sides = {
        name: {**side, "password": side.get("password") or environ.get(side.get("password_env", ""), "")}
        for name in ("source", "target")
        if isinstance(side := plan.get(name), dict)
    }
    return {**plan, **sides}


# Units ---------------------------------------------------------------------------------------------------------


def _copy_unit(spark: SparkSession | None, plan: dict, step: dict, low: int, high: int) -> int:
    """One committed unit: the target's rows of the unit's (reserved) range deleted, then the source's written."""
    target = connect(plan["target"])
    try:
        with target.cursor() as cursor:
            offset = step["scope_offset"]
            cursor.execute(
                f"DELETE FROM {step['insert_table']} WHERE {step['target_scope']} BETWEEN %s AND %s",
                [low + offset, high + offset],
            )
        target.commit()
        if spark is None:
            written = _in_process(plan, step, low, high, target)
            target.commit()
            return written
    finally:
        target.close()
    side = {key: value for key, value in plan["target"].items() if key != "guard"}  # the console's, not shipped
    counts = _frame(spark, plan, step, low, high).mapInArrow(_partition_writer(side, step), "written long")
    return sum(row["written"] for row in counts.collect())


def _publish(
    spark: SparkSession | None, plan: dict, steps: list[dict], report: Callable[[dict], None], into: Any = None
) -> dict:
    """Every publishing table in one transaction: all visible at its commit, nothing before (``into``: the caller's
    connection and transaction, which the caller commits)."""
    rows: dict[str, int] = {}
    guard = plan["target"].get("guard")
    target = (_Guarded(into, guard) if guard else into) if into is not None else connect(plan["target"])
    try:
        for step in steps:
            if step.get("rows"):  # a few rows the plan carries itself (NEXT_WRITE_ID)
                written = _write(plan["target"], step, (tuple(r) for r in step["rows"]), target)
                rows[step["table"]] = rows.get(step["table"], 0) + written
            for low, high in step["ranges"]:
                if spark is None or step.get("pipe_select"):  # one connection anyway: the pipe is the fast path
                    written = _in_process(plan, step, low, high, target)
                else:
                    values = (tuple(r) for r in _frame(spark, plan, step, low, high).toLocalIterator())
                    written = _write(plan["target"], step, values, target)
                rows[step["table"]] = rows.get(step["table"], 0) + written
            report({"message": f"Publishing: {step['table']} {rows.get(step['table'], 0)} rows"})
        fault_point("merge.before_publish_commit")
        if into is None:
            target.commit()
    except BaseException:
        if into is None:
            target.rollback()
        raise
    finally:
        if into is None:
            target.close()
    return rows


# Reading and transforming in this process ----------------------------------------------------------------------


def _in_process(plan: dict, step: dict, low: int, high: int, target: Any) -> int:
    """One key range written on ``target`` (not committed): piped from ``COPY … TO`` to ``COPY … FROM`` when the plan
    has a SQL form of the step, else read, transformed and written in batches."""
    if step.get("pipe_select"):
        return _pipe(plan, step, low, high, target)
    return _write(plan["target"], step, _transformed(plan, step, _read(plan, step, low, high)), target)


def _pipe(plan: dict, step: dict, low: int, high: int, target: Any) -> int:
    """PostgreSQL to PostgreSQL: the source's ``COPY (SELECT …) TO STDOUT`` streamed through an OS pipe into the
    target's ``COPY … FROM STDIN`` (a thread feeds the pipe): memory is the pipe's buffer, whatever the size."""
    import threading

    source = connect(plan["source"])
    read_end, write_end = os.pipe()
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            with os.fdopen(write_end, "wb") as sink, source.cursor() as cursor:
                for statement in _source_settings_sql(step):
                    cursor.execute(statement)
                query = cursor.mogrify(step["pipe_select"], {"low": low, "high": high}).decode()
                cursor.copy_expert(f"COPY ({query}) TO STDOUT", sink, COPY_CHUNK)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(exc)

    names = ", ".join(_quote(plan["target"], c[0]) for c in step["columns"])
    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    try:
        with os.fdopen(read_end, "rb") as stream, target.cursor() as cursor:
            cursor.copy_expert(f"COPY {step['insert_table']} ({names}) FROM STDIN", stream, COPY_CHUNK)
            written = cursor.rowcount
    finally:
        producer.join()
        source.close()
    if failure:
        raise failure[0]
    return written


def _read(plan: dict, step: dict, low: int, high: int) -> Iterator[dict]:
    """The source's rows of one key range, fetched ``FETCH_ROWS`` at a time."""
    source = connect(plan["source"])
    try:
        with source.cursor() as setting:
            for statement in _source_settings_sql(step):
                setting.execute(statement)
        with _streaming_cursor(plan["source"], source) as cursor:
            cursor.execute(step["select"], {"low": low, "high": high})
            batch = cursor.fetchmany(FETCH_ROWS)
            names = [d[0].upper() for d in cursor.description]
            while batch:
                for row in batch:
                    yield dict(zip(names, row, strict=True))
                batch = cursor.fetchmany(FETCH_ROWS)
    finally:
        source.close()


def target_rows(plan: dict, step: dict, rows: Iterable[dict]) -> Iterator[dict]:
    """``rows`` of the source (by source column, upper case) as the step writes them into the target, by target
    column (upper case): the rows a merge's notification events are built from before they are published."""
    names = [column[0].upper() for column in step["columns"]]
    for values in _transformed(plan, step, rows):
        yield dict(zip(names, values, strict=True))


def _transformed(plan: dict, step: dict, rows: Iterable[dict]) -> Iterator[tuple]:
    convert = [_converter(plan, kind, source, value) for _, kind, source, value in step["columns"]]
    for row in rows:
        yield tuple(f(row) for f in convert)


def _converter(plan: dict, kind: str, source: str | None, value: Any) -> Callable[[dict], Any]:
    key, renames = (source or "").upper(), plan["renames"]
    if kind == "shift":
        return lambda row: None if row[key] is None else row[key] + value
    if kind == "const":
        return lambda row: value
    if kind == "rename":
        return lambda row: renames.get((row[key] or "").lower(), row[key])
    if kind == "location":
        rewrite = location_rewriter(plan["location_rules"])
        return lambda row: rewrite(row[key])
    if kind == "view_text":
        return lambda row: rewrite_view_text(row[key], renames)
    if kind == "view_param":
        param = str(value).upper()
        return lambda row: rewrite_database_param(row[param], row[key], renames)
    if kind == "boolean":
        return lambda row: _boolean(row[key])
    return lambda row: row[key]


def _boolean(value: Any) -> bool | None:
    """A boolean from PostgreSQL's ``boolean`` or MySQL's ``BIT(1)`` (bytes) or ``TINYINT``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, bytes | bytearray):
        return any(value)
    return bool(value)


def location_rewriter(rules: list[list[str]]) -> Callable[[str | None], str | None]:
    """The first rule (longest prefix first) that matches rewrites; a location no rule matches stays as it is."""
    ordered = sorted(rules, key=lambda rule: -len(rule[0]))

    def rewrite(location: str | None) -> str | None:
        if not location:
            return location
        return next(
            (new for old, into in ordered if (new := rewrite_prefix(location, old, into)) is not None), location
        )

    return rewrite


# Spark ---------------------------------------------------------------------------------------------------------


def _frame(spark: SparkSession, plan: dict, step: dict, low: int, high: int) -> Any:
    """The unit's rows read through JDBC in parallel key ranges, with the target's columns as expressions."""
    from pyspark.sql import functions as F  # noqa: N812

    source = plan["source"]
    query = step["select"].replace("%(low)s", str(int(low))).replace("%(high)s", str(int(high)))
    parallel = max(1, parallelism(spark) * 2)
    frame = (
        spark.read.format("jdbc")
        .option("url", source["jdbc"])
        .option("driver", JDBC_DRIVERS[source["vendor"]])
        .option("dbtable", f"({query}) merge_unit")
        .option("partitionColumn", step["scope"])
        .option("lowerBound", str(low))
        .option("upperBound", str(high + 1))
        .option("numPartitions", str(min(parallel, high - low + 1)))
        .option("fetchsize", str(FETCH_ROWS))
    )
    password = source.get("password")
    if password:
        frame = frame.option("password", password)
    if settings := _source_settings_sql(step):
        frame = frame.option("sessionInitStatement", "; ".join(settings))
    frame = frame.load()
    spelled = {c.upper(): c for c in frame.columns}
    rewrite = F.udf(location_rewriter(plan["location_rules"]), "string", useArrow=False)  # a plain row UDF
    renames = plan["renames"]
    view_text = F.udf(lambda text: rewrite_view_text(text, renames), "string", useArrow=False)
    view_param = F.udf(lambda key, text: rewrite_database_param(key, text, renames), "string", useArrow=False)
    expressions = []
    for name, kind, column, value in step["columns"]:
        col = F.col(f"`{spelled[column.upper()]}`") if column else None
        if kind == "shift":
            expression = col + F.lit(value)
        elif kind == "const":
            expression = F.lit(value)
        elif kind == "rename":
            expression = col
            for old, new in plan["renames"].items():
                expression = F.when(F.lower(col) == old, F.lit(new)).otherwise(expression)
        elif kind == "location":
            expression = rewrite(col)
        elif kind == "view_text":
            expression = view_text(col)
        elif kind == "view_param":
            expression = view_param(F.col(f"`{spelled[str(value).upper()]}`"), col)
        elif kind == "boolean":
            expression = col.cast("boolean")
        else:
            expression = col
        expressions.append(expression.alias(name))
    return frame.select(*expressions)


def _partition_writer(side: dict, step: dict) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function writing a partition's rows (DataFrame API only: Spark Connect runs it too)."""

    def write(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        rows = (tuple(row.values()) for batch in batches for row in batch.to_pylist())
        yield pa.RecordBatch.from_pylist([{"written": _write_partition(side, step, rows)}])

    return write


def _write_partition(side: dict, step: dict, rows: Iterable[Any]) -> int:
    """On an executor: one partition's rows written and committed on a connection of its own."""
    target = connect(side)
    try:
        written = _write(side, step, (tuple(r) for r in rows), target)
        target.commit()
        return written
    finally:
        target.close()


# Writing ---------------------------------------------------------------------------------------------------------


def _write(side: dict, step: dict, rows: Iterable[tuple], connection: Any) -> int:
    """``rows`` inserted in batches on ``connection`` (not committed): ``COPY`` on PostgreSQL, else ``INSERT``."""
    names = ", ".join(_quote(side, c[0]) for c in step["columns"])
    written = 0
    with connection.cursor() as cursor:
        for batch in _batches(rows, FETCH_ROWS):
            if side["vendor"] == "postgresql":
                cursor.copy_expert(f"COPY {step['insert_table']} ({names}) FROM STDIN", _copy_text(batch))
            else:
                marks = ", ".join(["%s"] * len(step["columns"]))
                cursor.executemany(f"INSERT INTO {step['insert_table']} ({names}) VALUES ({marks})", batch)
            written += len(batch)
    return written


def _batches(rows: Iterable[tuple], size: int) -> Iterator[list[tuple]]:
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _copy_text(batch: list[tuple]) -> io.StringIO:
    """Rows in ``COPY``'s text format (tab-separated, ``\\N`` for NULL, backslash escapes)."""
    lines = ("\t".join(_copy_value(v) for v in row) for row in batch)
    return io.StringIO("\n".join(lines) + "\n")


def _copy_value(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\\\x" + bytes(value).hex()
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _quote(side: dict, name: str) -> str:
    return f"`{name}`" if side["vendor"] == "mysql" else f'"{name}"'


def _source_settings_sql(step: dict) -> list[str]:
    """The ``SET`` statements of the step's ``source_settings`` (planner settings for the session reading it), each
    one this program knows; anything else in the plan is refused."""
    statements = []
    for name, value in step.get("source_settings", {}).items():
        if value not in SOURCE_SETTINGS.get(name, ()):
            raise ValueError(f"The plan asks for source setting {name}={value!r}, which the merge program does not set")
        statements.append(f"SET {name} = {value}")
    return statements


def _streaming_cursor(side: dict, connection: Any) -> Any:
    """A server-side cursor: rows arrive as fetched, not all at once. On PostgreSQL the planner is told every row
    will be read (``cursor_tuple_fraction`` 1): a cursor's default 0.1 favours fast-start plans, which run the scope's
    ``IN (subquery)`` once per row (quadratic: 20,000 partitions took 50 s instead of 1 s)."""
    if side["vendor"] == "postgresql":
        with connection.cursor() as setting:
            setting.execute("SET cursor_tuple_fraction = 1.0")
        return connection.cursor(name="merge_read")
    import pymysql.cursors

    return connection.cursor(pymysql.cursors.SSCursor)


def connect(side: dict) -> Any:
    """A DB-API connection (autocommit off) to a plan's ``source`` or ``target``; with the side's ``guard`` (a
    function of each statement, given in memory by the console's worker: its metastore write guard) every statement
    passes it first."""
    connection = _connect(side)
    return _Guarded(connection, side["guard"]) if side.get("guard") else connection


class _Guarded:
    """A connection whose cursors pass every statement to ``guard`` before running it."""

    def __init__(self, connection: Any, guard: Callable[[str], None]) -> None:
        self._connection, self._guard = connection, guard

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        return _GuardedCursor(self._connection.cursor(*args, **kwargs), self._guard)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


class _GuardedCursor:
    def __init__(self, cursor: Any, guard: Callable[[str], None]) -> None:
        self._cursor, self._guard = cursor, guard

    def execute(self, sql: str, *args: Any) -> Any:
        self._guard(sql)
        return self._cursor.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self._guard(sql)
        return self._cursor.executemany(sql, *args)

    def copy_expert(self, sql: str, *args: Any) -> Any:
        self._guard(sql)
        return self._cursor.copy_expert(sql, *args)

    def __enter__(self) -> _GuardedCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self._cursor.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def _connect(side: dict) -> Any:
    params, password = side["dbapi"], side.get("password") or ""
    if side["vendor"] == "postgresql":
        import psycopg2

        return psycopg2.connect(password=password or None, client_encoding="UTF8", **params)  # both pipe ends alike
    import pymysql

    return pymysql.connect(
        host=params["host"], port=params["port"], user=params["user"], password=password,
        database=params["dbname"], charset="utf8mb4", autocommit=False,
    )  # fmt: skip

"""The benchmark table ``bench.events``: many partitions with parameters and column statistics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE, accurate_flags
from catalog_admin.models import (
    Partition,
    PartitionColumnStatistics,
    PartitionKeyValue,
    PartitionParam,
    SerDe,
    StorageDescriptor,
    Table,
    TableParam,
)
from catalog_admin.seeding.bulk import _pick, insert_select, literal, sql_row
from catalog_admin.seeding.content import (
    BENCH_COLUMNS,
    BENCH_FIRST_DAY,
    FORMATS,
    HOURS_BY_NAME,
    PARTITION_SPACES,
    DatabaseSpec,
    TableSpec,
)
from catalog_admin.seeding.context import BENCH_DATABASE, BENCH_TABLE, Context, IdPlan, LocalId
from catalog_admin.seeding.databases import (
    _sd_row,
    add_params,
    ensure_database,
    existing_tables,
    free_name,
    plan_columns,
    plan_sd,
    uri,
)
from catalog_admin.seeding.demo import plan_partition_keys, plan_partition_row, table_params, table_row

__all__ = ("BigTable", "plan_big_table")


def _bench_partition(index: int) -> tuple[str, int]:
    """The (dt, hour) values of the ``index``-th benchmark partition; partition names ascend with the index."""
    return (BENCH_FIRST_DAY + timedelta(days=index // 24)).isoformat(), HOURS_BY_NAME[index % 24]


@dataclass
class BigTable:
    """
    The partitions of the benchmark table: planned row by row, or inserted set-based on PostgreSQL.

    Rows are generated in the order of each table's most expensive index (partition names
    ascending; column statistics by column then partition while their index is on names, by
    partition in Hive 4.0.0, where it is on PART_ID), so that PostgreSQL appends to the index
    instead of searching it for every row.
    """

    spec: TableSpec
    tbl_id: LocalId
    cd_id: LocalId
    root: Path
    count: int
    stats_columns: tuple[tuple[str, str], ...]  # sorted by name
    column_major: bool
    refs: dict[str, LocalId] = field(default_factory=dict)

    def reserve(self, plan: IdPlan) -> None:
        for space in PARTITION_SPACES:
            self.refs[space] = plan.take(space, self.count)
        self.refs["MPartitionColumnStatistics"] = plan.take("MPartitionColumnStatistics", self.stats_count)

    @property
    def stats_count(self) -> int:
        return self.count * len(self.stats_columns)

    def stats_offset(self, partition: int, column: int) -> int:
        """Position of one statistics row in the generated order (its CS_ID offset)."""
        if self.column_major:
            return column * self.count + partition
        return partition * len(self.stats_columns) + column

    def plan_rows(self, ctx: Context) -> None:
        fmt = FORMATS[self.spec.fmt]
        for i in range(self.count):
            day, hour = _bench_partition(i)
            part, sd, serde = (self.refs[s] + i for s in PARTITION_SPACES)
            ctx.add(SerDe, id=serde, name=None, slib=fmt.serde_lib)
            location = uri(self.root / f"dt={day}" / f"hour={hour}")
            ctx.add(StorageDescriptor, **_sd_row(sd, fmt, location, serde, self.cd_id, -1))
            plan_partition_row(ctx, part, self.tbl_id, sd, (day, hour))
            add_params(ctx, PartitionParam, "partition", part, _bench_partition_params(ctx, i, self.stats_columns))
            self._plan_stats(ctx, part, f"dt={day}/hour={hour}", i)

    def _plan_stats(self, ctx: Context, part: LocalId, name: str, i: int) -> None:
        first = self.refs["MPartitionColumnStatistics"]
        for c, (column, type_name) in enumerate(self.stats_columns):
            numeric = type_name in ("int", "bigint")
            ctx.add(
                PartitionColumnStatistics,
                id=first + self.stats_offset(i, c),
                partition=part,
                partition_name=name,
                catalog_name=ctx.catalog,
                db_name=self.spec.database,
                table_name=self.spec.name,
                column_name=column,
                column_type=type_name,
                num_nulls=i % 7,
                num_distincts=100 + i % 900,
                last_analyzed=ctx.now,
                long_low_value=i % 100 if numeric else None,
                long_high_value=100_000 + i if numeric else None,
                double_low_value=0.0 if type_name == "double" else None,
                double_high_value=1000.0 + i % 1000 if type_name == "double" else None,
                avg_col_len=12.5 if type_name == "string" else None,
                max_col_len=40 if type_name == "string" else None,
            )

    def bulk_insert(self, ctx: Context) -> Counter[str]:
        return _bulk_big_table(ctx, self)


def _bench_partition_params(ctx: Context, index: int, stats_columns: Seq[tuple[str, str]]) -> dict[str, str]:
    """Basic statistics of one partition, and Hive's accuracy flag where it has column statistics."""
    rows = 1000 + index % 5000
    params = {
        "numFiles": "1",
        "numRows": str(rows),
        "totalSize": str(rows * 64),
        "transient_lastDdlTime": str(ctx.now),
    }
    if stats_columns:
        params[COLUMN_STATS_ACCURATE] = accurate_flags(name for name, _type in stats_columns)
    return params


def plan_big_table(ctx: Context, partitions: int, col_stats: int) -> None:
    """Table ``bench.events`` (or the next free ``events_<n>``) with ``partitions`` partitions and their stats."""
    db_id = ensure_database(ctx, DatabaseSpec(BENCH_DATABASE, "Benchmark tables", "bench"))
    name = free_name(existing_tables(ctx, db_id), BENCH_TABLE)
    extra = tuple((f"attr_{n}", "string") for n in range(len(BENCH_COLUMNS) + 1, col_stats + 1))
    columns = BENCH_COLUMNS + extra
    spec = TableSpec(BENCH_DATABASE, name, columns, "parquet", owner="bench")
    root = ctx.db_root(BENCH_DATABASE) / name
    cd_id = plan_columns(ctx, columns)
    tbl_id = ctx.plan.take("MTable")
    ctx.add(Table, **table_row(ctx, spec, tbl_id, db_id, plan_sd(ctx, spec, cd_id, uri(root))))
    plan_partition_keys(ctx, tbl_id)
    add_params(ctx, TableParam, "table", tbl_id, table_params(ctx, spec, (0, 0, 0), column_stats=False))
    stats_columns = tuple(sorted(columns[:col_stats]))
    by_name = ctx.schema.has(PartitionColumnStatistics, "partition_name")  # the stats index is on names, not PART_ID
    big = BigTable(spec, tbl_id, cd_id, root, partitions, stats_columns, column_major=by_name)
    big.reserve(ctx.plan)
    if ctx.connection.vendor == "postgresql":
        ctx.bulk.append(big.bulk_insert)
    else:
        big.plan_rows(ctx)


def _bench_sql(g: str) -> tuple[str, str, str]:
    """SQL for ``_bench_partition(g)``: dt and hour values and the partition name (needs DateStyle ISO)."""
    day = f"(DATE '{BENCH_FIRST_DAY.isoformat()}' + ({g}) / 24)::text"  # to_char() is three times slower
    hour = _pick([str(h) for h in HOURS_BY_NAME], f"({g}) % 24")
    suffix = _pick([f"/hour={h}" for h in HOURS_BY_NAME], f"({g}) % 24")
    return day, hour, f"'dt=' || {day} || {suffix}"


def _bulk_big_table(ctx: Context, big: BigTable) -> Counter[str]:
    n = big.count
    part, sd, serde = (ctx.plan.resolve(big.refs[s]) for s in PARTITION_SPACES)
    tbl, cd = ctx.plan.resolve(big.tbl_id), ctx.plan.resolve(big.cd_id)
    fmt = FORMATS[big.spec.fmt]
    ctx.cursor.execute("SET LOCAL DateStyle = 'ISO'")
    _, _, name = _bench_sql("x")
    counts = insert_select(ctx, SerDe, {"id": f"{serde} + x", "slib": literal(fmt.serde_lib)}, n)
    location = f"{literal(uri(big.root) + '/')} || {name}"
    sd_row = sql_row(_sd_row(0, fmt, "", 0, cd, -1), id=f"{sd} + x", location=location, serde=f"{serde} + x")
    counts += insert_select(ctx, StorageDescriptor, sd_row, n)
    part_row = sql_row({"create_time": ctx.now, "last_access_time": 0, "table": tbl, "write_id": 0})
    counts += insert_select(ctx, Partition, part_row | {"id": f"{part} + x", "name": name, "sd": f"{sd} + x"}, n)
    day, hour, _ = _bench_sql("x / 2")
    value = f"CASE x % 2 WHEN 0 THEN {day} ELSE {hour} END"
    key_vals = {"partition": f"{part} + x / 2", "value": value, "position": "x % 2"}
    counts += insert_select(ctx, PartitionKeyValue, key_vals, n * 2)
    counts += _bulk_partition_params(ctx, big, part)
    if big.stats_columns:
        counts += _bulk_partition_stats(ctx, big, part)
    return counts


def _bulk_partition_params(ctx: Context, big: BigTable, part: int) -> Counter[str]:
    """The parameters of each partition, as ``_bench_partition_params``, one row per key in key order."""
    keys = sorted(_bench_partition_params(ctx, 0, big.stats_columns))
    rows = f"(1000 + (x / {len(keys)}) % 5000)"
    values = {
        COLUMN_STATS_ACCURATE: literal(accurate_flags(name for name, _type in big.stats_columns)),
        "numFiles": "'1'",
        "numRows": f"{rows}::text",
        "totalSize": f"({rows} * 64)::text",
        "transient_lastDdlTime": f"'{ctx.now}'",
    }
    which = f"x % {len(keys)}"
    value = "CASE " + which + " " + " ".join(f"WHEN {i} THEN {values[k]}" for i, k in enumerate(keys)) + " END"
    exprs = {"partition": f"{part} + x / {len(keys)}", "key": _pick(keys, which), "value": value}
    return insert_select(ctx, PartitionParam, exprs, big.count * len(keys))


def _bulk_partition_stats(ctx: Context, big: BigTable, part: int) -> Counter[str]:
    width = len(big.stats_columns)
    g, c = (f"x % {big.count}", f"x / {big.count}") if big.column_major else (f"x / {width}", f"x % {width}")
    names, types = zip(*big.stats_columns, strict=True)
    numeric, double, text = (_when_column(types, c, kinds) for kinds in (("int", "bigint"), ("double",), ("string",)))
    exprs = sql_row({"catalog_name": ctx.catalog, "db_name": big.spec.database, "table_name": big.spec.name})
    exprs |= {
        "id": f"{ctx.plan.resolve(big.refs['MPartitionColumnStatistics'])} + x",
        "partition": f"{part} + {g}",
        "partition_name": _bench_sql(g)[2],
        "column_name": _pick(names, c),
        "column_type": _pick(types, c),
        "num_nulls": f"({g}) % 7",
        "num_distincts": f"100 + ({g}) % 900",
        "last_analyzed": str(ctx.now),
        "long_low_value": f"CASE WHEN {numeric} THEN ({g}) % 100 END",
        "long_high_value": f"CASE WHEN {numeric} THEN 100000 + {g} END",
        "double_low_value": f"CASE WHEN {double} THEN 0.0 END",
        "double_high_value": f"CASE WHEN {double} THEN 1000.0 + ({g}) % 1000 END",
        "avg_col_len": f"CASE WHEN {text} THEN 12.5 END",
        "max_col_len": f"CASE WHEN {text} THEN 40 END",
    }
    return insert_select(ctx, PartitionColumnStatistics, exprs, big.stats_count)


def _when_column(types: Seq[str], index: str, kinds: Seq[str]) -> str:
    """SQL condition: the statistics column at ``index`` is of one of ``kinds`` (compares integers, not names)."""
    positions = [str(i) for i, type_name in enumerate(types) if type_name in kinds]
    return f"({index}) IN ({', '.join(positions)})" if positions else "FALSE"

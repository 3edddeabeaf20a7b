"""Scale content: many small unpartitioned tables ``t_<TBL_ID>`` over the scale databases."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE, accurate_flags
from catalog_admin.models import Column, ColumnDescriptor, SerDe, SerDeParam, StorageDescriptor, Table, TableParam
from catalog_admin.seeding.bulk import _pick, insert_params, insert_select, literal, sql_row
from catalog_admin.seeding.content import FORMATS, SCALE_COLUMNS, SCALE_SPACES, SCALE_SPEC, DatabaseSpec
from catalog_admin.seeding.context import SCALE_DATABASES, Context, IdPlan, IdText, LocalId
from catalog_admin.seeding.databases import _sd_row, add_params, ensure_database, plan_columns, uri
from catalog_admin.seeding.demo import table_row

__all__ = ("ScaleTables", "plan_scale_tables")


@dataclass
class ScaleTables:
    """``count`` unpartitioned tables ``t_<TBL_ID>`` over the scale databases, each with SD, SerDe, columns, params."""

    count: int
    databases: list[tuple[Any, str]]
    refs: dict[str, LocalId] = field(default_factory=dict)

    def reserve(self, plan: IdPlan) -> None:
        for space in SCALE_SPACES:
            self.refs[space] = plan.take(space, self.count)

    def plan_rows(self, ctx: Context) -> None:
        fmt = FORMATS[SCALE_SPEC.fmt]
        for i in range(self.count):
            tbl, sd, serde, cd = (self.refs[s] + i for s in SCALE_SPACES)
            db_id, db_name = self.databases[i % len(self.databases)]
            ctx.add(SerDe, id=serde, name=None, slib=fmt.serde_lib)
            add_params(ctx, SerDeParam, "serde", serde, dict(fmt.serde_params))
            plan_columns(ctx, SCALE_COLUMNS, cd)
            location = IdText(uri(ctx.db_root(db_name) / "t_") + "{id}", tbl)
            ctx.add(StorageDescriptor, **_sd_row(sd, fmt, location, serde, cd, -1))
            ctx.add(Table, **table_row(ctx, SCALE_SPEC, tbl, db_id, sd) | {"name": IdText("t_{id}", tbl)})
            add_params(ctx, TableParam, "table", tbl, _empty_table_params(ctx))

    def bulk_insert(self, ctx: Context) -> Counter[str]:
        return _bulk_scale_tables(ctx, self)


def _empty_table_params(ctx: Context) -> dict[str, str]:
    params = {"numFiles": "0", "numRows": "0", "totalSize": "0", "transient_lastDdlTime": str(ctx.now)}
    return params | {COLUMN_STATS_ACCURATE: accurate_flags()}


def plan_scale_tables(ctx: Context, count: int) -> None:
    specs = [DatabaseSpec(name, "Scale-test tables", "bench") for name in SCALE_DATABASES]
    scale = ScaleTables(count, [(ensure_database(ctx, spec), spec.name) for spec in specs])
    scale.reserve(ctx.plan)
    if ctx.connection.vendor == "postgresql":
        ctx.bulk.append(scale.bulk_insert)
    else:
        scale.plan_rows(ctx)


def _bulk_scale_tables(ctx: Context, scale: ScaleTables) -> Counter[str]:
    n = scale.count
    tbl, sd, serde, cd = (ctx.plan.resolve(scale.refs[s]) for s in SCALE_SPACES)
    fmt = FORMATS[SCALE_SPEC.fmt]
    databases = [ctx.plan.resolve(db_id) for db_id, _ in scale.databases]
    roots = [uri(ctx.db_root(name) / "t_") for _, name in scale.databases]
    counts = insert_select(ctx, SerDe, {"id": f"{serde} + x", "slib": literal(fmt.serde_lib)}, n)
    counts += insert_params(ctx, SerDeParam, ("serde", serde), dict(fmt.serde_params), n)
    counts += insert_select(ctx, ColumnDescriptor, {"id": f"{cd} + x"}, n)
    width = len(SCALE_COLUMNS)
    names, types = zip(*SCALE_COLUMNS, strict=True)
    column = {"cd": f"{cd} + x / {width}", "position": f"x % {width}", "comment": "NULL"}
    column |= {"name": _pick(names, f"x % {width}"), "type": _pick(types, f"x % {width}")}
    counts += insert_select(ctx, Column, column, n * width)
    pick = f"x % {len(databases)}"
    location = f"{_pick(roots, pick)} || ({tbl} + x)"
    sd_row = sql_row(_sd_row(0, fmt, "", 0, 0, -1), id=f"{sd} + x", location=location)
    counts += insert_select(ctx, StorageDescriptor, sd_row | {"serde": f"{serde} + x", "cd": f"{cd} + x"}, n)
    table = sql_row(table_row(ctx, SCALE_SPEC, 0, 0, 0), id=f"{tbl} + x", sd=f"{sd} + x")
    table |= {"database": _pick(databases, pick), "name": f"'t_' || ({tbl} + x)"}
    counts += insert_select(ctx, Table, table, n)
    return counts + insert_params(ctx, TableParam, ("table", tbl), _empty_table_params(ctx), n)

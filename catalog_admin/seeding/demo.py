"""The demo tables and their partitions, grants and parameters."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from pathlib import Path
from typing import Any

from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE, accurate_flags
from catalog_admin.models import (
    Partition,
    PartitionColumnStatistics,
    PartitionKey,
    PartitionKeyValue,
    PartitionParam,
    Table,
    TableColumnStatistics,
    TableParam,
    TablePrivilege,
)
from catalog_admin.seeding.content import PARTITION_KEYS, TableSpec
from catalog_admin.seeding.context import Context, LocalId
from catalog_admin.seeding.databases import add_params, existing_tables, grant, plan_columns, plan_sd, uri
from catalog_admin.seeding.files import generate_rows, plan_column_stats, write_files

__all__ = ("plan_demo_table", "plan_partition_keys", "plan_partition_row", "table_params", "table_row")


def plan_demo_table(ctx: Context, spec: TableSpec) -> bool:
    """Plan one demo table with its data files, stats and grants; False when it already exists."""
    db_id = ctx.databases[spec.database]
    if spec.name in existing_tables(ctx, db_id):
        ctx.skipped.append(f"{spec.database}.{spec.name}")
        return False
    root = ctx.warehouse / spec.location if spec.location else ctx.db_root(spec.database) / spec.name
    cd_id = plan_columns(ctx, spec.columns)
    sd_id = plan_sd(ctx, spec, cd_id, None if spec.kind == "VIRTUAL_VIEW" else uri(root))
    tbl_id = ctx.plan.take("MTable")
    ctx.add(Table, **table_row(ctx, spec, tbl_id, db_id, sd_id))
    if spec.partitions:
        plan_partition_keys(ctx, tbl_id)
        totals = _plan_partitions(ctx, spec, tbl_id, cd_id, root)
        add_params(ctx, TableParam, "table", tbl_id, table_params(ctx, spec, totals, column_stats=False))
    elif spec.kind == "VIRTUAL_VIEW":
        add_params(ctx, TableParam, "table", tbl_id, {"transient_lastDdlTime": str(ctx.now)})
    else:
        data = generate_rows(ctx.rng, spec.columns, ctx.rng.randint(8, 20), ("2024-01-03", 12))
        totals = write_files(ctx, spec, root, data, write=True)
        add_params(ctx, TableParam, "table", tbl_id, table_params(ctx, spec, totals))
        plan_column_stats(ctx, TableColumnStatistics, spec, data, table=tbl_id)
    _plan_table_grants(ctx, spec, tbl_id)
    return True


def table_row(ctx: Context, spec: TableSpec, tbl_id: Any, db_id: Any, sd_id: Any) -> dict[str, Any]:
    return {
        "id": tbl_id,
        "create_time": ctx.now,
        "database": db_id,
        "last_access_time": 0,
        "owner": spec.owner,
        "owner_type": "USER",
        "retention": 0,
        "sd": sd_id,
        "name": spec.name,
        "type": spec.kind,
        "view_original_text": spec.view_text[0] or None,
        "view_expanded_text": spec.view_text[1] or None,
        "is_rewrite_enabled": False,
        "write_id": 2 if spec.acid else 0,
    }


def plan_partition_keys(ctx: Context, tbl_id: LocalId) -> None:
    for position, (name, type_name) in enumerate(PARTITION_KEYS):
        ctx.add(PartitionKey, table=tbl_id, name=name, type=type_name, comment=None, position=position)


def table_params(ctx: Context, spec: TableSpec, totals: Seq[int], *, column_stats: bool = True) -> dict[str, str]:
    files, size, rows = totals
    params = {"numFiles": str(files), "totalSize": str(size), "numRows": str(rows)}
    params["transient_lastDdlTime"] = str(ctx.now)
    params[COLUMN_STATS_ACCURATE] = accurate_flags(name for name, _type in (spec.columns if column_stats else ()))
    if spec.kind == "EXTERNAL_TABLE":
        params["EXTERNAL"] = "TRUE"
    if spec.acid:
        params |= {"transactional": "true", "transactional_properties": "default"}
    if ctx.schema.capabilities.writes_bucketing_version:
        params["bucketing_version"] = "2"
    if spec.comment:
        params["comment"] = spec.comment
    return params


def _plan_table_grants(ctx: Context, spec: TableSpec, tbl_id: LocalId) -> None:
    grants = [(spec.owner, "USER", privilege, 1) for privilege in ("SELECT", "INSERT", "UPDATE", "DELETE")]
    if spec.analyst_select:
        grants.append(("analyst", "ROLE", "SELECT", 0))
    for principal, principal_type, privilege, grant_option in grants:
        ctx.add(
            TablePrivilege,
            id=ctx.plan.take("MTablePrivilege"),
            table=tbl_id,
            privilege=privilege,
            **grant(ctx, principal, principal_type, spec.owner, grant_option),
        )


def _plan_partitions(ctx: Context, spec: TableSpec, tbl_id: LocalId, cd_id: LocalId, root: Path) -> list[int]:
    """Plan every partition of ``spec`` (its own SD, sharing the table's columns); the summed basic stats."""
    totals = [0, 0, 0]
    for index, (day, hour) in enumerate(spec.partitions):
        name = f"dt={day}/hour={hour}"
        base = ctx.warehouse / spec.relocated_root if name in spec.relocated else root
        directory = base / f"dt={day}" / f"hour={hour}"
        data = generate_rows(ctx.rng, spec.columns, ctx.rng.randint(5, 15), (day, hour))
        stats = write_files(ctx, spec, directory, data, write=name not in spec.missing)
        part_id = ctx.plan.take("MPartition")
        sd_id = plan_sd(ctx, spec, cd_id, uri(directory))
        plan_partition_row(ctx, part_id, tbl_id, sd_id, (day, hour), write_id=2 if spec.acid else 0)
        params = {"numFiles": str(stats[0]), "totalSize": str(stats[1]), "numRows": str(stats[2])}
        params["transient_lastDdlTime"] = str(ctx.now)
        if index % 4 != 3:  # every fourth partition has stale stats: no COLUMN_STATS_ACCURATE
            params[COLUMN_STATS_ACCURATE] = accurate_flags(name for name, _type in spec.columns)
        add_params(ctx, PartitionParam, "partition", part_id, params)
        plan_column_stats(ctx, PartitionColumnStatistics, spec, data, partition=part_id, partition_name=name)
        totals = [a + b for a, b in zip(totals, stats, strict=True)]
    return totals


def plan_partition_row(
    ctx: Context, part_id: LocalId, tbl_id: LocalId, sd_id: LocalId, values: tuple[str, int], write_id: int = 0
) -> None:
    name = "/".join(f"{key}={value}" for (key, _), value in zip(PARTITION_KEYS, values, strict=True))
    ctx.add(
        Partition,
        id=part_id,
        create_time=ctx.now,
        last_access_time=0,
        name=name,
        sd=sd_id,
        table=tbl_id,
        write_id=write_id,
    )
    for position, value in enumerate(values):
        ctx.add(PartitionKeyValue, partition=part_id, value=str(value), position=position)

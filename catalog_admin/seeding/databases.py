"""The catalog, databases, parameters, columns and storage descriptors every seeded table needs."""

from __future__ import annotations

import itertools
from collections.abc import Sequence as Seq
from pathlib import Path
from typing import Any

from django.db import models

from catalog_admin.metastore_ddl import warehouse_uri
from catalog_admin.models import (
    BucketingColumn,
    Catalog,
    Column,
    ColumnDescriptor,
    Database,
    DatabaseParam,
    DatabasePrivilege,
    SerDe,
    SerDeParam,
    SortColumn,
    StorageDescriptor,
    Table,
)
from catalog_admin.seeding.content import FORMATS, DatabaseSpec, StorageFormat, TableSpec
from catalog_admin.seeding.context import Context, LocalId

__all__ = (
    "add_params",
    "ensure_catalog",
    "ensure_database",
    "existing_tables",
    "free_name",
    "grant",
    "load_databases",
    "plan_columns",
    "plan_sd",
    "uri",
)


def ensure_catalog(ctx: Context) -> None:
    """Hive 3+ creates its default catalog on start-up when the schema script did not: do the same."""
    if not ctx.schema.has_catalogs:
        return
    ctx.cursor.execute(f"SELECT 1 FROM {ctx.table(Catalog)} WHERE {ctx.column(Catalog, 'name')} = %s", [ctx.catalog])
    if ctx.cursor.fetchone() is None:
        ctx.add(
            Catalog,
            id=ctx.plan.take("MCatalog"),
            name=ctx.catalog,
            description="Default catalog for Hive",
            location_uri=warehouse_uri(str(ctx.warehouse)),
            create_time=ctx.now,
        )


def load_databases(ctx: Context) -> None:
    sql = f"SELECT {ctx.column(Database, 'id')}, {ctx.column(Database, 'name')} FROM {ctx.table(Database)}"
    params: list[Any] = []
    if ctx.schema.has_catalogs:
        sql += f" WHERE {ctx.column(Database, 'catalog_name')} = %s"
        params.append(ctx.catalog)
    ctx.cursor.execute(sql, params)
    ctx.databases.update({name: db_id for db_id, name in ctx.cursor.fetchall()})


def ensure_database(ctx: Context, spec: DatabaseSpec) -> Any:
    """The id of database ``spec.name``, planning its rows (with params and grants) when it does not exist."""
    if spec.name in ctx.databases:
        return ctx.databases[spec.name]
    db_id = ctx.databases[spec.name] = ctx.plan.take("MDatabase")
    ctx.add(
        Database,
        id=db_id,
        name=spec.name,
        description=spec.description,
        location_uri=uri(ctx.db_root(spec.name)),
        owner_name=spec.owner,
        owner_type=spec.owner_type,
        catalog_name=ctx.catalog,
        create_time=ctx.now,
    )
    add_params(ctx, DatabaseParam, "database", db_id, dict(spec.params))
    for principal, principal_type, privilege, grant_option in (
        (spec.owner, spec.owner_type, "ALL", 1),
        ("analyst", "ROLE", "SELECT", 0),
    ):
        ctx.add(
            DatabasePrivilege,
            id=ctx.plan.take("MDBPrivilege"),
            database=db_id,
            privilege=privilege,
            **grant(ctx, principal, principal_type, "hive", grant_option),
        )
    return db_id


def grant(ctx: Context, principal: str, principal_type: str, grantor: str, grant_option: int) -> dict[str, Any]:
    return {
        "principal_name": principal,
        "principal_type": principal_type,
        "grantor": grantor,
        "grantor_type": "USER",
        "grant_option": grant_option,
        "create_time": ctx.now,
    }


def existing_tables(ctx: Context, db_id: Any) -> set[str]:
    if isinstance(db_id, LocalId):
        return set()
    ctx.cursor.execute(
        f"SELECT {ctx.column(Table, 'name')} FROM {ctx.table(Table)} WHERE {ctx.column(Table, 'database')} = %s",
        [db_id],
    )
    return {name for (name,) in ctx.cursor.fetchall()}


def uri(path: Path | str) -> str:
    """A local path as Hive stores it (``file:/abs/path``)."""
    return f"file:{path}"


def add_params(ctx: Context, model: type[models.Model], owner: str, owner_id: Any, params: dict[str, str]) -> None:
    for key, value in params.items():
        ctx.add(model, **{owner: owner_id, "key": key, "value": value})


def plan_columns(ctx: Context, columns: Seq[tuple[str, str]], cd_id: LocalId | None = None) -> LocalId:
    cd_id = cd_id or ctx.plan.take("MColumnDescriptor")
    ctx.add(ColumnDescriptor, id=cd_id)
    for position, (name, type_name) in enumerate(columns):
        ctx.add(Column, cd=cd_id, name=name, type=type_name, comment=None, position=position)
    return cd_id


def _sd_row(sd_id: Any, fmt: StorageFormat, location: Any, serde_id: Any, cd_id: Any, buckets: int) -> dict[str, Any]:
    return {
        "id": sd_id,
        "input_format": fmt.input_format,
        "output_format": fmt.output_format,
        "is_compressed": False,
        "location": location,
        "num_buckets": buckets,
        "serde": serde_id,
        "cd": cd_id,
        "is_stored_as_subdirectories": False,
    }


def plan_sd(ctx: Context, spec: TableSpec, cd_id: LocalId, location: str | None) -> LocalId:
    """A storage descriptor with its own SerDe, as Hive writes for every table and partition."""
    fmt = FORMATS[spec.fmt]
    sd_id, serde_id = ctx.plan.take("MStorageDescriptor"), ctx.plan.take("MSerDeInfo")
    ctx.add(SerDe, id=serde_id, name=None, slib=fmt.serde_lib)
    add_params(ctx, SerDeParam, "serde", serde_id, dict(fmt.serde_params))
    ctx.add(StorageDescriptor, **_sd_row(sd_id, fmt, location, serde_id, cd_id, spec.buckets))
    for position, name in enumerate(spec.bucket_columns):
        ctx.add(BucketingColumn, sd=sd_id, name=name, position=position)
    for position, name in enumerate(spec.sort_columns):
        ctx.add(SortColumn, sd=sd_id, name=name, order=1, position=position)
    return sd_id


def free_name(existing: set[str], base: str) -> str:
    """``base``, else the first of ``base_2``, ``base_3`` … that is not taken."""
    return next(
        name for name in itertools.chain([base], (f"{base}_{n}" for n in itertools.count(2))) if name not in existing
    )
